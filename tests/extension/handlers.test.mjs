import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { ABORT_SETTLE_MS, createLoadWatcher } from "../../extension/worker/tab-load.js";
import { pageHandlers } from "../../extension/handlers/page.js";
import { tabHandlers } from "../../extension/handlers/tabs.js";
import { fakeTimers, flush, schemaChecked } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const POLICY = { origins: ["http://127.0.0.1:8000"], confirm: ["tab_close"], confirmTimeoutSeconds: 30 };
const S1 = { session: "s1", policy: parsePolicy(POLICY) };
const S2 = { session: "s2", policy: parsePolicy(POLICY) };

/** A fake browser whose tabs finish loading when `finish(tabId)` is called (or at once). */
function harness({ decision = "allow", autoComplete = true, pageHref, documentId, clock, pageText = "Hello\nCard 4111 1111 1111 1111 end" } = {}) {
  const timers = fakeTimers();
  const ownership = createOwnership();
  const loads = createLoadWatcher(timers);
  const tabs = new Map();
  const redirects = new Map();
  /** URLs whose navigation becomes a download: Chrome ends it net::ERR_ABORTED, the tab stays. */
  const downloads = new Set();
  let nextTab = 1;
  let nextWin = 50;
  const calls = { createWindow: [], createTab: [], remove: [], confirm: [], gate: [], update: [], script: [], mute: [] };
  const load = (tab, url) => {
    tab.url = url; tab.status = "loading"; tab.title = "";
    const done = () => { tab.status = "complete"; tab.title = `T ${url}`; loads.updated(tab.id, { status: "complete" }, { ...tab }); };
    if (autoComplete) queueMicrotask(done);
    return done;
  };
  const browser = {
    queryAllTabs: async () => [...tabs.values()].map((t) => ({ ...t })),
    getTab: async (id) => { const t = tabs.get(id); if (!t) throw new Error("No tab with id"); return { ...t }; },
    createWindow: async (opts) => {
      calls.createWindow.push(opts);
      const tab = { id: nextTab++, windowId: nextWin++, active: true };
      tabs.set(tab.id, tab);
      load(tab, opts.url);
      return { id: tab.windowId, tabs: [{ ...tab }] };
    },
    createTab: async (props) => {
      calls.createTab.push(props);
      if (![...tabs.values()].some((t) => t.windowId === props.windowId)) throw new Error("No window");
      const tab = { id: nextTab++, windowId: props.windowId, active: props.active };
      tabs.set(tab.id, tab);
      load(tab, props.url);
      return { ...tab };
    },
    updateTab: async (id, props) => {
      const t = tabs.get(id);
      if (!("url" in props)) {
        calls.mute.push([id, props, t?.url]);
        if (!t) throw new Error("No tab");
        if ("active" in props) t.active = props.active;
        if ("muted" in props) t.mutedInfo = { muted: props.muted };
        return { ...t };
      }
      calls.update.push([id, props]);
      if (!t) throw new Error("No tab");
      if (downloads.has(props.url)) {
        queueMicrotask(() => {
          loads.started({ tabId: id, frameId: 0, url: props.url });
          loads.failed({ tabId: id, frameId: 0, url: props.url, error: "net::ERR_ABORTED" });
          timers.advance(ABORT_SETTLE_MS);
        });
        return { ...t };
      }
      load(t, redirects.get(props.url) ?? props.url);
      return { ...t };
    },
    removeTab: async (id) => { calls.remove.push(id); if (!tabs.delete(id)) throw new Error("No tab"); loads.removed(id); ownership.release(id); },
    executeScript: async (tabId, func) => {
      calls.script.push([tabId, func.name]);
      const href = pageHref ?? tabs.get(tabId).url;
      const doc = documentId === undefined ? {} : { documentId: documentId() };
      if (func.name === "probePage") return [{ result: { href }, ...doc }];
      return [{ result: { text: pageText, href }, ...doc }];
    },
  };
  const ensureOrigin = async (url, ctx, tool) => {
    calls.gate.push([url, ctx.session, tool]);
    const o = url && new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const confirm = async (req) => { calls.confirm.push(req); return decision; };
  const deps = { browser, ownership, loads, ensureOrigin, confirm, now: clock };
  const routes = new Map([...tabHandlers(deps), ...pageHandlers(deps)]);
  const checked = schemaChecked((a) => routes.get(a));
  const call = (action, args, ctx = S1) => checked(action, args, ctx);
  return { call, calls, tabs, redirects, downloads, ownership, timers, loads, routes, deps };
}

test("routes exist", () => {
  assert.deepEqual([...harness().routes.keys()], ["tab_list", "tab_open", "tab_close", "tab_close_all", "page_navigate", "page_text"]);
});

test("tab_open: gate, first tab opens an unfocused normal window, next ones open in it; owned by the session", async () => {
  const h = harness();
  const a = await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  assert.deepEqual(a, { tab: { id: 1, url: "http://127.0.0.1:8000/a", title: "T http://127.0.0.1:8000/a", active: true, windowId: 50 } });
  // Opened empty, then sent to the URL (once the debugger is on it: worker/debugger.js's guard).
  assert.deepEqual(h.calls.createWindow, [{ url: "about:blank", focused: false, type: "normal", width: 1280, height: 800 }]);
  const b = await h.call("tab_open", { url: "http://127.0.0.1:8000/b" });
  assert.equal(b.tab.windowId, 50);
  assert.deepEqual(h.calls.createTab, [{ windowId: 50, url: "about:blank", active: false }]);
  assert.deepEqual(h.calls.update, [[1, { url: "http://127.0.0.1:8000/a" }], [2, { url: "http://127.0.0.1:8000/b" }]]);
  assert.deepEqual(h.ownership.tabsOf("s1").sort(), [1, 2]);
  assert.deepEqual(h.calls.gate[0], ["http://127.0.0.1:8000/a", "s1", "tab_open"]);
});

test("tab_open: each tab is muted while still empty, unless the policy says agentTabsAudible; no window is focused or shown", async () => {
  const h = harness();
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  const b = await h.call("tab_open", { url: "http://127.0.0.1:8000/b" });
  // Made active by tabs.update (switches the tab), never by tabs.create (shows the window).
  assert.deepEqual(h.calls.mute, [[1, { active: true, muted: true }, "about:blank"], [2, { active: true, muted: true }, "about:blank"]]);
  assert.equal(b.tab.active, true);
  assert.deepEqual(h.calls.createWindow.map((o) => o.focused), [false]);
  assert.deepEqual(h.calls.createTab.map((o) => o.active), [false]);
  const audible = { ...S1, policy: parsePolicy({ origins: ["http://127.0.0.1:8000"], agentTabsAudible: true }) };
  await h.call("tab_open", { url: "http://127.0.0.1:8000/c" }, audible);
  assert.deepEqual(h.calls.mute[2], [3, { active: true }, "about:blank"]);
});

test("tab_open: refused origin opens nothing; bad url is bad_request", async () => {
  const h = harness();
  await assert.rejects(h.call("tab_open", { url: "http://evil.test/" }), (e) => e.code === "origin_not_approved");
  await assert.rejects(h.call("tab_open", {}), (e) => e.code === "bad_request");
  assert.equal(h.calls.createWindow.length, 0);
});

test("tab_open waits for status complete (or the 30 s timeout)", async () => {
  const h = harness({ autoComplete: false });
  let done = false;
  const p = h.call("tab_open", { url: "http://127.0.0.1:8000/slow" }).then((r) => { done = true; return r; });
  await flush();
  assert.equal(done, false);
  h.timers.advance(30_000);
  const r = await p;
  assert.equal(r.tab.id, 1);
});

test("tab_open: the empty tab's late \"complete\" is not the page's; the navigation starts inside the tab guard", async () => {
  const h = harness({ autoComplete: false });
  const order = [];
  const routes = new Map(tabHandlers({ ...h.deps, guardTab: async (action, tabId, _ctx, fn) => {
    order.push(["guard", action, tabId, h.calls.update.length]);
    return fn();
  } }));
  let done = false;
  const p = routes.get("tab_open")({ url: "http://127.0.0.1:8000/a" }, S1).then((r) => { done = true; return r; });
  while (h.calls.update.length === 0) await flush();
  assert.deepEqual(order, [["guard", "tab_open", 1, 0]], "the guard (the debugger) runs before the navigation starts");
  h.loads.updated(1, { status: "complete" }, { id: 1, url: "about:blank" });
  await flush();
  assert.equal(done, false);
  h.tabs.get(1).status = "complete";
  h.loads.updated(1, { status: "complete" }, { id: 1, url: "http://127.0.0.1:8000/a" });
  assert.equal((await p).tab.url, "http://127.0.0.1:8000/a");
});

test("tab_open: a closed session window is replaced by a new one", async () => {
  const h = harness();
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  h.tabs.clear(); // the person closed the window
  const r = await h.call("tab_open", { url: "http://127.0.0.1:8000/b" });
  assert.equal(h.calls.createWindow.length, 2);
  assert.equal(r.tab.windowId, 51);
});

test("tab_list shows only the calling session's tabs", async () => {
  const h = harness();
  h.tabs.set(99, { id: 99, url: "https://bank.test/", title: "Bank", active: true, windowId: 1 });
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  await h.call("tab_open", { url: "http://127.0.0.1:8000/b" }, S2);
  assert.deepEqual((await h.call("tab_list", {})).tabs.map((t) => t.id), [1]);
  assert.deepEqual((await h.call("tab_list", {}, S2)).tabs.map((t) => t.id), [2]);
  assert.deepEqual((await h.call("tab_list", {}, { session: "s3", policy: parsePolicy(POLICY) })).tabs, []);
});

test("tab_close: not owned -> tab_not_owned; confirm shows tool and url; deny -> confirm_denied", async () => {
  const h = harness({ decision: "deny" });
  h.tabs.set(99, { id: 99, url: "https://bank.test/", title: "Bank", active: true, windowId: 1 });
  await assert.rejects(h.call("tab_close", { tabId: 99 }), (e) => e.code === "tab_not_owned");
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  await assert.rejects(h.call("tab_close", { tabId: 1 }, S2), (e) => e.code === "tab_not_owned");
  await assert.rejects(h.call("tab_close", { tabId: 1 }), (e) => e.code === "confirm_denied");
  assert.equal(h.calls.confirm[0].kind, "action");
  assert.equal(h.calls.confirm[0].tool, "tab_close");
  assert.equal(h.calls.confirm[0].timeoutMs, 30_000);
  assert.match(h.calls.confirm[0].detail, /http:\/\/127\.0\.0\.1:8000\/a/);
  assert.deepEqual(h.calls.remove, []);
  await assert.rejects(h.call("tab_close", { tabId: "1" }), (e) => e.code === "bad_request");
  const late = harness({ decision: "timeout" });
  await late.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  await assert.rejects(late.call("tab_close", { tabId: 1 }), (e) => e.code === "confirm_timeout");
  assert.deepEqual(late.calls.remove, []);
});

test("tab_close: allow removes and releases; no confirm when policy does not ask", async () => {
  const h = harness();
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  assert.deepEqual(await h.call("tab_close", { tabId: 1 }), { closed: 1 });
  assert.equal(h.ownership.owner(1), null);
  await h.call("tab_open", { url: "http://127.0.0.1:8000/b" });
  await h.call("tab_close", { tabId: 2 }, { session: "s1", policy: parsePolicy({ ...POLICY, confirm: [] }) });
  assert.equal(h.calls.confirm.length, 1);
  assert.deepEqual(h.calls.remove, [1, 2]);
});

test("tab_close_all closes only the session's tabs without confirming", async () => {
  const h = harness();
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  await h.call("tab_open", { url: "http://127.0.0.1:8000/b" });
  await h.call("tab_open", { url: "http://127.0.0.1:8000/c" }, S2);
  assert.deepEqual(await h.call("tab_close_all", {}), { closed: 2 });
  assert.equal(h.calls.confirm.length, 0);
  assert.deepEqual(h.calls.remove.sort(), [1, 2]);
  assert.deepEqual(h.ownership.tabsOf("s2"), [3]);
});

test("page_navigate: owned + gated, returns final url and title; redirect to an unapproved origin fails", async () => {
  const h = harness();
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  assert.deepEqual(await h.call("page_navigate", { tabId: 1, url: "http://127.0.0.1:8000/b" }),
    { url: "http://127.0.0.1:8000/b", title: "T http://127.0.0.1:8000/b" });
  await assert.rejects(h.call("page_navigate", { tabId: 1, url: "http://evil.test/" }), (e) => e.code === "origin_not_approved");
  h.redirects.set("http://127.0.0.1:8000/r", "http://evil.test/x");
  await assert.rejects(h.call("page_navigate", { tabId: 1, url: "http://127.0.0.1:8000/r" }),
    (e) => e.code === "origin_not_approved" && /redirected/.test(e.message));
  await assert.rejects(h.call("page_navigate", { tabId: 1, url: "http://127.0.0.1:8000/" }, S2), (e) => e.code === "tab_not_owned");
});

test("page_navigate: a navigation that never happened is navigation_cancelled, not success", async () => {
  const h = harness();
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  h.redirects.set("http://127.0.0.1:8000/nocontent", "http://127.0.0.1:8000/a"); // a 204: the tab stays
  await assert.rejects(h.call("page_navigate", { tabId: 1, url: "http://127.0.0.1:8000/nocontent" }),
    (e) => e.code === "navigation_cancelled" && /stayed on http:\/\/127\.0\.0\.1:8000\/a/.test(e.message));
  // An address that turns into a download ends without a page: said so, at once (no load wait).
  h.downloads.add("http://127.0.0.1:8000/file.bin");
  await assert.rejects(h.call("page_navigate", { tabId: 1, url: "http://127.0.0.1:8000/file.bin" }),
    (e) => e.code === "navigation_cancelled" && /ended without a page/.test(e.message) && /stayed on http:\/\/127\.0\.0\.1:8000\/a/.test(e.message));
  assert.equal(h.loads.size(), 0);
  // Navigating to the page it is already on is not a cancellation.
  assert.equal((await h.call("page_navigate", { tabId: 1, url: "http://127.0.0.1:8000/a" })).url, "http://127.0.0.1:8000/a");
});

test("page_text: gates the CURRENT url, masks cards, pages with offset/maxChars", async () => {
  const h = harness();
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  const r = await h.call("page_text", { tabId: 1 });
  assert.deepEqual(r, { text: "Hello\nCard [card] end", nextOffset: null, totalChars: 21, url: "http://127.0.0.1:8000/a", title: "T http://127.0.0.1:8000/a" });
  assert.deepEqual(h.calls.script, [[1, "readPageText"]]);
  assert.deepEqual(await h.call("page_text", { tabId: 1, offset: 6, maxChars: 4 }).then(({ text, nextOffset }) => ({ text, nextOffset })), { text: "Card", nextOffset: 10 });
  await assert.rejects(h.call("page_text", { tabId: 1, maxChars: 0 }), (e) => e.code === "bad_request");
  // the page navigated itself to an unapproved origin: page tools stop
  h.tabs.get(1).url = "http://evil.test/";
  await assert.rejects(h.call("page_text", { tabId: 1 }), (e) => e.code === "origin_not_approved");
  assert.equal(h.calls.script.length, 2);
});

test("page_text: a slice is cut from the masked text, so no offset starts past a secret's name", async () => {
  const h = harness({ pageText: "debug: pwd=mauve zebra quartet\nnext line" });
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  const past = "debug: pwd=".length;
  for (const offset of [past, past + 6]) {
    const { text } = await h.call("page_text", { tabId: 1, offset, maxChars: 200 });
    assert.ok(!/zebra|quartet/.test(text), text);
    assert.ok(text.endsWith("\nnext line"), text);
  }
});

test("page_text: one read serves the slices of one document, never another's or another session's", async () => {
  let doc = "doc-1";
  let t = 1_000;
  const h = harness({ documentId: () => doc, clock: () => t });
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  const first = await h.call("page_text", { tabId: 1, maxChars: 6 });
  assert.deepEqual([first.text, first.nextOffset], ["Hello\n", 6]);
  const second = await h.call("page_text", { tabId: 1, offset: 6, maxChars: 10 });
  assert.deepEqual([second.text, second.nextOffset], ["Card [card", 16]);
  assert.deepEqual(h.calls.script.map(([, f]) => f), ["readPageText", "probePage"]); // read once
  // Another document in the tab: read again.
  doc = "doc-2";
  assert.equal((await h.call("page_text", { tabId: 1, offset: 16 })).text, "] end");
  assert.deepEqual(h.calls.script.map(([, f]) => f).slice(2), ["probePage", "readPageText"]);
  // The last slice forgot the read; offset 0 always reads afresh.
  await h.call("page_text", { tabId: 1, offset: 3 });
  await h.call("page_text", { tabId: 1, maxChars: 6 });
  assert.deepEqual(h.calls.script.map(([, f]) => f).slice(4), ["readPageText", "readPageText"]);
  // Too old: read again.
  t += 61_000;
  await h.call("page_text", { tabId: 1, offset: 6, maxChars: 2 });
  assert.deepEqual(h.calls.script.map(([, f]) => f).slice(6), ["readPageText"]);
  // Every slice is still gated: the page left for an unapproved origin.
  h.tabs.get(1).url = "http://evil.test/";
  await assert.rejects(h.call("page_text", { tabId: 1, offset: 8, maxChars: 2 }), (e) => e.code === "origin_not_approved");
});

test("page_text: text read from another origin than the gated one is refused", async () => {
  const h = harness({ pageHref: "http://evil.test/" });
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  await assert.rejects(h.call("page_text", { tabId: 1 }), (e) => e.code === "origin_not_approved");
});

test("a closed tab is tab_not_found and released", async () => {
  const h = harness();
  await h.call("tab_open", { url: "http://127.0.0.1:8000/a" });
  h.tabs.delete(1);
  await assert.rejects(h.call("page_text", { tabId: 1 }), (e) => e.code === "tab_not_found");
  assert.equal(h.ownership.owner(1), null);
});
