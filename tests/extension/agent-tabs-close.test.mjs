import { test } from "node:test";
import assert from "node:assert/strict";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createTabLifecycle } from "../../extension/worker/tab-lifecycle.js";
import { createAgentTabsRelay } from "../../extension/worker/agent-tabs-relay.js";
import { CHANGING } from "../../extension/shared/live-refresh.js";
import { pageRouter } from "./helpers/fakes.mjs";

// The person closes an agent tab from the popup or the options page: a live session's
// tab closes and its session forgets it; a tab no agent opened is never closed this way.
function world() {
  let t = 0;
  const ownership = createOwnership({ now: () => ++t });
  const open = new Map();
  const removed = [];
  const browser = {
    queryAllTabs: async () => [...open.values()],
    removeTab: async (id) => { removed.push(id); open.delete(id); },
    updateTab: async () => {},
  };
  const timers = { setTimer: () => 0, clearTimer: () => {} };
  const released = [];
  const lifecycle = createTabLifecycle({ ownership, browser, timers, onReleased: (id) => released.push(id), log: { warn: () => {} } });
  const openTab = (session, id) => {
    open.set(id, { id, url: `https://site${id}.test/`, title: `Tab ${id}` });
    if (session !== null) ownership.claim(session, id);
  };
  return { ownership, lifecycle, open, removed, released, openTab };
}

const ID = "abc";
const CTX = { extensionId: ID, pageUrls: [`chrome-extension://${ID}/options.html`, `chrome-extension://${ID}/popup.html`] };
const POPUP = { id: ID, url: `chrome-extension://${ID}/popup.html` };

test("closing a live session's tab from the popup closes it and the session forgets it", async () => {
  const w = world();
  w.openTab("s-1-a", 1); w.openTab("s-1-a", 2);
  const relay = createAgentTabsRelay({ lifecycle: w.lifecycle, log: { warn: () => {} } });
  assert.deepEqual(await pageRouter(CTX.extensionId, relay.messages)({ type: "agent_tabs_close", tabId: 1 }, POPUP), { ok: true, closed: 1 });
  assert.deepEqual(w.removed, [1]);
  assert.deepEqual(w.released, [1], "its debugger and grace are let go");
  assert.equal(w.ownership.owner(1), null);
  assert.deepEqual(w.ownership.tabsOf("s-1-a"), [2], "the session forgets the closed tab only");
  const list = await pageRouter(CTX.extensionId, relay.messages)({ type: "agent_tabs_list" }, POPUP);
  assert.deepEqual(list.tabs.map((r) => r.id), [2]);
  assert.ok(CHANGING.has("agent_tabs_close"), "other open pages re-read after it");
});

test("the person's own tab, a gone tab and a web page's request are refused; nothing closes", async () => {
  const w = world();
  w.openTab(null, 5); // the person's own tab: no agent opened it
  w.openTab("s-1-a", 6);
  const relay = createAgentTabsRelay({ lifecycle: w.lifecycle, log: { warn: () => {} } });
  assert.deepEqual(await pageRouter(CTX.extensionId, relay.messages)({ type: "agent_tabs_close", tabId: 5 }, POPUP), { ok: false, code: "tab_not_found" });
  assert.deepEqual(await pageRouter(CTX.extensionId, relay.messages)({ type: "agent_tabs_close", tabId: 99 }, POPUP), { ok: false, code: "tab_not_found" });
  assert.deepEqual(await pageRouter(CTX.extensionId, relay.messages)({ type: "agent_tabs_close", tabId: "6" }, POPUP), { ok: false, code: "bad_request" });
  const page = { id: "evil", url: "https://evil.test/" };
  assert.deepEqual(await pageRouter(CTX.extensionId, relay.messages)({ type: "agent_tabs_close", tabId: 6 }, page), { ok: false, code: "bad_request" });
  assert.deepEqual(w.removed, []);
  assert.equal(w.ownership.owner(6), "s-1-a");
});

test("an orphan closes the same way", async () => {
  const w = world();
  w.openTab("s-1-a", 3);
  await w.lifecycle.sessionEnded("s-1-a", { closeTabs: false });
  assert.equal(await w.lifecycle.closeAgentTab(3), true);
  assert.deepEqual(w.removed, [3]);
  assert.equal(w.ownership.agentTabs().length, 0);
});
