// Wiring test: load the real background.js against a fake `chrome` global.
import { test } from "node:test";
import assert from "node:assert/strict";

const ports = [];
const listeners = { installed: [], startup: [] };
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
  },
  tabs: {
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
const { session } = await import("../../extension/background.js");

const flush = () => new Promise((r) => setImmediate(r));
const waitFor = async (cond, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
};

test("connects to dev.tabwarden.host at top level and says hello", () => {
  assert.equal(ports.length, 1);
  assert.equal(ports[0].name, "dev.tabwarden.host");
  assert.deepEqual(ports[0].sent, [{ type: "hello", protocol: 1, extensionVersion: "0.1.0" }]);
  assert.equal(listeners.installed.length, 1);
  assert.equal(listeners.startup.length, 1);
  listeners.startup[0]();
  listeners.installed[0]({ reason: "install" });
  assert.equal(ports.length, 1, "runtime listeners only ensure the connection");
});

test("serves tab_list through chrome.tabs.query({})", async () => {
  ports[0].deliver({ type: "welcome", protocol: 1, hostVersion: "0.1.0", browser: "chrome" });
  ports[0].deliver({ type: "request", id: "t1", action: "tab_list", args: {} });
  await flush();
  assert.deepEqual(queries, [{}]);
  assert.deepEqual(ports[0].sent.at(-1), {
    type: "reply", id: "t1", ok: true,
    result: { tabs: [{ id: 3, url: "https://example.com/", title: "Ex", active: true, windowId: 1 }] },
  });
});

test("a dropped port logs runtime.lastError via console.warn and reconnects", async () => {
  ports[0].drop("Native host has exited.");
  assert.ok(warnings.some((w) => w.includes("Native host has exited.")), warnings.join("\n"));
  await waitFor(() => ports.length === 2);
  assert.deepEqual(ports[1].sent, [{ type: "hello", protocol: 1, extensionVersion: "0.1.0" }]);
  session.stop();
  console.warn = realWarn;
});
