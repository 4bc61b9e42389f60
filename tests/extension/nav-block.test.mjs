import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BLOCKED_ERROR, HOLD_MS, MAX_ALLOWED_ORIGINS, OPENED_RULE_ID_BASE, RESEND_WINDOW_MS, RESTORE_FALLBACK_URL, RULE_ID_BASE, allowFilter, backOneEntry,
  createNavBlocker, initiatorHost, navBlockRules, ownRuleId,
} from "../../extension/worker/nav-block.js";

/**
 * Chrome's urlFilter as far as these rules use it: "|" anchors at the start, no wildcards, and
 * case-insensitive matching against the canonical URL (which `new URL` gives here too).
 */
const matches = (filter, url) => {
  assert.ok(filter.startsWith("|") && !/[*^]/.test(filter.slice(1)));
  return new URL(url).href.toLowerCase().startsWith(filter.slice(1).toLowerCase());
};
/** Whether the rules let a top-frame request of `tabId` to `url` through. */
const allowed = (rules, tabId, url) => {
  const hits = rules.filter((r) => r.condition.tabIds.includes(tabId) && (r.condition.urlFilter === undefined || matches(r.condition.urlFilter, url)));
  if (hits.length === 0) return true;
  return hits.sort((a, b) => b.priority - a.priority)[0].action.type === "allow";
};

test("allowFilter: exact origins only; nothing for what is not a bare http(s) origin", () => {
  assert.equal(allowFilter("http://127.0.0.1:8000"), "|http://127.0.0.1:8000/");
  assert.equal(allowFilter("HTTPS://Example.COM:443"), "|https://example.com/");
  assert.equal(allowFilter("http://[::1]:9"), "|http://[::1]:9/");
  for (const bad of ["http://127.0.0.1:8000/", "ftp://x.test", "http://*.test", "javascript:alert(1)", "", null, 3, "http://a.test/path"]) {
    assert.equal(allowFilter(bad), null, String(bad));
  }
});

test("navBlockRules: no tab, no rule; else one block rule and one allow per approved origin, on those tabs only", () => {
  assert.deepEqual(navBlockRules([], ["http://a.test"]), []);
  const rules = navBlockRules([5, 2, 5, -1, 1.5], ["http://b.test", "http://a.test", "http://a.test", "junk"]);
  assert.deepEqual(rules, [
    { id: RULE_ID_BASE, priority: 1, action: { type: "block" }, condition: { tabIds: [2, 5], resourceTypes: ["main_frame"] } },
    { id: RULE_ID_BASE + 1, priority: 2, action: { type: "allow" }, condition: { tabIds: [2, 5], resourceTypes: ["main_frame"], urlFilter: "|http://a.test/" } },
    { id: RULE_ID_BASE + 2, priority: 2, action: { type: "allow" }, condition: { tabIds: [2, 5], resourceTypes: ["main_frame"], urlFilter: "|http://b.test/" } },
  ]);
  assert.ok(rules.every((r) => ownRuleId(r.id)));
  const many = navBlockRules([1], Array.from({ length: MAX_ALLOWED_ORIGINS + 10 }, (_, i) => `http://h${i}.test`));
  assert.equal(many.length, MAX_ALLOWED_ORIGINS + 1);
  assert.ok(many.every((r) => ownRuleId(r.id)));
});

test("the rules stop what an attacker's page would try, and let the approved origin through", () => {
  const rules = navBlockRules([7], ["http://127.0.0.1:800", "https://bank.test"]);
  for (const ok of ["http://127.0.0.1:800/", "http://127.0.0.1:800/a?b#c", "https://bank.test/", "https://BANK.test:443/x"]) {
    assert.ok(allowed(rules, 7, ok), ok);
  }
  for (const evil of ["http://127.0.0.1:8000/", "http://127.0.0.1.evil.test:800/", "http://127.0.0.1/", "https://127.0.0.1:800/",
    "http://localhost:800/", "https://bank.test.evil.test/", "http://bank.test/", "https://evil.test/?u=https://bank.test/",
    "http://127.0.0.1:800@evil.test/", "https://bank.test:8443/"]) {
    assert.ok(!allowed(rules, 7, evil), evil);
  }
  // A tab of the person's is never covered.
  assert.ok(allowed(rules, 8, "http://evil.test/"));
});

/** A blocker over an in-memory rule store, tabs with a history, and a load watch the test settles. */
function harness({ now = () => 0 } = {}) {
  const store = { rules: [{ id: 1, note: "someone else's" }], updates: 0 };
  const moves = [];
  const tabs = new Map();
  const loadsWaiting = [];
  /** New tabs' holds (HOLD_MS), ended by the test. */
  const holds = [];
  const endHolds = () => { for (const h of holds.splice(0)) if (!h.cleared) h.fn(); };
  const blocker = createNavBlocker({
    dnr: {
      getSessionRules: async () => store.rules,
      updateSessionRules: async ({ removeRuleIds, addRules }) => {
        store.updates += 1;
        store.rules = [...store.rules.filter((r) => !removeRuleIds.includes(r.id)), ...addRules];
      },
    },
    browser: {
      getTab: async (id) => { if (!tabs.has(id)) throw new Error("No tab"); return { ...tabs.get(id) }; },
      goBack: async (id) => {
        moves.push(["back", id]);
        const t = tabs.get(id);
        if (!t.previous) throw new Error("Cannot find a next page in history.");
        t.url = t.previous;
        t.errorOccurred = false;
      },
      updateTab: async (id, props) => { moves.push(["update", id, props.url]); tabs.get(id).url = props.url; },
      getFrame: async (id) => ({ errorOccurred: tabs.get(id)?.errorOccurred === true, url: tabs.get(id)?.url }),
    },
    watchLoad: () => {
      let resolve;
      const promise = new Promise((r) => { resolve = r; });
      loadsWaiting.push(resolve);
      queueMicrotask(() => resolve("complete"));
      return { promise, cancel: () => resolve("timeout") };
    },
    // stopped()'s wait for a late onErrorOccurred ends at once here (no event is coming).
    timers: {
      setTimer: (fn, ms) => {
        if (ms !== HOLD_MS) return setTimeout(fn, 0);
        const hold = { fn, cleared: false };
        holds.push(hold);
        return hold;
      },
      clearTimer: (h) => { if (holds.includes(h)) h.cleared = true; else clearTimeout(h); },
    },
    now,
    log: { warn: () => {} },
  });
  /** The tab shows Chrome's error page for `url` (a stop), having been on `previous`. */
  const stop = (id, url, previous) => { tabs.set(id, { id, url, previous, errorOccurred: true }); };
  return { blocker, store, moves, tabs, stop, endHolds };
}

test("createNavBlocker: no rules before a policy is seen; then exactly the owned tabs and approved origins; others' rules untouched", async () => {
  const { blocker, store } = harness();
  await blocker.tabs([3]);
  assert.equal(store.updates, 0, "a restarted worker leaves the persisted rules until it knows the policy");
  await blocker.policy(["http://a.test"]);
  assert.deepEqual(store.rules.map((r) => r.id), [1, RULE_ID_BASE, RULE_ID_BASE + 1]);
  await blocker.policy(["http://a.test"]);
  assert.equal(store.updates, 1, "an unchanged set writes nothing");
  // An origin approved in the confirm window is allowed before the call goes on.
  await blocker.allow("http://b.test");
  assert.deepEqual(store.rules.filter((r) => r.action?.type === "allow").map((r) => r.condition.urlFilter), ["|http://a.test/", "|http://b.test/"]);
  // The next policy lists it (the host recorded the grant); a later narrowing removes it.
  await blocker.policy(["http://a.test", "http://b.test"]);
  await blocker.policy(["http://a.test"]);
  assert.deepEqual(store.rules.filter((r) => r.action?.type === "allow").map((r) => r.condition.urlFilter), ["|http://a.test/"]);
  await blocker.tabs([]);
  assert.deepEqual(store.rules.map((r) => r.id), [1], "no owned tab: none of ours");
});

test("createNavBlocker: a stop on an owned tab is recorded for the watching action and the tab is brought back", async () => {
  const { blocker, moves, tabs, stop } = harness();
  await blocker.tabs([3]);
  await blocker.policy(["http://a.test"]);
  const watch = blocker.watch(3);
  stop(3, "http://evil.test/collect?t=1", "http://a.test/page");
  blocker.failed({ tabId: 3, frameId: 0, error: BLOCKED_ERROR, url: "http://evil.test/collect?t=1" });
  assert.deepEqual(watch.seen(), { origin: "http://evil.test", seq: 1 });
  await blocker.restored(3);
  assert.deepEqual(moves, [["back", 3]]);
  assert.equal(tabs.get(3).url, "http://a.test/page");
  watch.cancel();
  // Not ours: a subframe, another error, an approved origin (another extension's block), a tab nobody owns.
  for (const d of [
    { tabId: 3, frameId: 1, error: BLOCKED_ERROR, url: "http://evil.test/" },
    { tabId: 3, frameId: 0, error: "net::ERR_NAME_NOT_RESOLVED", url: "http://evil.test/" },
    { tabId: 3, frameId: 0, error: BLOCKED_ERROR, url: "http://a.test/ad" },
    { tabId: 9, frameId: 0, error: BLOCKED_ERROR, url: "http://evil.test/" },
    null, "x",
  ]) {
    const w = blocker.watch(d?.tabId ?? 3);
    blocker.failed(d);
    assert.equal(w.seen(), null, JSON.stringify(d));
    w.cancel();
  }
  assert.equal(moves.length, 1, "nothing else was moved");
});

test("createNavBlocker: stopped() knows the error page even before Chrome's event; a tab with nothing to go back to is emptied", async () => {
  const { blocker, moves, tabs, stop } = harness();
  await blocker.tabs([4, 5]);
  await blocker.policy(["http://a.test"]);
  stop(4, "http://evil.test/x", "http://a.test/");
  assert.equal(await blocker.stopped(4, "http://evil.test/x"), true);
  assert.equal(tabs.get(4).url, "http://a.test/");
  // Landed for real (no error page): not a stop — the caller refuses as ever.
  tabs.set(5, { id: 5, url: "http://other.test/", errorOccurred: false });
  assert.equal(await blocker.stopped(5, "http://other.test/"), false);
  assert.equal(await blocker.stopped(5, "http://a.test/"), false, "an approved origin is never a stop");
  // The error page shows before Chrome's event arrives (and the frame does not say so yet).
  tabs.set(5, { id: 5, url: "http://late.test/", previous: "http://a.test/", errorOccurred: false });
  const late = blocker.stopped(5, "http://late.test/");
  blocker.failed({ tabId: 5, frameId: 0, error: BLOCKED_ERROR, url: "http://late.test/" });
  assert.equal(await late, true);
  assert.equal(tabs.get(5).url, "http://a.test/");
  // The first navigation of a tab stopped: nothing to go back to.
  stop(5, "http://evil.test/", undefined);
  blocker.failed({ tabId: 5, frameId: 0, error: BLOCKED_ERROR, url: "http://evil.test/" });
  await blocker.restored(5);
  assert.deepEqual(moves.slice(-2), [["back", 5], ["update", 5, RESTORE_FALLBACK_URL]]);
});

test("createNavBlocker: a rule update Chrome refuses is logged, never thrown; the next change retries", async () => {
  const warned = [];
  let fail = true;
  const store = { rules: [] };
  const blocker = createNavBlocker({
    dnr: {
      getSessionRules: async () => store.rules,
      updateSessionRules: async ({ addRules }) => { if (fail) throw new Error("quota"); store.rules = addRules; },
    },
    browser: { getTab: async () => ({}), goBack: async () => {}, updateTab: async () => {} },
    watchLoad: () => ({ promise: Promise.resolve("complete"), cancel: () => {} }),
    log: { warn: (...a) => warned.push(a.join(" ")) },
  });
  await blocker.tabs([1]);
  await blocker.policy([]);
  assert.equal(warned.length, 1);
  fail = false;
  await blocker.policy([]);
  assert.deepEqual(store.rules.map((r) => r.action.type), ["block"]);
});

test("createNavBlocker: bringing back goes back ONCE, even when a load it sees is still the error page's", async () => {
  const tab = { id: 1, url: "http://evil.test/x" };
  const moves = [];
  let loadsSeen = 0;
  const blocker = createNavBlocker({
    dnr: { getSessionRules: async () => [], updateSessionRules: async () => {} },
    browser: {
      getTab: async () => ({ ...tab }),
      // Chrome answers goBack before the entry commits; the page comes back a little later.
      goBack: async () => { moves.push("back"); setTimeout(() => { tab.url = "http://a.test/"; }, 5); },
      updateTab: async () => { moves.push("update"); },
    },
    // The first "complete" is the error page's own; the next is the page's.
    watchLoad: () => {
      loadsSeen += 1;
      return { promise: new Promise((r) => setTimeout(() => r("complete"), loadsSeen === 1 ? 0 : 10)), cancel: () => {} };
    },
    log: { warn: () => {} },
  });
  await blocker.tabs([1]);
  await blocker.policy(["http://a.test"]);
  blocker.failed({ tabId: 1, frameId: 0, error: BLOCKED_ERROR, url: tab.url });
  await blocker.restored(1);
  assert.deepEqual(moves, ["back"]);
  assert.equal(tab.url, "http://a.test/");
});

test("backOneEntry: exactly the entry before through the debugger; tabs.goBack without one; none before rejects", async () => {
  const sent = [];
  const history = { currentIndex: 2, entries: [{ id: 10, url: "about:blank" }, { id: 11, url: "http://a.test/" }, { id: 12, url: "http://evil.test/" }] };
  const send = async (tabId, method, params) => { sent.push([tabId, method, params]); return method === "Page.getNavigationHistory" ? history : {}; };
  let backs = 0;
  await backOneEntry({ send, goBack: async () => { backs += 1; } }, 4);
  assert.deepEqual(sent, [[4, "Page.getNavigationHistory", undefined], [4, "Page.navigateToHistoryEntry", { entryId: 11 }]]);
  assert.equal(backs, 0);
  await backOneEntry({ send: async () => { throw new Error("Debugger is not attached"); }, goBack: async () => { backs += 1; } }, 4);
  assert.equal(backs, 1);
  // A stopped history move: the error page sits where it went; the page it left is after it.
  sent.length = 0;
  history.currentIndex = 1;
  history.entries = [{ id: 20, url: "http://evil.test/" }, { id: 21, url: "http://evil.test/err" }, { id: 22, url: "http://a.test/" }];
  await backOneEntry({ send, goBack: async () => {} }, 4, (url) => String(url).startsWith("http://a.test"));
  assert.deepEqual(sent.at(-1), [4, "Page.navigateToHistoryEntry", { entryId: 22 }]);
  history.currentIndex = 0;
  history.entries = [{ id: 30, url: "http://evil.test/" }];
  await assert.rejects(backOneEntry({ send, goBack: async () => {} }, 4));
});

/**
 * Chrome's matching of one top-frame request against the rules, with the conditions the two
 * families use: `tabIds`, `excludedTabIds`, `initiatorDomains` (a request with no initiator — the
 * omnibox, a bookmark, the extension — never matches a rule that names initiators) and urlFilter.
 */
const passes = (rules, { tabId, initiator, url }) => {
  const applies = (c) => (c.tabIds === undefined || c.tabIds.includes(tabId))
    && !(c.excludedTabIds ?? []).includes(tabId)
    && (c.initiatorDomains === undefined || (initiator !== undefined && c.initiatorDomains.includes(initiator)))
    && (c.urlFilter === undefined || matches(c.urlFilter, url));
  const hits = rules.filter((r) => applies(r.condition));
  if (hits.length === 0) return true;
  return hits.sort((a, b) => b.priority - a.priority)[0].action.type === "allow";
};

test("initiatorHost: the host Chrome's initiatorDomains takes, nothing it would not match", () => {
  assert.equal(initiatorHost("http://127.0.0.1:8000"), "127.0.0.1");
  assert.equal(initiatorHost("HTTPS://Bank.Test"), "bank.test");
  for (const bad of ["http://[::1]:9", "junk", "", null, "ftp://x.test"]) assert.equal(initiatorHost(bad), null, String(bad));
});

test("navBlockRules: the opened-tab family blocks a popup's first request before its tab has an id, and spares the person's tabs", () => {
  const approved = ["http://127.0.0.1:8000", "https://bank.test"];
  assert.ok(navBlockRules([3], approved).every((r) => r.id < OPENED_RULE_ID_BASE), "no family until the open tabs are known");
  assert.deepEqual(navBlockRules([], approved, { excluded: [1] }), [], "no owned tab: no rule at all");
  assert.ok(navBlockRules([3], ["http://[::1]:9"], { excluded: [] }).every((r) => r.id < OPENED_RULE_ID_BASE), "no host to scope by: none");
  const rules = navBlockRules([3], approved, { excluded: [1, 2, 2] });
  assert.ok(rules.every((r) => ownRuleId(r.id)));
  const family = rules.filter((r) => r.id >= OPENED_RULE_ID_BASE);
  assert.deepEqual(family.map((r) => r.id), [OPENED_RULE_ID_BASE, OPENED_RULE_ID_BASE + 1, OPENED_RULE_ID_BASE + 2]);
  assert.ok(family.every((r) => r.condition.tabIds === undefined && r.condition.excludedTabIds.join() === "1,2"));
  assert.deepEqual(family[0].condition.initiatorDomains, ["127.0.0.1", "bank.test"]);
  const popup = 99; // an id Chrome has not handed out yet
  // The attacker's page on an approved site opens a popup to its own server: stopped before it leaves.
  assert.equal(passes(rules, { tabId: popup, initiator: "127.0.0.1", url: "http://evil.test/collect?t=1" }), false);
  assert.equal(passes(rules, { tabId: popup, initiator: "bank.test", url: "http://127.0.0.1:8001/" }), false, "another port is another origin");
  assert.equal(passes(rules, { tabId: popup, initiator: "127.0.0.1", url: "http://127.0.0.1:8000/child" }), true, "an approved origin opens");
  // The person's own tabs, and requests no approved site's page started, are untouched.
  assert.equal(passes(rules, { tabId: 1, initiator: "bank.test", url: "http://evil.test/" }), true);
  assert.equal(passes(rules, { tabId: popup, initiator: undefined, url: "http://evil.test/" }), true, "typed in the omnibox");
  assert.equal(passes(rules, { tabId: popup, initiator: "news.test", url: "http://evil.test/" }), true);
  // The owned tab itself is still held by its own family.
  assert.equal(passes(rules, { tabId: 3, initiator: undefined, url: "http://evil.test/" }), false);
  assert.deepEqual(navBlockRules([3], approved, { excluded: [] }).find((r) => r.id === OPENED_RULE_ID_BASE).condition.excludedTabIds, undefined);
});

test("createNavBlocker: an agent tab's popup is never excluded; the person's tabs are, from the first moment they are known", async () => {
  const { blocker, store } = harness();
  const family = () => store.rules.find((r) => r.id === OPENED_RULE_ID_BASE);
  await blocker.policy(["http://a.test"]);
  await blocker.created(7, undefined); // before the worker's start listed the tabs
  await blocker.tabs([3]);
  assert.equal(family(), undefined, "the open tabs are not known yet: the person's could be blocked");
  await blocker.everyTab([1, 2, 3]);
  assert.deepEqual(family().condition.excludedTabIds, [1, 2, 7]);
  await blocker.created(8, 3); // opened by the owned tab
  await blocker.created(9, 2); // opened by the person's tab
  await blocker.created(10, undefined); // a new tab of the person's
  assert.deepEqual(family().condition.excludedTabIds, [1, 2, 7, 9, 10]);
  await blocker.tabs([3, 8]); // the popup joined
  assert.deepEqual(family().condition.excludedTabIds, [1, 2, 7, 9, 10]);
  assert.deepEqual(store.rules.find((r) => r.id === RULE_ID_BASE).condition.tabIds, [3, 8]);
  await blocker.tabs([3]); // ... and left (an orphan now): free again like the session's other tabs
  assert.deepEqual(family().condition.excludedTabIds, [1, 2, 7, 8, 9, 10]);
  blocker.removed(9);
  await blocker.tabs([3]);
  assert.deepEqual(family().condition.excludedTabIds, [1, 2, 7, 8, 10]);
  await blocker.tabs([]);
  assert.equal(family(), undefined, "no owned tab: no opened-tab rule either");
});

test("createNavBlocker: a person's new tab our family stopped is sent on, once; an agent's popup never is", async () => {
  let clock = 1000;
  const { blocker, store, moves, tabs } = harness({ now: () => clock });
  await blocker.policy(["http://a.test"]);
  await blocker.everyTab([1, 2, 3]);
  await blocker.tabs([3]);
  const settle = async () => { for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0)); };
  const fail = (tabId, url) => blocker.failed({ tabId, frameId: 0, error: BLOCKED_ERROR, url });
  const excluded = () => store.rules.find((r) => r.id === OPENED_RULE_ID_BASE).condition.excludedTabIds ?? [];

  // The person's tab 2 (on a.test) opened tab 20 to b.test; stopped before 20 was excluded. Sent
  // on only once Chrome has said which tab opened it.
  tabs.set(20, { id: 20, url: "http://b.test/page" });
  fail(20, "http://b.test/page");
  await settle();
  assert.deepEqual(moves, []);
  await blocker.sourced(20, 2);
  await settle();
  assert.deepEqual(moves, [["update", 20, "http://b.test/page"]]);
  assert.ok(excluded().includes(20));
  fail(20, "http://b.test/page"); // blocked again (another extension, say): not sent a second time
  await settle();
  assert.equal(moves.length, 1);
  // The other order: Chrome names the opener first, then the stop.
  await blocker.created(25, 2);
  await blocker.sourced(25, 2);
  tabs.set(25, { id: 25, url: "http://b.test/other" });
  fail(25, "http://b.test/other");
  await settle();
  assert.deepEqual(moves.at(-1), ["update", 25, "http://b.test/other"]);

  // The agent's tab 3 opened tab 21 to b.test: it stays stopped (its session's family takes it when it joins).
  await blocker.created(21, 3);
  await blocker.sourced(21, 3);
  tabs.set(21, { id: 21, url: "http://b.test/collect?t=1" });
  fail(21, "http://b.test/collect?t=1");
  // One whose tabs.onCreated named no opener (noopener): excluded at first, held again once
  // Chrome says the agent's tab opened it, and never sent on.
  await blocker.created(22, undefined);
  assert.ok(excluded().includes(22));
  fail(22, "http://b.test/collect?t=2");
  await blocker.sourced(22, 3);
  assert.ok(!excluded().includes(22));
  // A tab open before the worker started was excluded all along: a stop there is not ours.
  await blocker.sourced(1, 2);
  fail(1, "http://b.test/");
  // Nor is one long after the tab opened, nor one to an approved origin, nor a subframe's.
  await blocker.created(23, undefined);
  await blocker.sourced(23, 2);
  clock += RESEND_WINDOW_MS + 1;
  fail(23, "http://b.test/");
  await blocker.created(24, undefined);
  await blocker.sourced(24, 2);
  fail(24, "http://a.test/x");
  blocker.failed({ tabId: 24, frameId: 5, error: BLOCKED_ERROR, url: "http://b.test/" });
  await settle();
  assert.equal(moves.length, 2, JSON.stringify(moves));
  assert.ok(!excluded().includes(21) && !excluded().includes(22), "an agent's popup is never excluded");
});

test("createNavBlocker: a tab Chrome only says an agent tab opened is held until webNavigation confirms it, else it is the person's", async () => {
  const { blocker, store, moves, tabs, endHolds } = harness({ now: () => 0 });
  const settle = async () => { for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0)); };
  const excluded = () => store.rules.find((r) => r.id === OPENED_RULE_ID_BASE).condition.excludedTabIds ?? [];
  await blocker.policy(["http://a.test"]);
  await blocker.everyTab([1, 3]);
  await blocker.tabs([3]);
  // Tab 30: tabs.onCreated names the active agent tab 3 as its opener, webNavigation never
  // speaks (a tab a DevTools client made); its in-place link click is stopped meanwhile.
  await blocker.created(30, 3);
  assert.ok(!excluded().includes(30), "held: it may be the agent's popup");
  tabs.set(30, { id: 30, url: "http://b.test/in-place" });
  blocker.failed({ tabId: 30, frameId: 0, error: BLOCKED_ERROR, url: "http://b.test/in-place" });
  await settle();
  assert.deepEqual(moves, [], "nothing is sent while the tab may be the agent's");
  // Tab 31: the agent tab's popup; webNavigation confirms before the hold ends.
  await blocker.created(31, 3);
  await blocker.sourced(31, 3);
  tabs.set(31, { id: 31, url: "http://b.test/collect" });
  blocker.failed({ tabId: 31, frameId: 0, error: BLOCKED_ERROR, url: "http://b.test/collect" });
  endHolds();
  await settle();
  assert.ok(excluded().includes(30), "unconfirmed: the person's");
  assert.deepEqual(moves, [["update", 30, "http://b.test/in-place"]]);
  assert.ok(!excluded().includes(31), "confirmed: never excluded, never sent on");
});
