import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { callText, indicatorOf, runPopupPage, stateText } from "../../extension/ui/popup-page.js";
import { createPopupRelay } from "../../extension/worker/popup-relay.js";
import { RECENT_MAX, RECENT_STORAGE_KEY, createRecentCalls, recentEntry } from "../../extension/worker/recent-calls.js";
import { MIRROR_INTERVAL_MS } from "../../extension/worker/mirror.js";
import { createSession } from "../../extension/worker/session.js";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { fakeLog, fakePort, fakeTimers, flush, pageRouter } from "./helpers/fakes.mjs";

const EXT = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const POPUP = `chrome-extension://${EXT}/popup.html`;
const CTX = { extensionId: EXT, pageUrl: POPUP };

function fakeDoc(ids) {
  const make = (tag, id = null) => {
    const listeners = [];
    const classes = new Set();
    const el = {
      tagName: tag.toUpperCase(), id, children: [], _text: "", className: "", disabled: false, hidden: false, attrs: {},
      setAttribute(k, v) { this.attrs[k] = String(v); },
      classList: { toggle: (c, on) => (on ? classes.add(c) : classes.delete(c)), contains: (c) => classes.has(c) },
      get textContent() { return this._text + this.children.map((c) => c.textContent).join(""); },
      set textContent(v) { this.children = []; this._text = String(v); },
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
      replaceChildren(...nodes) { this.children = [...nodes]; this._text = ""; },
      addEventListener: (type, fn) => { if (type === "click") listeners.push(fn); },
      click() { let prevented = false; if (!el.disabled) for (const fn of listeners) fn({ preventDefault: () => { prevented = true; } }); return prevented; },
    };
    return el;
  };
  const els = new Map(ids.map((id) => [id, make("div", id)]));
  return { getElementById: (id) => els.get(id) ?? null, createElement: (tag) => make(tag), el: (id) => els.get(id) };
}

function memoryStorage() {
  const items = {};
  return { items, get: async (k) => structuredClone(items[k]), set: async (k, v) => { items[k] = structuredClone(v); } };
}

test("recent calls: {action, ok, code?, at} only — never args, results or messages; a ring of 20", async () => {
  const store = memoryStorage();
  let t = 1000;
  const timers = fakeTimers();
  const recent = createRecentCalls({ storageGet: store.get, storageSet: store.set, now: () => t++, setTimer: timers.setTimer });
  await recent.record("page_eval", { type: "reply", id: "r1", ok: true, result: { result: "s3cret-result" } });
  await recent.record("cookie_get", { type: "reply", id: "r2", ok: false, error: { code: "origin_not_approved", message: "s3cret-message" } });
  assert.deepEqual(await recent.list(), [
    { action: "page_eval", ok: true, at: 1000 },
    { action: "cookie_get", ok: false, code: "origin_not_approved", at: 1001 },
  ]);
  timers.advance(MIRROR_INTERVAL_MS);
  await recent.stored();
  assert.equal(store.items[RECENT_STORAGE_KEY].length, 2);
  assert.ok(!JSON.stringify(store.items).includes("s3cret"));
  for (let i = 0; i < 30; i += 1) recent.record(`a${i}`, { ok: true });
  const list = await recent.list();
  timers.advance(MIRROR_INTERVAL_MS);
  await recent.stored();
  assert.equal(list.length, RECENT_MAX);
  assert.equal(list[0].action, "a10");
  assert.equal(list[19].action, "a29");
  assert.equal(store.items[RECENT_STORAGE_KEY].length, 20);
  // A restarted worker appends to what chrome.storage.session kept.
  const again = createRecentCalls({ storageGet: store.get, storageSet: store.set, now: () => 5 });
  await again.record("tab_list", null);
  assert.deepEqual((await again.list()).at(-1), { action: "tab_list", ok: false, code: "internal_error", at: 5 });
  assert.deepEqual(recentEntry("x".repeat(500), { ok: true }, 1).action.length, 64);
  // storage failing never throws out of record()
  const broken = createRecentCalls({ storageGet: async () => { throw new Error("no"); }, storageSet: async () => { throw new Error("no"); }, now: () => 1, log: fakeLog() });
  await broken.record("x", { ok: true });
});

test("the session reports every answered request (action + reply) to onAnswered, args never", async () => {
  const timers = fakeTimers();
  const port = fakePort();
  const answered = [];
  const dispatcher = createDispatcher([["tab_open", async () => ({ tabId: 1 })]]);
  const session = createSession({
    connect: () => port, dispatcher, backoff: { next: () => 1, afterConnection: () => 1 }, timers, now: () => 0,
    extensionVersion: "0.1.0", log: fakeLog(), onAnswered: (action, reply) => answered.push([action, reply.ok, reply.error?.code]),
  });
  session.start();
  port.deliver({ type: "request", id: "r0", action: "tab_open", args: { url: "http://secret.test/" }, session: "s", policy: {} });
  await flush();
  port.deliver({ type: "welcome", protocol: 1, hostVersion: "x", browser: "chromium" });
  port.deliver({ type: "request", id: "r1", action: "tab_open", args: { url: "http://secret.test/" }, session: "s", policy: {} });
  port.deliver({ type: "request", id: "r2", action: "nope", args: {}, session: "s", policy: {} });
  await flush();
  await flush();
  // Concurrent requests may be answered in either order.
  assert.deepEqual(answered[0], ["tab_open", false, "protocol_mismatch"]);
  assert.deepEqual(answered.slice(1).sort(), [["nope", false, "unknown_action"], ["tab_open", true, undefined]]);
});

test("popup relay: status (phase, gate, killed, recent) and kill, only for the popup page", async () => {
  const calls = [];
  let killed = false;
  const relay = createPopupRelay({
    hostCall: async (a) => { calls.push(a); if (a === "kill") { killed = true; return { killed: true }; } return { killed, policy: {} }; },
    sessionSnapshot: () => ({ phase: "ready", browser: "chromium" }),
    gateSnapshot: () => ({ state: "trusted" }),
    recent: async () => [{ action: "tab_list", ok: true, at: 1 }],
  });
  const from = { id: EXT, url: POPUP };
  assert.equal(pageRouter(CTX.extensionId, relay.messages)({ type: "policy_get" }, from), undefined);
  assert.deepEqual(await pageRouter(CTX.extensionId, relay.messages)({ type: "popup_status" }, from),
    { ok: true, phase: "ready", browser: "chromium", gate: "trusted", killed: false, rolledBack: null, hostProblem: null, recent: [{ action: "tab_list", ok: true, at: 1 }],
      connectedSince: null, lastDisconnectAt: null, lastDisconnectReason: null, reconnectInMs: null, workerStartedAt: null });
  for (const sender of [{ id: "evil", url: POPUP }, { id: EXT, url: `chrome-extension://${EXT}/confirm.html` }, undefined]) {
    assert.deepEqual(await pageRouter(CTX.extensionId, relay.messages)({ type: "popup_kill" }, sender), { ok: false, code: "bad_request" });
  }
  assert.deepEqual(await pageRouter(CTX.extensionId, relay.messages)({ type: "popup_kill" }, from), { ok: true });
  assert.deepEqual(calls, ["policy_get", "kill"]);
  const down = createPopupRelay({
    hostCall: async () => { throw new BridgeError("extension_not_connected", "down"); },
    sessionSnapshot: () => ({ phase: "reconnect_wait" }), gateSnapshot: () => ({ state: "unpinned" }), recent: async () => [],
  });
  assert.equal((await pageRouter(CTX.extensionId, down.messages)({ type: "popup_status" }, from)).killed, null);
  assert.deepEqual(await pageRouter(CTX.extensionId, down.messages)({ type: "popup_kill" }, from), { ok: false, code: "extension_not_connected" });
});

test("popup page: #state at a glance, #recent newest first with ok/error, #kill engages the kill switch", async () => {
  const doc = fakeDoc(["state", "kill", "recent", "popup-status"]);
  const sent = [];
  let killed = false;
  const recent = Array.from({ length: 25 }, (_, i) => ({ action: `a${i}`, ok: i % 2 === 0, ...(i % 2 ? { code: "confirm_denied" } : {}), at: i }));
  recent.push({ action: "<b>x</b>", ok: false, code: "policy_denied", at: 99 });
  const api = {
    sendMessage: async (m) => {
      sent.push(m.type);
      if (m.type === "popup_kill") { killed = true; return { ok: true }; }
      return { ok: true, phase: "ready", gate: "trusted", killed, recent };
    },
  };
  const page = await runPopupPage({ doc, api });
  assert.equal(doc.el("state").textContent, "connected · host key proven · kill switch off");
  const items = doc.el("recent").children;
  assert.equal(items.length, 20);
  assert.match(items[0].textContent, /<b>x<\/b> — error: policy_denied$/);
  assert.match(items[1].textContent, /a24 — ok$/);
  assert.match(items[2].textContent, /a23 — error: confirm_denied$/);
  doc.el("kill").click();
  for (let i = 0; i < 5; i += 1) await flush();
  assert.deepEqual(sent, ["popup_status", "popup_kill", "popup_status"]);
  assert.match(doc.el("state").textContent, /KILL SWITCH ENGAGED/);
  assert.equal(doc.el("state").classList.contains("alarm"), true);
  assert.equal(doc.el("popup-status").textContent, "done: kill");
  assert.equal(typeof page.refresh, "function");
  assert.match(stateText({ ok: true, phase: "reconnect_wait", gate: "compromised", killed: null }), /disconnected.*NOT proven.*unknown/);
  assert.match(stateText(null), /unavailable/);
  // How the connection was last seen: since when, or the next try and why it dropped.
  assert.match(stateText({ ok: true, phase: "ready", connectedSince: 0, gate: "trusted", killed: false }), /^connected \(since [^)]+\) · /);
  const away = stateText({ ok: true, phase: "reconnect_wait", reconnectInMs: 4_200, lastDisconnectAt: 0,
    lastDisconnectReason: "Native host has exited.", gate: "trusted", killed: null });
  assert.match(away, /disconnected \(reconnecting\) \(next try in 5 s; last disconnect [^:]+:\d\d:\d\d[^:]*: Native host has exited\.\)/);
  // A worker the wake alarm restarted has no disconnect of its own: its start time says so.
  assert.match(stateText({ ok: true, phase: "awaiting_welcome", workerStartedAt: 0, gate: "trusted", killed: null }), /^connecting \(worker started [^)]+\) · /);
});

test("popup: a coloured indicator word per state; engaged means no Engage offer but how to release", async () => {
  const ids = ["state", "state-word", "indicator", "kill", "kill-engaged", "recent", "popup-status", "open-options", "release-options"];
  const doc = fakeDoc(ids);
  let status = { ok: true, phase: "ready", gate: "trusted", killed: false, recent: [] };
  const opened = [];
  const api = {
    sendMessage: async (m) => (m.type === "popup_kill" ? (status = { ...status, killed: true }, { ok: true }) : status),
    openOptionsPage: async () => { opened.push(1); },
  };
  await runPopupPage({ doc, api });
  assert.equal(doc.el("indicator").attrs["data-state"], "connected");
  assert.equal(doc.el("state-word").textContent, "Connected");
  assert.equal(doc.el("kill").hidden, false);
  assert.equal(doc.el("kill-engaged").hidden, true);
  doc.el("kill").click();
  for (let i = 0; i < 5; i += 1) await flush();
  assert.equal(doc.el("indicator").attrs["data-state"], "killed");
  assert.equal(doc.el("state-word").textContent, "Kill switch engaged");
  assert.equal(doc.el("kill").hidden, true, "no Engage offer while engaged");
  assert.equal(doc.el("kill-engaged").hidden, false);
  // The options link opens the options page through Chrome (it focuses an open one).
  assert.equal(doc.el("open-options").click(), true);
  assert.equal(doc.el("release-options").click(), true);
  assert.equal(opened.length, 2);
  // Most alarming first.
  const base = { ok: true, phase: "ready", gate: "trusted", killed: false };
  assert.equal(indicatorOf({ ...base, rolledBack: { epoch: 1, seen: 2 }, gate: "compromised", killed: true }).state, "rolledback");
  assert.equal(indicatorOf({ ...base, gate: "compromised", killed: true }).word, "Host key not proven");
  assert.equal(indicatorOf({ ...base, phase: "reconnect_wait", killed: null }).state, "reconnecting");
  assert.equal(indicatorOf({ ...base, phase: "mismatch" }).state, "mismatch");
  assert.equal(indicatorOf(null).state, "unknown");
  // Connected but this browser never paired: not the green "Connected", and the line says what to do.
  assert.deepEqual(indicatorOf({ ...base, gate: "unpinned" }), { state: "unpaired", word: "Connected, not paired yet" });
  assert.equal(indicatorOf({ ...base, gate: "trusted" }).state, "connected");
  assert.match(stateText({ ...base, gate: "unpinned" }), /not paired: run `tabwarden pair` in a terminal, then enter its code on the options page/);
});

test("popup: each last call names its client and tool; the client label is recorded from the request", async () => {
  assert.match(callText({ action: "page_click", client: "claude-code", ok: true, at: 0 }), / claude-code · page_click — ok$/);
  assert.doesNotMatch(callText({ action: "tab_list", ok: false, code: "killed", at: 0 }), / · /, "no client: no empty label");
  const store = memoryStorage();
  const recent = createRecentCalls({ storageGet: store.get, storageSet: store.set, now: () => 7 });
  await recent.record("page_click", { ok: true }, "claude-code");
  await recent.record("tab_list", { ok: true }, 42);
  assert.deepEqual(await recent.list(), [
    { action: "page_click", client: "claude-code", ok: true, at: 7 },
    { action: "tab_list", ok: true, at: 7 },
  ]);
});

test("recent calls: storage is read once per worker start; the calls of one interval are one write, after the answers; a restarted worker continues the stored list", async () => {
  const store = memoryStorage();
  const timers = fakeTimers();
  let reads = 0;
  let writes = 0;
  const deps = {
    storageGet: (k) => { reads += 1; return store.get(k); },
    storageSet: (k, v) => { writes += 1; return store.set(k, v); },
    now: () => 1,
    setTimer: timers.setTimer,
  };
  const recent = createRecentCalls(deps);
  for (let i = 0; i < 5; i += 1) await recent.record(`a${i}`, { ok: true });
  assert.equal(reads, 1);
  assert.equal(writes, 0, "no call waits on a storage write");
  assert.deepEqual((await recent.list()).map((e) => e.action), ["a0", "a1", "a2", "a3", "a4"]);
  assert.deepEqual(timers.delays(), [MIRROR_INTERVAL_MS], "one write is due, within the interval");
  timers.advance(MIRROR_INTERVAL_MS);
  await recent.stored();
  assert.equal(writes, 1);
  assert.deepEqual(store.items[RECENT_STORAGE_KEY].map((e) => e.action), ["a0", "a1", "a2", "a3", "a4"]);
  // A call after the write gets a write of its own, of the whole latest list.
  await recent.record("a5", { ok: true });
  timers.advance(MIRROR_INTERVAL_MS);
  await recent.stored();
  assert.equal(writes, 2);
  assert.equal(store.items[RECENT_STORAGE_KEY].at(-1).action, "a5");
  assert.equal(timers.pending(), 0, "nothing changed: nothing is due");
  // What list() hands out is a copy: changing it changes nothing recorded.
  (await recent.list()).length = 0;
  assert.equal((await recent.list()).length, 6);
  const restarted = createRecentCalls(deps);
  await restarted.record("b", { ok: false, error: { code: "busy" } });
  assert.deepEqual((await restarted.list()).map((e) => e.action), ["a0", "a1", "a2", "a3", "a4", "a5", "b"]);
  assert.equal(reads, 2);
});
