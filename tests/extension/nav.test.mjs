import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { checkLanded, followedUrl, historyStep, navHandlers } from "../../extension/handlers/nav.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const OK = "http://127.0.0.1:8000";
const POLICY = { origins: [OK], confirm: [], confirmTimeoutSeconds: 30 };
const S1 = { session: "s1", policy: parsePolicy(POLICY) };

/** Tabs with a history list; navigations complete on the next microtask. */
function harness({ withDebugger = false } = {}) {
  const ownership = createOwnership();
  let loads;
  const stepAt = (d) => step(d, true);
  const tabs = new Map();
  const calls = { gate: [], update: [], focus: [], moves: [], script: [] };
  const load = (t, url) => {
    t.url = url; t.status = "loading";
    queueMicrotask(() => { t.status = "complete"; t.title = `T ${url}`; loads.updated(t.id, { status: "complete" }); });
  };
  const timers = fakeTimers();
  const step = (d, inPage = false) => async (id) => {
    calls.moves.push([id, d]);
    const t = tabs.get(id);
    if (!t) throw new Error("No tab");
    // Chrome's back-button intervention: tabs.goBack skips entries reached without a gesture
    if (d < 0 && !inPage && t.noGesture) throw new Error("Cannot find a next page in history.");
    const next = t.index + d;
    if (next < 0 || next >= t.history.length) throw new Error("Cannot find a next page in history.");
    t.index = next;
    load(t, t.history[next]);
  };
  const browser = {
    getTab: async (id) => { const t = tabs.get(id); if (!t) throw new Error("No tab"); const { history, index, ...rest } = t; return { ...rest }; },
    tabGoBack: step(-1),
    tabGoForward: step(1),
    tabReload: step(0),
    updateTab: async (id, props) => { calls.update.push([id, props]); for (const t of tabs.values()) if (t.windowId === tabs.get(id).windowId) t.active = t.id === id; },
    updateWindowProps: async (id, props) => { calls.focus.push([id, props]); },
    executeScriptArgs: async (id, func, args) => {
      calls.script.push([id, func.name, args]);
      const t = tabs.get(id);
      const next = t.index + args[0];
      if (next < 0 || next >= t.history.length) return [{ result: { moved: t.pageSaysMoved ?? false } }];
      await stepAt(args[0])(id);
      return [{ result: { moved: true } }];
    },
  };
  const ensureOrigin = async (url, ctx, tool) => {
    calls.gate.push([url, tool]);
    const o = url && new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  loads = createLoadWatcher(timers);
  // The debugger on the owned tab (worker/debugger.js send), answering Page.getNavigationHistory.
  const cdp = {
    send: async (ctx, id, method) => {
      calls.cdp = [...(calls.cdp ?? []), method];
      const t = tabs.get(id);
      if (method !== "Page.getNavigationHistory" || !t) throw new Error(`unexpected ${method}`);
      return { currentIndex: t.index, entries: t.history.map((url, i) => ({ id: i, url, title: `T ${url}` })) };
    },
  };
  const routes = new Map(navHandlers({ browser, ownership, loads, ensureOrigin, confirm: async () => "deny", ...(withDebugger ? { cdp } : {}) }));
  /** A tab owned by s1 whose history is `urls`, currently at `index`. */
  const open = (id, urls, index = urls.length - 1, session = "s1") => {
    tabs.set(id, { id, windowId: 7, active: false, status: "complete", history: urls, index, url: urls[index], title: `T ${urls[index]}` });
    if (session) ownership.claim(session, id);
  };
  const checked = schemaChecked((a) => routes.get(a));
  const call = (action, args, ctx = S1) => checked(action, args, ctx);
  return { call, calls, tabs, open, routes, timers };
}

test("routes", () => {
  assert.deepEqual([...harness().routes.keys()], ["page_history", "page_reload", "tab_focus", "page_follow"]);
});

test("page_history (back by default, forward with steps > 0) and page_reload gate the current URL and return where it landed", async () => {
  const h = harness();
  h.open(1, [`${OK}/a`, `${OK}/b`]);
  assert.deepEqual(await h.call("page_history", { tabId: 1 }), { url: `${OK}/a`, title: `T ${OK}/a`, steps: -1 });
  assert.deepEqual(await h.call("page_history", { tabId: 1, steps: 1 }), { url: `${OK}/b`, title: `T ${OK}/b`, steps: 1 });
  assert.deepEqual(await h.call("page_reload", { tabId: 1 }), { url: `${OK}/b`, title: `T ${OK}/b` });
  assert.deepEqual(await h.call("page_reload", { tabId: 1, bypassCache: true }), { url: `${OK}/b`, title: `T ${OK}/b` });
  assert.deepEqual(h.calls.gate.map((g) => g[1]), ["page_history", "page_history", "page_reload", "page_reload"]);
  await assert.rejects(h.call("page_history", { tabId: 1, steps: 1 }), (e) => e.code === "bad_request" && /no next page/.test(e.message));
  for (const steps of [0, 51, -51, 1.5, "-1"]) {
    await assert.rejects(h.call("page_history", { tabId: 1, steps }), (e) => e.code === "bad_request", String(steps));
  }
  await assert.rejects(h.call("page_reload", { tabId: 1, bypassCache: "yes" }), (e) => e.code === "bad_request");
});

test("page_history by several steps jumps once through the page's history; too far is bad_request", async () => {
  const h = harness();
  h.open(1, [`${OK}/a`, `${OK}/b`, `${OK}/c`], 2);
  assert.deepEqual(await h.call("page_history", { tabId: 1, steps: -2 }), { url: `${OK}/a`, title: `T ${OK}/a`, steps: -2 });
  assert.deepEqual(h.calls.script, [[1, "historyStep", [-2]]]);
  assert.deepEqual(h.calls.moves, [[1, -2]]); // one jump: /b was never loaded
  await assert.rejects(h.call("page_history", { tabId: 1, steps: -3 }), (e) => e.code === "bad_request" && /not 3 pages back/.test(e.message));
  // a jump onto an unapproved entry: refused, and the refusal never names its host
  h.open(2, ["https://evil.test/x", `${OK}/a`, `${OK}/b`], 2);
  await assert.rejects(h.call("page_history", { tabId: 2, steps: -2 }),
    (e) => e.code === "origin_not_approved" && !/evil/.test(e.message));
});

test("back/forward re-check the origin they land on", async () => {
  const h = harness();
  h.open(1, ["https://evil.test/x", `${OK}/a`, "https://bank.test/"], 1);
  await assert.rejects(h.call("page_history", { tabId: 1 }), (e) => e.code === "origin_not_approved" && /moved/.test(e.message) && !/evil/.test(e.message));
  h.open(2, ["https://evil.test/x", `${OK}/a`, "https://bank.test/"], 1);
  await assert.rejects(h.call("page_history", { tabId: 2, steps: 1 }), (e) => e.code === "origin_not_approved" && !/bank/.test(e.message));
  // and nothing moves while the current page itself is unapproved
  const before = h.calls.moves.length;
  await assert.rejects(h.call("page_history", { tabId: 2 }), (e) => e.code === "origin_not_approved");
  assert.equal(h.calls.moves.length, before);
});

test("checkLanded: a pending URL or a non-http page counts too; the freshly gated origin is accepted", () => {
  assert.throws(() => checkLanded({ url: `${OK}/a`, pendingUrl: "https://evil.test/" }, OK, S1), (e) => e.code === "origin_not_approved");
  assert.throws(() => checkLanded({ url: "chrome://newtab/" }, OK, S1), (e) => e.code === "origin_not_approved");
  assert.throws(() => checkLanded({}, OK, S1), (e) => e.code === "origin_not_approved");
  assert.doesNotThrow(() => checkLanded({ url: "https://new.test/p" }, "https://new.test", S1));
});

test("not-owned, other session's and closed tabs are refused", async () => {
  const h = harness();
  h.open(1, [`${OK}/a`, `${OK}/b`], 1, null);
  h.open(2, [`${OK}/a`, `${OK}/b`], 1, "s2");
  for (const action of ["page_history", "page_reload", "tab_focus"]) {
    await assert.rejects(h.call(action, { tabId: 1 }), (e) => e.code === "tab_not_owned", action);
    await assert.rejects(h.call(action, { tabId: 2 }), (e) => e.code === "tab_not_owned", action);
    await assert.rejects(h.call(action, { tabId: "2" }), (e) => e.code === "bad_request", action);
  }
  h.open(3, [`${OK}/a`]);
  h.tabs.delete(3);
  await assert.rejects(h.call("page_history", { tabId: 3 }), (e) => e.code === "tab_not_found");
  assert.equal(h.calls.moves.length, 0);
});

test("tab_focus activates the tab and focuses its window; returns {tab}", async () => {
  const h = harness();
  h.open(1, [`${OK}/a`]);
  assert.deepEqual(await h.call("tab_focus", { tabId: 1 }),
    { tab: { id: 1, url: `${OK}/a`, title: `T ${OK}/a`, active: true, windowId: 7 } });
  assert.deepEqual(h.calls.update, [[1, { active: true }]]);
  assert.deepEqual(h.calls.focus, [[7, { focused: true }]]);
});

test("page_history steps through the page's own history (Chrome's goBack would skip gesture-less entries)", async () => {
  const h = harness();
  h.open(1, [`${OK}/a`, `${OK}/b`]);
  h.tabs.get(1).noGesture = true;
  assert.deepEqual(await h.call("page_history", { tabId: 1 }), { url: `${OK}/a`, title: `T ${OK}/a`, steps: -1 });
  assert.deepEqual(h.calls.script, [[1, "historyStep", [-1]]]);
  // the fallback re-checks the landed origin too
  h.open(2, ["https://evil.test/", `${OK}/a`]);
  h.tabs.get(2).noGesture = true;
  await assert.rejects(h.call("page_history", { tabId: 2 }), (e) => e.code === "origin_not_approved");
  // the page says there is nowhere to go: bad_request at once
  h.open(3, [`${OK}/only`]);
  h.tabs.get(3).noGesture = true;
  await assert.rejects(h.call("page_history", { tabId: 3 }), (e) => e.code === "bad_request" && /no previous page/.test(e.message));
  // the page thought it could move, but nothing loaded before the timeout: bad_request
  h.tabs.get(3).pageSaysMoved = true;
  const p = h.call("page_history", { tabId: 3 });
  await new Promise((r) => setImmediate(r));
  h.timers.advance(10_000);
  await assert.rejects(p, (e) => e.code === "bad_request");
});

test("historyStep (page side): sure only when the Navigation API lists the whole history", () => {
  const saved = { history: globalThis.history, navigation: globalThis.navigation };
  const log = [];
  /** A history of `length` entries, `listed` of them this origin's, the current one at `index`. */
  const world = (length, listed, index) => {
    globalThis.history = { length, back: () => log.push("back"), forward: () => log.push("forward"), go: (d) => log.push(`go ${d}`) };
    globalThis.navigation = { entries: () => new Array(listed).fill({}), currentEntry: { index } };
  };
  try {
    world(3, 3, 2); // all this origin's, at the end
    assert.deepEqual(historyStep(-1), { moved: true });
    assert.deepEqual(historyStep(-2), { moved: true });
    assert.deepEqual(historyStep(1), { moved: false });
    assert.deepEqual(historyStep(-3), { moved: false });
    world(3, 2, 1); // another site's entry somewhere: it may be ahead, so try
    assert.deepEqual(historyStep(1), { moved: true });
    world(1, 1, 0);
    assert.deepEqual(historyStep(-1), { moved: false });
    globalThis.navigation = undefined; // no Navigation API: only history.length
    assert.deepEqual(historyStep(-1), { moved: false });
    globalThis.history.length = 2;
    assert.deepEqual(historyStep(-1), { moved: true });
    assert.deepEqual(log, ["back", "go -2", "forward", "back"]);
  } finally {
    Object.assign(globalThis, saved);
  }
});

/** page_follow over a tab at `url` whose page answers describe with `link` (its resolved href). */
function followHarness(url, link) {
  const ownership = createOwnership();
  const loads = createLoadWatcher(fakeTimers());
  const tab = { id: 1, windowId: 7, status: "complete", url, title: "T" };
  const calls = { gate: [], update: [], ops: [] };
  const browser = {
    getTab: async () => ({ ...tab }),
    updateTab: async (id, props) => {
      calls.update.push(props.url);
      tab.url = props.url; tab.status = "loading";
      queueMicrotask(() => { tab.status = "complete"; loads.updated(id, { status: "complete" }); });
    },
    executeFiles: async () => [],
    executeScriptArgs: async (_id, _func, [op, a]) => {
      calls.ops.push([op, a]);
      return [{ result: { kind: link === null ? "plain" : "link", desc: 'link "Next"', tag: "a", href: link } }];
    },
  };
  const ensureOrigin = async (u, ctx, tool) => {
    calls.gate.push([u, tool]);
    const o = new URL(u).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", `${o} is not approved`);
    return o;
  };
  const routes = new Map(navHandlers({ browser, ownership, loads, ensureOrigin, confirm: async () => "deny" }));
  ownership.claim("s1", 1);
  const checked = schemaChecked((a) => routes.get(a));
  return { call: (args, ctx = S1) => checked("page_follow", { tabId: 1, ...args }, ctx), calls, tab };
}

test("page_follow: the page's resolved href is followed (never an address from the call); where it lands is returned", async () => {
  const h = followHarness(`${OK}/a`, `${OK}/b?x=1`);
  // An address in the call is not an argument page_follow takes: refused before anything runs.
  await assert.rejects(h.call({ ref: "@e3", url: "http://evil.test/" }), (e) => e.code === "bad_request" && /unknown field "url"/.test(e.message));
  assert.deepEqual([h.calls.update, h.calls.gate, h.calls.ops], [[], [], []]);
  assert.deepEqual(await h.call({ ref: "@e3" }), { url: `${OK}/b?x=1`, title: "T" });
  assert.deepEqual(h.calls.update, [`${OK}/b?x=1`]);
  assert.deepEqual(h.calls.ops.map(([op, a]) => [op, a.target, a.forFollow]), [["describe", { ref: "@e3" }, true]]);
  // The current page and the target pass the one gate (page_navigate's), in that order.
  assert.deepEqual(h.calls.gate, [[`${OK}/a`, "page_follow"], [`${OK}/b?x=1`, "page_follow"]]);
});

test("page_follow: a link to an unapproved origin is refused by the gate and the tab does not move", async () => {
  const h = followHarness(`${OK}/a`, "http://evil.test:9/collect?t=secret");
  await assert.rejects(h.call({ ref: "@e3" }), (e) => e.code === "origin_not_approved");
  assert.deepEqual(h.calls.update, []);
  assert.equal(h.tab.url, `${OK}/a`);
});

test("page_follow: not a link (no href, javascript:, other schemes) is wrong_element; only a ref is taken", async () => {
  for (const link of [null, "", "javascript:fetch('//evil.test')", "mailto:a@b.test", "data:text/html,x", "file:///etc/passwd"]) {
    const h = followHarness(`${OK}/a`, link);
    await assert.rejects(h.call({ ref: "@e3" }), (e) => e.code === "wrong_element", String(link));
    assert.deepEqual(h.calls.update, [], String(link));
  }
  const h = followHarness(`${OK}/a`, `${OK}/b`);
  for (const args of [{}, { selector: "a" }, { ref: "e3" }, { ref: 3 }, { ref: "" }, { ref: "@e0" }, { ref: ["@e3"] }, { ref: "@e3\n" }]) {
    await assert.rejects(h.call(args), (e) => e.code === "bad_request", JSON.stringify(args));
  }
  assert.deepEqual(h.calls.update, []);
});

test("followedUrl: the canonical http(s) address, or wrong_element naming the element", () => {
  assert.equal(followedUrl("HTTP://Example.test:80/a b", "x"), "http://example.test/a%20b");
  assert.throws(() => followedUrl(null, 'button "Go"'), (e) => e.code === "wrong_element" && /button "Go" is not a link/.test(e.message));
  assert.throws(() => followedUrl("javascript:void 0", "x"), (e) => e.code === "wrong_element" && /javascript:/.test(e.message));
});

test("page_history looks at the entry first: an unapproved one is refused before the tab moves, never named", async () => {
  const h = harness({ withDebugger: true });
  h.open(1, [`${OK}/a`, "http://evil.test:9/collect?token=abc", `${OK}/c`], 0);
  await assert.rejects(h.call("page_history", { tabId: 1, steps: 1 }), (err) => {
    assert.equal(err.code, "origin_not_approved");
    assert.doesNotMatch(err.message, /evil|collect|token/);
    return true;
  });
  assert.deepEqual(h.calls.moves, [], "the tab never moved");
  assert.deepEqual(h.calls.script, []);
  assert.equal(h.tabs.get(1).url, `${OK}/a`);
  // No entry that way: bad_request, still without moving.
  await assert.rejects(h.call("page_history", { tabId: 1, steps: -1 }), { code: "bad_request" });
  assert.deepEqual(h.calls.moves, []);
  // Two steps forward is approved: it moves, and lands there.
  const landed = await h.call("page_history", { tabId: 1, steps: 2 });
  assert.equal(landed.url, `${OK}/c`);
  assert.deepEqual(h.calls.cdp, ["Page.getNavigationHistory", "Page.getNavigationHistory", "Page.getNavigationHistory"]);
});
