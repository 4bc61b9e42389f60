// Wiring test: load the real background.js against a fake `chrome` global.
import { test } from "node:test";
import assert from "node:assert/strict";

const ports = [];
const listeners = { installed: [], startup: [], message: [], tabUpdated: [], tabRemoved: [], tabActivated: [], tabCreated: [], windowRemoved: [], storageChanged: [], debuggerEvent: [], debuggerDetach: [], alarm: [], createdNavigationTarget: [], navigationError: [], navigationCommitted: [], navigationStarted: [] };
const queries = [];
const warnings = [];

function chromePort(name) {
  const onMessage = [];
  const onDisconnect = [];
  const port = {
    name,
    sent: [],
    disconnected: 0,
    postMessage: (m) => port.sent.push(JSON.parse(JSON.stringify(m))),
    disconnect: () => { port.disconnected += 1; },
    onMessage: { addListener: (f) => onMessage.push(f) },
    onDisconnect: { addListener: (f) => onDisconnect.push(f) },
    deliver: (m) => onMessage.forEach((f) => f(m, port)),
    drop(message) {
      globalThis.chrome.runtime.lastError = { message };
      try { onDisconnect.forEach((f) => f(port)); } finally { globalThis.chrome.runtime.lastError = undefined; }
    },
  };
  return port;
}

globalThis.chrome = {
  runtime: {
    lastError: undefined,
    connectNative: (name) => { const p = chromePort(name); ports.push(p); return p; },
    getManifest: () => ({ version: "0.1.0" }),
    onInstalled: { addListener: (f) => listeners.installed.push(f) },
    onStartup: { addListener: (f) => listeners.startup.push(f) },
    onMessage: { addListener: (f) => listeners.message.push(f) },
    id: "jlmldlloenidkbhnlcdhogbbeefcjhmf",
    getURL: (p) => `chrome-extension://jlmldlloenidkbhnlcdhogbbeefcjhmf/${p}`,
  },
  storage: {
    local: {
      items: {},
      get: async (key) => (key in globalThis.chrome.storage.local.items ? { [key]: globalThis.chrome.storage.local.items[key] } : {}),
      set: async (obj) => { Object.assign(globalThis.chrome.storage.local.items, obj); },
    },
    session: {
      items: {},
      get: async (key) => (key in globalThis.chrome.storage.session.items ? { [key]: globalThis.chrome.storage.session.items[key] } : {}),
      set: async (obj) => { Object.assign(globalThis.chrome.storage.session.items, obj); },
    },
    onChanged: { addListener: (f) => listeners.storageChanged.push(f) },
  },
  windows: {
    onRemoved: { addListener: (f) => listeners.windowRemoved.push(f) },
  },
  webNavigation: {
    onCreatedNavigationTarget: { addListener: (f) => listeners.createdNavigationTarget.push(f) },
    onErrorOccurred: { addListener: (f) => listeners.navigationError.push(f) },
    onCommitted: { addListener: (f) => listeners.navigationCommitted.push(f) },
    onBeforeNavigate: { addListener: (f) => listeners.navigationStarted.push(f) },
  },
  // Session rules (worker/nav-block.js), as Chrome keeps them.
  declarativeNetRequest: {
    rules: [],
    getSessionRules: async () => globalThis.chrome.declarativeNetRequest.rules,
    updateSessionRules: async ({ removeRuleIds, addRules }) => {
      const dnr = globalThis.chrome.declarativeNetRequest;
      dnr.rules = [...dnr.rules.filter((r) => !removeRuleIds.includes(r.id)), ...addRules];
    },
  },
  debugger: {
    onEvent: { addListener: (f) => listeners.debuggerEvent.push(f) },
    onDetach: { addListener: (f) => listeners.debuggerDetach.push(f) },
  },
  // The wake alarm (worker/wake.js): one per name, create replaces, as Chrome keeps them.
  alarms: {
    items: new Map(),
    creates: 0,
    get: async (name) => globalThis.chrome.alarms.items.get(name),
    create: async (name, info) => {
      globalThis.chrome.alarms.creates += 1;
      globalThis.chrome.alarms.items.set(name, { name, ...info });
    },
    onAlarm: { addListener: (f) => listeners.alarm.push(f) },
  },
  management: { getSelf: async () => ({ installType: "development" }) },
  tabs: {
    onUpdated: { addListener: (f) => listeners.tabUpdated.push(f) },
    onCreated: { addListener: (f) => listeners.tabCreated.push(f) },
    onRemoved: { addListener: (f) => listeners.tabRemoved.push(f) },
    onActivated: { addListener: (f) => listeners.tabActivated.push(f) },
    query: async (q) => {
      queries.push(q);
      return [
        { id: 3, url: "https://example.com/", title: "Ex", active: true, windowId: 1, favIconUrl: "x" },
        { id: -1, url: "devtools://devtools", title: "dt", active: false, windowId: 2 },
      ];
    },
  },
};

const realWarn = console.warn;
console.warn = (...a) => warnings.push(a.map(String).join(" "));
const { session, ownership } = await import("../../extension/background.js");

const flush = () => new Promise((r) => setImmediate(r));
const waitFor = async (cond, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
};

test("connects to dev.tabwarden.host at top level and says hello (nothing pinned: no epoch seen)", async () => {
  assert.equal(ports.length, 1);
  assert.equal(ports[0].name, "dev.tabwarden.host");
  await waitFor(() => ports[0].sent.length > 0); // hello waits for the stored records
  // expectedBackMs: one unpacked wake period (5 s) plus slack, for the host's last-seen record.
  assert.deepEqual(ports[0].sent, [{ type: "hello", protocol: 1, extensionVersion: "0.1.0", epochSeen: null, expectedBackMs: 10_000 }]);
  assert.equal(listeners.installed.length, 1);
  assert.equal(listeners.startup.length, 1);
  listeners.startup[0]();
  listeners.installed[0]({ reason: "install" });
  assert.equal(ports.length, 1, "runtime listeners only ensure the connection");
  // The wake alarm: created once at worker start, kept by every later wake source.
  await waitFor(() => globalThis.chrome.alarms.items.size === 1);
  await flush();
  assert.deepEqual([...globalThis.chrome.alarms.items.keys()], ["tabwarden-wake"]);
  assert.equal(globalThis.chrome.alarms.items.get("tabwarden-wake").periodInMinutes, 5 / 60);
  assert.equal(globalThis.chrome.alarms.creates, 1);
  assert.equal(listeners.alarm.length, 1);
  listeners.alarm[0]({ name: "tabwarden-wake" });
  listeners.alarm[0]({ name: "someone-else" });
  assert.equal(ports.length, 1, "an alarm while connected opens no second port");
});

test("serves tab_list through chrome.tabs.query({}), showing only the session's own tabs", async () => {
  ports[0].deliver({ type: "welcome", protocol: 1, hostVersion: "0.1.0", browser: "chrome" });
  await waitFor(() => queries.length === 1); // the ownership restore, reconciled with open tabs
  ports[0].deliver({ type: "request", id: "t1", action: "tab_list", args: {}, session: "s1", policy: {}, epoch: 0 });
  await waitFor(() => ports[0].sent.at(-1)?.id === "t1");
  assert.deepEqual(queries, [{}, {}]);
  // tab 3 exists but this session never opened it
  assert.deepEqual(ports[0].sent.at(-1), { type: "reply", id: "t1", ok: true, result: { tabs: [] } });
  ports[0].deliver({ type: "request", id: "t2", action: "tab_list", args: {}, epoch: 0 });
  await flush();
  assert.equal(ports[0].sent.at(-1).error.code, "bad_request");
  // A host that states no epoch is not served, pinned or not (fail closed).
  const before = queries.length;
  for (const epoch of [undefined, "3", 1.5, -1, null]) {
    ports[0].deliver({ type: "request", id: "t3", action: "tab_list", args: {}, session: "s1", policy: {}, epoch });
    await flush();
    assert.equal(ports[0].sent.at(-1).id, "t3");
    assert.equal(ports[0].sent.at(-1).error.code, "protocol_mismatch", String(epoch));
  }
  assert.equal(queries.length, before, "nothing ran in the browser");
});

test("registers tab, window and message listeners; a web page can never answer a confirmation", () => {
  for (const k of ["message", "tabUpdated", "tabRemoved", "windowRemoved"]) assert.equal(listeners[k].length, 1, k);
  const responses = [];
  const keepOpen = listeners.message[0](
    { type: "confirm_answer", id: "x", decision: "allow" },
    { id: undefined, url: "https://evil.test/", tab: { id: 3 } },
    (r) => responses.push(r),
  );
  assert.equal(keepOpen, false);
  assert.deepEqual(responses, [{ ok: false }]);
  listeners.message[0]({ type: "other" }, { id: chrome.runtime.id }, (r) => responses.push(r));
  assert.equal(responses.length, 1, "messages not for the confirm flow get no response");
  assert.doesNotThrow(() => listeners.tabRemoved[0](3, {}));
  assert.doesNotThrow(() => listeners.windowRemoved[0](9));
  assert.doesNotThrow(() => listeners.tabUpdated[0](3, { status: "complete" }, {}));
});

test("the navigation rules cover exactly the live sessions' tabs and the policy's origins", async () => {
  const dnr = globalThis.chrome.declarativeNetRequest;
  assert.equal(listeners.navigationError.length, 1, "webNavigation.onErrorOccurred is wired");
  assert.equal(listeners.navigationCommitted.length, 1, "webNavigation.onCommitted is wired (form URLs)");
  assert.equal(listeners.navigationStarted.length, 1, "webNavigation.onBeforeNavigate is wired (load waits)");
  ports[0].deliver({ type: "request", id: "nb1", action: "tab_list", args: {}, session: "s1", policy: { origins: ["https://example.com"] }, epoch: 0 });
  await waitFor(() => ports[0].sent.at(-1)?.id === "nb1");
  assert.deepEqual(dnr.rules, [], "no owned tab: no rule at all (the person's tab 3 is untouched)");
  assert.ok(ownership.claim("s1", 3));
  await waitFor(() => dnr.rules.length === 4);
  assert.deepEqual(dnr.rules.map((r) => [r.action.type, r.condition.tabIds, r.condition.urlFilter ?? null]),
    [["block", [3], null], ["allow", [3], "|https://example.com/"], ["block", undefined, null], ["allow", undefined, "|https://example.com/"]]);
  // The opened-tab family: pages on example.com, every tab but the person's.
  const opened = () => dnr.rules.find((r) => r.condition.tabIds === undefined && r.action.type === "block");
  assert.deepEqual(opened().condition.initiatorDomains, ["example.com"]);
  assert.equal(opened().condition.excludedTabIds, undefined);
  assert.equal(listeners.tabCreated.length, 1, "tabs.onCreated is wired");
  listeners.tabCreated[0]({ id: 40, openerTabId: 3 }); // the owned tab's popup: held
  listeners.tabCreated[0]({ id: 41 }); // the person's new tab: excluded
  listeners.createdNavigationTarget[0]({ sourceTabId: 99, tabId: 42, url: "https://elsewhere.test/" }); // the person's tab 99's popup
  listeners.tabCreated[0]({ id: 42, openerTabId: 99 });
  await waitFor(() => opened()?.condition.excludedTabIds?.join() === "41,42");
  // A narrower policy narrows the rules before the request runs.
  ports[0].deliver({ type: "request", id: "nb2", action: "tab_list", args: {}, session: "s1", policy: { origins: [] }, epoch: 0 });
  await waitFor(() => ports[0].sent.at(-1)?.id === "nb2");
  assert.deepEqual(dnr.rules.map((r) => r.action.type), ["block"]);
  ownership.release(3);
  await waitFor(() => dnr.rules.length === 0);
});

test("nothing pinned: the pin gate is unpinned; a web page cannot pair (async refusal)", async () => {
  const { pinGate } = await import("../../extension/background.js");
  await waitFor(() => pinGate.snapshot().loaded);
  assert.equal(pinGate.snapshot().state, "unpinned");
  assert.equal(listeners.storageChanged.length, 1);
  const responses = [];
  const keepOpen = listeners.message[0]({ type: "pair_begin", code: "x" }, { id: undefined, url: "https://evil.test/" }, (r) => responses.push(r));
  assert.equal(keepOpen, true);
  await flush();
  assert.deepEqual(responses, [{ ok: false, code: "bad_request" }]);
  const status = [];
  listeners.message[0]({ type: "options_status" }, { id: chrome.runtime.id, url: chrome.runtime.getURL("options.html") }, (r) => status.push(r));
  await flush();
  assert.equal(status[0].gate, "unpinned");
  assert.equal(status[0].paired, false);
});

test("policy messages: a web page is refused; the options page reaches the host via host_call", async () => {
  const responses = [];
  for (const type of ["policy_get", "kill", "policy_restrict", "presence_begin", "presence_complete"]) {
    assert.equal(listeners.message[0]({ type }, { id: chrome.runtime.id, url: "https://evil.test/" }, (r) => responses.push(r)), true);
  }
  await flush();
  assert.deepEqual(responses, Array(5).fill({ ok: false, code: "bad_request" }));
  const got = [];
  const before = ports[0].sent.length;
  listeners.message[0]({ type: "policy_get" }, { id: chrome.runtime.id, url: chrome.runtime.getURL("options.html") }, (r) => got.push(r));
  await flush();
  const call = ports[0].sent[before];
  assert.equal(call.type, "host_call");
  assert.equal(call.action, "policy_get");
  ports[0].deliver({ type: "host_reply", id: call.id, ok: true, result: { policy: { eval: false }, killed: true, epoch: 1, browsers: [], enrolled: false } });
  await flush();
  assert.deepEqual(got, [{ ok: true, policy: { eval: false }, killed: true, epoch: 1, browsers: [], enrolled: false, windowOnly: false, credentials: [] }]);
});

test("session_end from the host is accepted without a reply", async () => {
  const before = ports[0].sent.length;
  ports[0].deliver({ type: "session_end", session: "s1" });
  await flush();
  assert.equal(ports[0].sent.length, before);
});

test("a dropped port logs runtime.lastError via console.warn and reconnects", async () => {
  ports[0].drop("Native host has exited.");
  assert.ok(warnings.some((w) => w.includes("Native host has exited.")), warnings.join("\n"));
  await waitFor(() => ports.length === 2 && ports[1].sent.length > 0);
  assert.deepEqual(ports[1].sent, [{ type: "hello", protocol: 1, extensionVersion: "0.1.0", epochSeen: null, expectedBackMs: 10_000 }]);
  session.stop();
  console.warn = realWarn;
});
