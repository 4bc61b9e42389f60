import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createPopups } from "../../extension/worker/popups.js";
import { BLOCKED_ERROR, createNavBlocker } from "../../extension/worker/nav-block.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { OBSERVE_ELSEWHERE, OBSERVE_TEXT_CHARS, argObserve, withAftermath } from "../../extension/handlers/interact.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const OK = "http://127.0.0.1:8000";
const EVIL = "http://evil.test";
const S1 = { session: "s1", policy: parsePolicy({ origins: [OK] }) };

/**
 * withAftermath around recording stand-ins for page_click, page_snapshot and page_text (the
 * wrapper's own logic: what it checks, when it reads, what it drops), on tab 1 owned by s1.
 * The click answers `landed` as the url it landed on (default: where the tab started).
 * @param {{onRead?: (tab: any) => void, readError?: Error, landed?: string}} [opts]
 */
function harness({ onRead, readError, landed = `${OK}/a` } = {}) {
  const ownership = createOwnership();
  const loads = createLoadWatcher(fakeTimers());
  const tab = { id: 1, url: `${OK}/a`, title: "A", status: "complete" };
  const calls = { click: [], snapshot: [], text: [] };
  ownership.claim("s1", 1);
  const routes = new Map([
    ["page_click", async (args) => {
      calls.click.push(args);
      return { clicked: true, navigated: false, url: landed };
    }],
    ["page_snapshot", async (args) => {
      calls.snapshot.push(args);
      if (readError) throw readError;
      onRead?.(tab);
      return { url: tab.url, title: "A", snapshot: [{ ref: "@e1", role: "button", name: "Go", tag: "button" }], truncated: false };
    }],
    ["page_text", async (args) => {
      calls.text.push(args);
      return { text: "the page", nextOffset: null, totalChars: 8, url: tab.url, title: "A" };
    }],
  ]);
  const deps = {
    browser: { getTab: async () => ({ ...tab }), executeFiles: async () => {}, executeScriptArgs: async () => [] },
    ownership, loads, ensureOrigin: async () => OK, confirm: async () => "deny",
  };
  const wrapped = withAftermath(deps, routes);
  return { tab, calls, loads, call: (args) => schemaChecked((a) => wrapped.get(a))("page_click", args, S1), wrapped, routes };
}

test("without waitFor or observe the action runs as it was, with its own arguments", async () => {
  const h = harness();
  assert.deepEqual(await h.call({ tabId: 1, selector: "#go" }), { clicked: true, navigated: false, url: `${OK}/a` });
  assert.deepEqual(h.calls.click, [{ tabId: 1, selector: "#go" }]);
  assert.equal(h.wrapped.get("page_snapshot"), h.routes.get("page_snapshot"), "a read is not wrapped");
});

test("a bad observe or waitFor is refused before the action acts", async () => {
  const h = harness();
  for (const bad of [
    { observe: {} }, { observe: { snapshot: "all" } }, { observe: { text: "yes" } }, { observe: { text: true, html: true } },
    { observe: "snapshot" }, { waitFor: { selector: "a", text: "b" } }, { waitFor: { ref: "e1" } }, { waitFor: { text: "x", state: "gone" } },
  ]) {
    await assert.rejects(h.call({ tabId: 1, selector: "#go", ...bad }), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
  assert.deepEqual(h.calls.click, []);
});

test("observe reads through page_snapshot and page_text after the action; the action never sees it", async () => {
  const h = harness();
  const r = await h.call({ tabId: 1, selector: "#go", observe: { snapshot: "compact", text: true } });
  assert.deepEqual(h.calls.click, [{ tabId: 1, selector: "#go" }]);
  assert.deepEqual(h.calls.snapshot, [{ tabId: 1, compact: true }]);
  assert.deepEqual(h.calls.text, [{ tabId: 1, maxChars: OBSERVE_TEXT_CHARS }]);
  assert.equal(r.clicked, true);
  assert.equal(r.observation.text.text, "the page");
  assert.equal(r.observation.snapshot.snapshot[0].ref, "@e1");
  const full = await h.call({ tabId: 1, selector: "#go", observe: { snapshot: "full" } });
  assert.deepEqual(h.calls.snapshot.at(-1), { tabId: 1 });
  assert.equal("text" in full.observation, false);
});

test("a tab on an unapproved site (url or pending url) is not read: skipped", async () => {
  for (const moved of [{ url: `${EVIL}/x` }, { pendingUrl: `${EVIL}/x` }, { url: "chrome://newtab/" }]) {
    const h = harness();
    Object.assign(h.tab, moved);
    const r = await h.call({ tabId: 1, selector: "#go", observe: { snapshot: "full", text: true } });
    assert.deepEqual(r.observation, { skipped: OBSERVE_ELSEWHERE }, JSON.stringify(moved));
    assert.deepEqual([h.calls.snapshot, h.calls.text], [[], []], "nothing was read");
  }
});

test("a tab that moved while it was read: what was read is dropped", async () => {
  const h = harness({ onRead: (tab) => { tab.url = `${EVIL}/secret`; } });
  const r = await h.call({ tabId: 1, selector: "#go", observe: { snapshot: "full" } });
  assert.deepEqual(r.observation, { skipped: OBSERVE_ELSEWHERE });
  assert.equal(JSON.stringify(r).includes("evil"), false);
});

test("the read refusing (the page left the origin, or another error) is a skip, not a failed action", async () => {
  const left = harness({ readError: new BridgeError("origin_not_approved", "the page left the approved origin") });
  const r = await left.call({ tabId: 1, selector: "#go", observe: { snapshot: "full" } });
  assert.deepEqual(r.observation, { skipped: OBSERVE_ELSEWHERE });
  const busy = harness({ readError: new BridgeError("timeout", "step snapshot took too long") });
  const b = await busy.call({ tabId: 1, selector: "#go", observe: { snapshot: "full" } });
  assert.equal(b.clicked, true);
  assert.match(b.observation.skipped, /^could not read the page \(timeout\)/);
});

test("a tab still loading is looked at once it has loaded", async () => {
  const h = harness();
  h.tab.status = "loading";
  const p = h.call({ tabId: 1, selector: "#go", observe: { text: true } });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(h.calls.text, [], "not read while loading");
  Object.assign(h.tab, { status: "complete", url: `${EVIL}/landed` });
  h.loads.updated(1, { status: "complete" });
  assert.deepEqual((await p).observation, { skipped: OBSERVE_ELSEWHERE });
  assert.deepEqual(h.calls.text, []);
});

test("the site the action itself landed on and checked counts as approved (granted during this call)", async () => {
  const h = harness({ landed: "https://new.test/p" });
  h.tab.url = "https://new.test/p"; // approved in the confirm window just now: not in ctx.policy yet
  const r = await h.call({ tabId: 1, selector: "#go", observe: { text: true } });
  assert.equal(r.url, "https://new.test/p");
  assert.equal(r.observation.text.text, "the page");
});

test("argObserve", () => {
  assert.deepEqual(argObserve({ snapshot: "compact" }), { snapshot: "compact", text: false });
  assert.deepEqual(argObserve({ text: true, snapshot: null }), { text: true });
  assert.throws(() => argObserve({ text: false }), (e) => e.code === "bad_request");
});

test("a tab the action opened and that joined by its end is reported as newTab; page_click reports its own", async () => {
  const ownership = createOwnership();
  ownership.claim("s1", 1);
  const popups = createPopups({
    ownership, lifecycle: { makeRoom: async () => {}, claimed: async () => {} }, attach: async () => {}, log: { warn: () => {} },
  });
  const tab = { id: 1, url: `${OK}/a`, title: "A", status: "complete" };
  const routes = new Map([
    // A trusted click on a target=_blank link: the new tab joins while the action runs.
    ["page_mouse", async () => {
      await popups.created(1, 7, `${OK}/new`);
      return { clicked: true, navigated: false, url: tab.url };
    }],
    ["page_keys", async () => ({ pressed: 1, keys: ["Enter"], navigated: false, url: tab.url })],
    ["page_click", async () => {
      await popups.created(1, 8, `${OK}/other`);
      return { clicked: true, navigated: false, url: tab.url };
    }],
  ]);
  const deps = {
    browser: { getTab: async () => ({ ...tab }) }, ownership, loads: createLoadWatcher(fakeTimers()), popups,
    ensureOrigin: async () => OK, confirm: async () => "deny",
  };
  const wrapped = withAftermath(deps, routes);
  const mouse = await wrapped.get("page_mouse")({ tabId: 1, selector: "a" }, S1);
  assert.deepEqual(mouse.newTab, { id: 7, url: `${OK}/new` });
  assert.equal(ownership.owner(7), "s1");
  // Nothing opened: no newTab; and a tab opened by a later action is not this one's.
  assert.equal("newTab" in await wrapped.get("page_keys")({ tabId: 1, keys: "Enter" }, S1), false);
  // page_click answers newTab itself (and can wait for one): the wrapper adds nothing.
  assert.equal("newTab" in await wrapped.get("page_click")({ tabId: 1, selector: "a" }, S1), false);
});

test("a stop before the tab left (worker/nav-block.js) is reported once, as blocked, after the tab is back", async () => {
  const ownership = createOwnership();
  ownership.claim("s1", 1);
  const tab = { id: 1, url: `${OK}/a`, title: "A", status: "complete" };
  const moves = [];
  const navBlock = createNavBlocker({
    dnr: { getSessionRules: async () => [], updateSessionRules: async () => {} },
    browser: {
      getTab: async () => ({ ...tab }),
      goBack: async () => { moves.push("back"); tab.url = `${OK}/a`; },
      updateTab: async () => {},
    },
    watchLoad: () => ({ promise: Promise.resolve("complete"), cancel: () => {} }),
  });
  await navBlock.tabs([1]);
  await navBlock.policy([OK]);
  /** The action: its page tries to leave for EVIL (Chrome's error page, then onErrorOccurred). */
  const leaving = (fail) => async () => {
    tab.url = `${EVIL}/collect?t=1`;
    navBlock.failed({ tabId: 1, frameId: 0, error: BLOCKED_ERROR, url: tab.url });
    if (fail) throw new BridgeError("origin_not_approved", "redirected to an unapproved origin");
    return { pressed: true };
  };
  const deps = {
    browser: { getTab: async () => ({ ...tab }), executeFiles: async () => {}, executeScriptArgs: async () => [] },
    ownership, loads: createLoadWatcher(fakeTimers()), ensureOrigin: async () => OK, confirm: async () => "deny", navBlock,
  };
  const cancelled = async () => {
    await leaving(false)();
    throw new BridgeError("navigation_cancelled", "the tab stayed on its page");
  };
  const wrapped = withAftermath(deps, new Map([["page_press", leaving(false)], ["page_navigate", leaving(true)], ["page_reload", cancelled],
    ["page_fill", async () => ({ filled: true })]]));
  assert.deepEqual(await wrapped.get("page_press")({ tabId: 1, key: "Enter" }, S1), { pressed: true, blocked: EVIL });
  assert.equal(tab.url, `${OK}/a`, "the tab is back on its page");
  await assert.rejects(wrapped.get("page_navigate")({ tabId: 1, url: `${OK}/r` }, S1),
    (e) => e.code === "origin_not_approved" && e.message.includes(EVIL) && /stopped before it left/.test(e.message));
  await assert.rejects(wrapped.get("page_reload")({ tabId: 1 }, S1), (e) => e.code === "origin_not_approved" && e.message.includes(EVIL));
  assert.deepEqual(moves, ["back", "back", "back"]);
  // An action during which nothing was stopped reports nothing.
  assert.deepEqual(await wrapped.get("page_fill")({ tabId: 1, selector: "#q", value: "x" }, S1), { filled: true });
});
