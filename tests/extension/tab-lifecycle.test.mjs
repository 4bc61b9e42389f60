import { test } from "node:test";
import assert from "node:assert/strict";
import { createOwnership } from "../../extension/worker/ownership.js";
import { SETTLE_MS, createTabLifecycle } from "../../extension/worker/tab-lifecycle.js";
import { createAgentTabsRelay } from "../../extension/worker/agent-tabs-relay.js";
import { MAX_SESSIONS, SESSION_CLIENTS_KEY, createSessionClients } from "../../extension/worker/session-clients.js";
import { MIRROR_INTERVAL_MS } from "../../extension/worker/mirror.js";
import { fakeTimers, pageRouter } from "./helpers/fakes.mjs";
import { TERMINAL_SESSION, terminalTabHandlers } from "../../extension/handlers/tabs.js";
import { parsePolicy } from "../../extension/worker/policy.js";

function world() {
  let t = 0;
  const ownership = createOwnership({ now: () => ++t });
  /** @type {Map<number, {id: number, url: string, title: string}>} */
  const open = new Map();
  const removed = [];
  const updates = [];
  const pendingTimers = [];
  const browser = {
    queryAllTabs: async () => [...open.values()],
    removeTab: async (id) => { removed.push(id); open.delete(id); },
    updateTab: async (id, props) => { updates.push([id, props]); },
  };
  const timers = { setTimer: (fn) => { pendingTimers.push(fn); return pendingTimers.length; }, clearTimer: () => {} };
  const lifecycle = createTabLifecycle({ ownership, browser, timers, log: { warn: () => {} } });
  const openTab = (session, id, url = `https://site${id}.test/secret/path?q=1`, title = `Tab ${id}`) => {
    open.set(id, { id, url, title });
    ownership.claim(session, id);
  };
  const settle = () => { while (pendingTimers.length) pendingTimers.shift()(); };
  return { ownership, lifecycle, open, removed, updates, openTab, settle };
}

test("a session's end orphans its tabs (kept, made discardable again) unless the policy closes them", async () => {
  const w = world();
  w.openTab("s-1-a", 1); w.openTab("s-1-a", 2); w.openTab("s-2-b", 3);
  assert.deepEqual(await w.lifecycle.sessionEnded("s-1-a", { closeTabs: false }), [1, 2]);
  assert.deepEqual(w.removed, []);
  assert.deepEqual(w.updates, [[1, { autoDiscardable: true }], [2, { autoDiscardable: true }]]);
  assert.deepEqual(await w.lifecycle.sessionEnded("s-2-b", { closeTabs: true }), [3]);
  assert.deepEqual(w.removed, [3]);
  assert.equal(w.ownership.agentTabs().length, 2);
});

test("the list shows origin and masked title only, orphans marked", async () => {
  const w = world();
  w.openTab("s-1-a", 1, "https://bank.test/account/1234?token=abc", "Card 4111 1111 1111 1111 statement");
  w.openTab("s-2-b", 2);
  await w.lifecycle.sessionEnded("s-2-b", { closeTabs: false });
  w.open.delete(7);
  const rows = await w.lifecycle.list();
  assert.deepEqual(rows.map((r) => [r.id, r.session, r.origin, r.orphaned]), [[1, "s-1-a", "https://bank.test", false], [2, "s-2-b", "https://site2.test", true]]);
  assert.ok(!rows[0].title.includes("4111"), rows[0].title);
  assert.ok(!JSON.stringify(rows).includes("token") && !JSON.stringify(rows).includes("/account"));
});

test("closing orphans never touches a live session's tab", async () => {
  const w = world();
  w.openTab("s-1-a", 1); w.openTab("s-2-b", 2);
  await w.lifecycle.sessionEnded("s-2-b", { closeTabs: false });
  assert.equal(await w.lifecycle.closeOrphan(1), false, "a live tab is not an orphan");
  assert.equal(await w.lifecycle.closeOrphan(99), false);
  assert.deepEqual(w.removed, []);
  assert.equal(await w.lifecycle.closeOrphans(), 1);
  assert.deepEqual(w.removed, [2]);
  assert.equal(w.ownership.owner(1), "s-1-a");
});

test("the cap evicts the oldest orphan the person never looked at, and refuses when none is left", async () => {
  const w = world();
  const policy = parsePolicy({ maxAgentTabs: 3 });
  w.openTab("s-1-a", 1); w.openTab("s-1-a", 2); w.openTab("s-2-b", 3);
  await w.lifecycle.sessionEnded("s-1-a", { closeTabs: false });
  w.settle();
  w.lifecycle.activated(1); // the person looked at orphan 1
  assert.deepEqual(await w.lifecycle.makeRoom(policy), [2]);
  assert.deepEqual(w.removed, [2]);
  await assert.rejects(w.lifecycle.makeRoom(parsePolicy({ maxAgentTabs: 2 })), (err) => err.code === "tab_limit" && /cap is 2/.test(err.message));
  assert.deepEqual(w.removed, [2], "nothing else was closed: a viewed orphan and a live tab remain");
  assert.deepEqual(await w.lifecycle.makeRoom(policy), [], "below the cap: nothing to do");
});

test("activations caused by the agent's own tab operations are not the person looking", async () => {
  const w = world();
  w.openTab("s-1-a", 1);
  const agent = w.lifecycle.agentBrowser({ updateTab: async () => { w.lifecycle.activated(1); }, getTab: async () => ({}) });
  await agent.updateTab(1, { active: true }); // reported while the call runs
  w.lifecycle.activated(1); // reported late: still the agent's
  assert.equal(w.ownership.agentTabs()[0].viewed, false);
  w.settle();
  w.lifecycle.activated(1);
  assert.equal(w.ownership.agentTabs()[0].viewed, true);
  assert.equal(typeof agent.getTab, "function");
  assert.ok(SETTLE_MS > 0);
});

test("the person activating another tab right after an agent operation is the person looking", async () => {
  // The cap's rule needs this: a tab the person looked at is never evicted, however soon after
  // the agent's last action the person looked.
  const w = world();
  w.openTab("s-1-a", 1);
  const agent = w.lifecycle.agentBrowser({
    createTab: async () => { w.lifecycle.activated(2); return { id: 2 }; }, // Chrome reports the new tab first
    updateTab: async () => {},
    removeTab: async () => { w.lifecycle.activated(1); }, // the closed tab's neighbour
  });
  w.ownership.claim("s-1-a", (await agent.createTab({ windowId: 9, active: true })).id);
  await agent.updateTab(2, { url: "https://site2.test/" }); // a navigation activates nothing
  w.lifecycle.activated(2); // the agent's activation of its new tab, reported late
  w.lifecycle.activated(1); // the person, within SETTLE_MS of both calls (no timer has run)
  const viewed = () => Object.fromEntries(w.ownership.agentTabs().map((t) => [t.tabId, t.viewed]));
  assert.deepEqual(viewed(), { 1: true, 2: false });
  await agent.removeTab(3); // its neighbour's activation, reported while the call runs
  w.openTab("s-1-a", 4);
  const closing = agent.removeTab(5);
  w.lifecycle.activated(4); // while a call runs, every activation is the agent's
  await closing;
  assert.deepEqual(viewed(), { 1: true, 2: false, 4: false });
  w.lifecycle.activated(4);
  assert.deepEqual(viewed(), { 1: true, 2: false, 4: true });
});

test("once the agent's next tab is active, the person activating its first tab is the person looking", async () => {
  // tab_open twice, then the person brings the first tab to the front, all within SETTLE_MS:
  // the first tab's activation report came before the second's, so nothing late is pending.
  const w = world();
  let next = 1;
  const agent = w.lifecycle.agentBrowser({
    createTab: async () => { const id = next++; w.lifecycle.activated(id); return { id }; },
  });
  w.ownership.claim("s-1-a", (await agent.createTab({ windowId: 9, active: true })).id);
  w.ownership.claim("s-1-a", (await agent.createTab({ windowId: 9, active: true })).id);
  w.lifecycle.activated(2); // the second tab's activation, reported late: the agent's
  w.lifecycle.activated(1); // the person (no timer has run)
  const viewed = () => Object.fromEntries(w.ownership.agentTabs().map((t) => [t.tabId, t.viewed]));
  assert.deepEqual(viewed(), { 1: true, 2: false });
});

test("the sweep ends exactly the held sessions the host reports gone", async () => {
  const w = world();
  w.openTab("s-1-a", 1); w.openTab("s-2-b", 2);
  const asked = [];
  const gone = await w.lifecycle.sweep(async (action, args) => {
    asked.push([action, args]);
    return { gone: ["s-2-b", "s-9-never-held"], closeTabs: false };
  });
  assert.deepEqual(asked, [["sessions_alive", { sessions: ["s-1-a", "s-2-b"] }]]);
  assert.deepEqual(gone, ["s-2-b"]);
  assert.equal(w.ownership.isOrphan(2), true);
  assert.equal(w.ownership.owner(1), "s-1-a");
  assert.deepEqual(await world().lifecycle.sweep(async () => { throw new Error("not asked"); }), []);
});

test("maxAgentTabs: a valid policy value, else the default", () => {
  assert.equal(parsePolicy({ maxAgentTabs: 5 }).maxAgentTabs, 5);
  for (const bad of [undefined, null, {}, { maxAgentTabs: 0 }, { maxAgentTabs: 201 }, { maxAgentTabs: "5" }, { maxAgentTabs: 2.5 }]) {
    assert.equal(parsePolicy(bad).maxAgentTabs, 20);
  }
});

test("the terminal's actions answer only the terminal session", async () => {
  const w = world();
  w.openTab("s-1-a", 1);
  const handlers = new Map(terminalTabHandlers({ lifecycle: w.lifecycle }));
  for (const action of ["agent_tabs", "agent_tabs_close"]) {
    await assert.rejects(handlers.get(action)({}, { session: "s-1-a", policy: parsePolicy({}) }), (err) => err.code === "unknown_action");
  }
  const { tabs } = await handlers.get("agent_tabs")({}, { session: TERMINAL_SESSION, policy: parsePolicy({}) });
  assert.deepEqual(tabs.map((t) => t.id), [1]);
  assert.deepEqual(await handlers.get("agent_tabs_close")({}, { session: TERMINAL_SESSION, policy: parsePolicy({}) }), { closed: 0 });
  assert.deepEqual(w.removed, []);
});

test("the relay answers only the popup and the options page", async () => {
  const w = world();
  w.openTab("s-1-a", 1);
  await w.lifecycle.sessionEnded("s-1-a", { closeTabs: false });
  const relay = createAgentTabsRelay({ lifecycle: w.lifecycle, log: { warn: () => {} } });
  const id = "abc";
  const ctx = { extensionId: id, pageUrls: [`chrome-extension://${id}/options.html`, `chrome-extension://${id}/popup.html`] };
  assert.equal(pageRouter(ctx.extensionId, relay.messages)({ type: "other" }, { id }), undefined);
  const page = { id: "evil", url: "https://evil.test/" };
  assert.deepEqual(await pageRouter(ctx.extensionId, relay.messages)({ type: "agent_tabs_close_orphans" }, page), { ok: false, code: "bad_request" });
  assert.deepEqual(w.removed, []);
  const popup = { id, url: `chrome-extension://${id}/popup.html` };
  const list = await pageRouter(ctx.extensionId, relay.messages)({ type: "agent_tabs_list" }, popup);
  assert.equal(list.ok, true);
  assert.deepEqual(list.tabs.map((t) => [t.id, t.orphaned]), [[1, true]]);
  assert.deepEqual(await pageRouter(ctx.extensionId, relay.messages)({ type: "agent_tabs_close_orphan", tabId: "1" }, popup), { ok: false, code: "bad_request" });
  assert.deepEqual(await pageRouter(ctx.extensionId, relay.messages)({ type: "agent_tabs_close_orphan", tabId: 1 }, popup), { ok: true, closed: 1 });
  assert.deepEqual(w.removed, [1]);
});

test("the relay names each row's client and last call from what the session's requests said", async () => {
  const w = world();
  w.openTab("s-1-a", 1);
  w.openTab("s-2-b", 2);
  const items = {};
  const sessionClients = createSessionClients({
    storageGet: async (k) => structuredClone(items[k]), storageSet: async (k, v) => { items[k] = structuredClone(v); }, now: () => 5_000,
  });
  await sessionClients.seen("s-1-a", "claude-code");
  const relay = createAgentTabsRelay({ lifecycle: w.lifecycle, sessionClients, log: { warn: () => {} } });
  const id = "abc";
  const popup = { id, url: `chrome-extension://${id}/popup.html` };
  const list = await pageRouter(id, relay.messages)({ type: "agent_tabs_list" }, popup);
  assert.deepEqual(list.tabs.map((t) => [t.id, t.client, t.lastCallAt]), [[1, "claude-code", 5_000], [2, null, null]]);
  // Bounded: the least recently seen sessions go first.
  let t = 0;
  const many = createSessionClients({ storageGet: async (k) => items[k], storageSet: async (k, v) => { items[k] = v; }, now: () => t++ });
  for (let i = 0; i < MAX_SESSIONS + 5; i += 1) many.seen(`s-${i}-x`, "c");
  const snap = await many.snapshot();
  assert.equal(snap.size, MAX_SESSIONS);
  assert.equal(snap.has("s-0-x"), false);
  assert.equal(snap.has(`s-${MAX_SESSIONS + 4}-x`), true);
});

test("session clients: storage is read once per worker start; the calls of one interval are one write; a restarted worker keeps what was stored", async () => {
  const items = {};
  const timers = fakeTimers();
  let reads = 0;
  let writes = 0;
  let t = 0;
  const deps = {
    storageGet: async (k) => { reads += 1; return structuredClone(items[k]); },
    storageSet: async (k, v) => { writes += 1; items[k] = structuredClone(v); },
    now: () => t++,
    setTimer: timers.setTimer,
  };
  const clients = createSessionClients(deps);
  await clients.seen("s-1-a", "claude-code");
  await clients.seen("s-2-b", "codex");
  await clients.seen("s-1-a", "claude-code");
  assert.equal(reads, 1);
  assert.equal(writes, 0, "no call waits on a storage write");
  timers.advance(MIRROR_INTERVAL_MS);
  await clients.stored();
  assert.equal(writes, 1);
  assert.deepEqual(Object.keys(items[SESSION_CLIENTS_KEY]), ["s-2-b", "s-1-a"]); // least recently seen first
  const restarted = createSessionClients(deps);
  await restarted.seen("s-3-c", null);
  const snap = await restarted.snapshot();
  assert.deepEqual([...snap.keys()], ["s-2-b", "s-1-a", "s-3-c"]);
  assert.deepEqual(snap.get("s-1-a"), { client: "claude-code", lastAt: 2 });
  assert.equal(reads, 2);
});
