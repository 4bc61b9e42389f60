import { test } from "node:test";
import assert from "node:assert/strict";
import { createSession } from "../../extension/worker/session.js";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { createBackoff } from "../../extension/worker/backoff.js";
import { deferred, fakeLog, fakePort, fakeTimers, flush } from "./helpers/fakes.mjs";

const WELCOME = { type: "welcome", protocol: 1, hostVersion: "0.1.0", browser: "chromium" };
const CTX = { session: "s1", policy: { origins: [], confirm: [] } };
const req = (id, action = "tab_list", args = {}) => ({ type: "request", id, action, args, ...CTX });

/** A session over fake ports; `handlers` defaults to a counting tab_list. */
function harness({ handlers, connect, ...rest } = {}) {
  const timers = fakeTimers();
  const log = fakeLog();
  const ports = [];
  const calls = { tab_list: 0 };
  const routes = handlers ?? [["tab_list", async () => { calls.tab_list += 1; return { tabs: [] }; }]];
  const session = createSession({
    connect: connect ?? (() => { const p = fakePort(); ports.push(p); return p; }),
    dispatcher: createDispatcher(routes, { log }),
    backoff: createBackoff(),
    timers,
    now: timers.now,
    extensionVersion: "0.1.0",
    log,
    ...rest,
  });
  return { session, timers, log, ports, calls, port: () => ports.at(-1) };
}

test("hello is the first message, sent as soon as the port opens", () => {
  const h = harness();
  h.session.start();
  assert.equal(h.ports.length, 1);
  assert.deepEqual(h.port().sent, [{ type: "hello", protocol: 1, extensionVersion: "0.1.0" }]);
  assert.equal(h.session.snapshot().phase, "awaiting_welcome");
});

test("start is idempotent while connected", () => {
  const h = harness();
  h.session.start();
  h.session.start();
  assert.equal(h.ports.length, 1);
});

test("welcome with protocol 1 -> ready, and requests are answered", async () => {
  const h = harness();
  h.session.start();
  h.port().deliver(WELCOME);
  assert.deepEqual(h.session.snapshot(), {
    phase: "ready", hostProtocol: 1, hostVersion: "0.1.0", browser: "chromium", inFlight: 0, reconnectInMs: null,
    connectedSince: null, lastDisconnectAt: null, lastDisconnectReason: null, lastDisconnectWelcomed: null, // no wallNow: no times
  });
  h.port().deliver(req("7"));
  await flush();
  assert.deepEqual(h.port().sent.at(-1), { type: "reply", id: "7", ok: true, result: { tabs: [] } });
  h.port().deliver(req("8", "constructor"));
  await flush();
  assert.equal(h.port().sent.at(-1).error.code, "unknown_action");
  assert.equal(h.calls.tab_list, 1);
});

test("protocol mismatch blocks requests (protocol_mismatch reply, handler never runs)", async () => {
  const h = harness();
  h.session.start();
  h.port().deliver({ ...WELCOME, protocol: 2 });
  assert.equal(h.session.snapshot().phase, "mismatch");
  assert.equal(h.session.snapshot().hostProtocol, 2);
  h.port().deliver(req("1"));
  await flush();
  assert.equal(h.calls.tab_list, 0);
  assert.deepEqual(h.port().sent.at(-1).error.code, "protocol_mismatch");
  assert.equal(h.port().sent.at(-1).id, "1");
  // a later "correct" welcome does not unlock it
  h.port().deliver(WELCOME);
  h.port().deliver(req("2"));
  await flush();
  assert.equal(h.calls.tab_list, 0);
  assert.ok(h.log.warnings.some((w) => w.includes("protocol 2")));
});

test("a welcome with a non-number or missing protocol is a mismatch", () => {
  for (const protocol of ["1", undefined, 1.0001, null]) {
    const h = harness();
    h.session.start();
    h.port().deliver({ type: "welcome", protocol });
    assert.equal(h.session.snapshot().phase, "mismatch", String(protocol));
  }
});

test("requests before welcome are refused, not served", async () => {
  const h = harness();
  h.session.start();
  h.port().deliver(req("early"));
  await flush();
  assert.equal(h.calls.tab_list, 0);
  assert.equal(h.port().sent.at(-1).error.code, "protocol_mismatch");
});

test("unknown types and non-objects are ignored, never fatal", async () => {
  const h = harness();
  h.session.start();
  h.port().deliver(WELCOME);
  for (const m of [{ type: "event" }, { type: "reply", id: "x", ok: true }, null, "hi", [1], { noType: 1 }]) h.port().deliver(m);
  await flush();
  assert.equal(h.port().sent.length, 1); // just hello
  assert.equal(h.session.snapshot().phase, "ready");
  h.port().deliver(req("ok"));
  await flush();
  assert.equal(h.port().sent.at(-1).ok, true);
});

test("malformed request: bad_request if it has an id, else dropped", async () => {
  const h = harness();
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver({ type: "request", id: "b", action: "tab_list" });
  h.port().deliver({ type: "request", action: "tab_list", args: {} });
  await flush();
  assert.equal(h.port().sent.length, 2);
  assert.equal(h.port().sent[1].error.code, "bad_request");
});

test("disconnect clears every piece of state and schedules a reconnect via backoff", () => {
  const h = harness();
  h.session.start();
  h.port().deliver(WELCOME);
  const first = h.port();
  first.drop("Native host has exited.");
  assert.deepEqual(h.session.snapshot(), {
    phase: "reconnect_wait", hostProtocol: null, hostVersion: null, browser: null, inFlight: 0, reconnectInMs: 250,
    connectedSince: null, lastDisconnectAt: null, lastDisconnectReason: "Native host has exited.",
    lastDisconnectWelcomed: true,
  });
  assert.ok(h.log.warnings.some((w) => w.includes("Native host has exited.")));
  assert.deepEqual(h.timers.delays(), [250]);
  // messages on the dead port are ignored
  first.deliver(req("ghost"));
  h.timers.advance(249);
  assert.equal(h.ports.length, 1);
  h.timers.advance(1);
  assert.equal(h.ports.length, 2);
  assert.deepEqual(h.port().sent, [{ type: "hello", protocol: 1, extensionVersion: "0.1.0" }]);
  assert.equal(h.session.snapshot().phase, "awaiting_welcome");
  assert.equal(h.session.snapshot().hostProtocol, null);
  assert.equal(h.calls.tab_list, 0);
});

test("repeated failures back off exponentially; a healthy connection resets the schedule", () => {
  const h = harness();
  h.session.start();
  const delays = [];
  for (let i = 0; i < 4; i++) {
    h.port().drop("Specified native messaging host not found.");
    delays.push(h.timers.delays()[0]);
    h.timers.advance(delays.at(-1));
  }
  assert.deepEqual(delays, [250, 500, 1000, 2000]);
  h.timers.advance(10_000); // this connection stays up 10 s
  h.port().drop("Native host has exited.");
  assert.deepEqual(h.timers.delays(), [250]);
});

test("start while a reconnect is pending does not bypass the backoff", () => {
  const h = harness();
  h.session.start();
  h.port().drop("Access to the specified native messaging host is forbidden.");
  h.session.start();
  assert.equal(h.ports.length, 1);
  assert.equal(h.timers.pending(), 1);
});

test("a reply from the old connection is never posted to the new one", async () => {
  const gate = deferred();
  const h = harness({ handlers: [["slow", () => gate.promise]] });
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver(req("old", "slow"));
  await flush();
  assert.equal(h.session.snapshot().inFlight, 1);
  h.port().drop(null);
  h.timers.advance(250);
  gate.resolve({ late: true });
  await flush();
  assert.equal(h.ports[0].sent.length, 1); // hello only
  assert.deepEqual(h.ports[1].sent, [{ type: "hello", protocol: 1, extensionVersion: "0.1.0" }]);
});

test("connect throwing is logged and retried, never thrown", () => {
  let n = 0;
  const ports = [];
  const h = harness({ connect: () => { n += 1; if (n < 3) throw new Error("boom"); const p = fakePort(); ports.push(p); return p; } });
  assert.doesNotThrow(() => h.session.start());
  assert.equal(h.session.snapshot().phase, "reconnect_wait");
  h.timers.advance(250);
  h.timers.advance(500);
  assert.equal(n, 3);
  assert.equal(ports.length, 1);
  assert.equal(h.log.warnings.filter((w) => w.includes("boom")).length, 2);
});

test("postMessage throwing is treated as a disconnect", () => {
  const h = harness({ connect: () => fakePort({ throwOnPost: true }) });
  assert.doesNotThrow(() => h.session.start());
  assert.equal(h.session.snapshot().phase, "reconnect_wait");
});

test("too many requests in flight -> busy", async () => {
  const gate = deferred();
  const h = harness({ handlers: [["slow", () => gate.promise]], maxInFlight: 1 });
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver(req("a", "slow"));
  h.port().deliver(req("b", "slow"));
  await flush();
  assert.equal(h.port().sent.at(-1).id, "b");
  assert.equal(h.port().sent.at(-1).error.code, "busy");
  gate.resolve({});
  await flush();
  assert.deepEqual(h.port().sent.at(-1), { type: "reply", id: "a", ok: true, result: {} });
  assert.equal(h.session.snapshot().inFlight, 0);
});

test("an oversize reply becomes message_too_large", async () => {
  const h = harness({ handlers: [["big", () => ({ blob: "x".repeat(2000) })]], maxMessageBytes: 1000 });
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver(req("z", "big"));
  await flush();
  const last = h.port().sent.at(-1);
  assert.equal(last.id, "z");
  assert.equal(last.error.code, "message_too_large");
});

test("an unserializable result becomes internal_error", async () => {
  const h = harness({ handlers: [["bigint", () => ({ n: 10n })]] });
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver(req("q", "bigint"));
  await flush();
  assert.equal(h.port().sent.at(-1).error.code, "internal_error");
});

test("stop disconnects, cancels reconnects, and start reconnects", () => {
  const h = harness();
  h.session.start();
  h.session.stop();
  assert.equal(h.ports[0].disconnectCalls, 1);
  assert.equal(h.session.snapshot().phase, "stopped");
  h.ports[0].drop("late"); // a late disconnect event must not schedule anything
  assert.equal(h.timers.pending(), 0);
  h.session.start();
  assert.equal(h.ports.length, 2);
  h.port().drop("x");
  h.session.stop();
  assert.equal(h.timers.pending(), 0);
});

test("a reply over chunkBytes goes as ordered chunks that reassemble to the reply", async () => {
  const result = { text: "é😀".repeat(400) };
  const h = harness({ handlers: [["big", () => result]], chunkBytes: 500 });
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver(req("c1", "big"));
  await flush();
  const chunks = h.port().sent.slice(1);
  assert.ok(chunks.length >= 2);
  chunks.forEach((c, i) => {
    assert.equal(c.type, "chunk");
    assert.equal(c.id, "c1");
    assert.equal(c.seq, i);
    assert.equal(c.total, chunks.length);
    assert.ok(Buffer.byteLength(c.data, "utf8") <= 500);
  });
  assert.deepEqual(JSON.parse(chunks.map((c) => c.data).join("")), { type: "reply", id: "c1", ok: true, result });
});

test("a reply at exactly chunkBytes is sent whole", async () => {
  const probe = JSON.stringify({ type: "reply", id: "w", ok: true, result: { s: "" } }).length;
  const h = harness({ handlers: [["fit", () => ({ s: "x".repeat(600 - probe) })]], chunkBytes: 600 });
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver(req("w", "fit"));
  await flush();
  assert.equal(h.port().sent.length, 2);
  assert.equal(h.port().sent[1].type, "reply");
});

test("requestGrant sends grant and resolves on grant_result ok", async () => {
  const h = harness();
  h.session.start();
  h.port().deliver(WELCOME);
  const p = h.session.requestGrant("http://127.0.0.1:8000");
  const grant = h.port().sent.at(-1);
  assert.deepEqual(grant, { type: "grant", id: grant.id, kind: "origin", origin: "http://127.0.0.1:8000" });
  assert.equal(typeof grant.id, "string");
  h.port().deliver({ type: "grant_result", id: "other", ok: true });
  h.port().deliver({ type: "grant_result", id: grant.id, ok: true });
  await p;
  assert.ok(h.log.warnings.some((w) => w.includes("grant_result")));
});

test("grant_result not ok rejects with the host's code; no answer times out after 10 s", async () => {
  const h = harness();
  h.session.start();
  h.port().deliver(WELCOME);
  const p = h.session.requestGrant("http://a.test");
  h.port().deliver({ type: "grant_result", id: h.port().sent.at(-1).id, ok: false, error: { code: "not_paired", message: "no key" } });
  await assert.rejects(p, (e) => e.code === "not_paired");
  const q = h.session.requestGrant("http://b.test");
  h.timers.advance(9_999);
  h.timers.advance(1);
  await assert.rejects(q, (e) => e.code === "timeout");
});

test("grants are refused before welcome and rejected on disconnect", async () => {
  const h = harness();
  await assert.rejects(h.session.requestGrant("http://a.test"), (e) => e.code === "extension_not_connected");
  h.session.start();
  await assert.rejects(h.session.requestGrant("http://a.test"), (e) => e.code === "extension_not_connected");
  h.port().deliver(WELCOME);
  const p = h.session.requestGrant("http://a.test");
  h.port().drop("gone");
  await assert.rejects(p, (e) => e.code === "extension_not_connected");
});

test("session_end calls onSessionEnd with the session name; malformed ones are ignored", () => {
  const ended = [];
  const h = harness({ onSessionEnd: (s) => ended.push(s) });
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver({ type: "session_end", session: "s3-9f2c" });
  h.port().deliver({ type: "session_end", session: 5 });
  h.port().deliver({ type: "session_end" });
  assert.deepEqual(ended, ["s3-9f2c"]);
});

test("trust_changed on a ready connection calls onTrustChanged with its epoch (only) and nothing else", () => {
  const changed = [];
  const h = harness({ onTrustChanged: (notice) => { changed.push(notice); } });
  h.session.start();
  h.port().deliver({ type: "trust_changed", seq: 1, epoch: 99 }); // before the welcome: not the host's word yet
  h.port().deliver(WELCOME);
  const sent = h.port().sent.length;
  h.port().deliver({ type: "trust_changed", seq: 1, epoch: 12 });
  h.port().deliver({ type: "trust_changed", seq: 2, killed: true });
  assert.deepEqual(changed, [{ epoch: 12 }, { epoch: undefined }]);
  assert.equal(h.port().sent.length, sent, "no answer goes back to the host");
  assert.ok(!h.log.warnings.some((w) => w.includes("trust_changed")));
});

test("hostCall sends host_call and resolves with host_reply's result; errors carry the host's code", async () => {
  const h = harness();
  await assert.rejects(h.session.hostCall("pair_begin", {}), (e) => e.code === "extension_not_connected");
  h.session.start();
  h.port().deliver(WELCOME);
  const p = h.session.hostCall("pair_begin", { code: "abc" });
  const call = h.port().sent.at(-1);
  assert.deepEqual(call, { type: "host_call", id: call.id, action: "pair_begin", args: { code: "abc" } });
  h.port().deliver({ type: "host_reply", id: "nope", ok: true, result: {} });
  assert.ok(h.log.warnings.some((w) => w.includes("host_reply")));
  h.port().deliver({ type: "host_reply", id: call.id, ok: true, result: { challengeId: "c1" } });
  assert.deepEqual(await p, { challengeId: "c1" });
  const q = h.session.hostCall("pair_complete", {});
  h.port().deliver({ type: "host_reply", id: h.port().sent.at(-1).id, ok: false, error: { code: "presence_refused", message: "no" } });
  await assert.rejects(q, (e) => e.code === "presence_refused");
});

test("hostCall times out after 15 s and is rejected on disconnect", async () => {
  const h = harness();
  h.session.start();
  h.port().deliver(WELCOME);
  const p = h.session.hostCall("host_proof", { nonce: "x" });
  h.timers.advance(14_999);
  h.timers.advance(1);
  await assert.rejects(p, (e) => e.code === "timeout");
  const q = h.session.hostCall("host_proof", { nonce: "y" });
  h.port().drop("gone");
  await assert.rejects(q, (e) => e.code === "extension_not_connected");
});

test("the gate is asked before each request: a refusal answers with its code, the handler never runs", async () => {
  let verdict = "host_compromised";
  const hooks = [];
  const h = harness({ gate: { admit: async () => verdict }, onWelcome: () => hooks.push("welcome"), onClosed: () => hooks.push("closed") });
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver(req("g1"));
  await flush();
  assert.equal(h.calls.tab_list, 0);
  assert.equal(h.port().sent.at(-1).id, "g1");
  assert.equal(h.port().sent.at(-1).error.code, "host_compromised");
  verdict = null;
  h.port().deliver(req("g2"));
  await flush();
  assert.equal(h.calls.tab_list, 1);
  assert.equal(h.port().sent.at(-1).ok, true);
  h.port().drop("x");
  assert.deepEqual(hooks, ["welcome", "closed"]);
});

test("a gate that throws refuses", async () => {
  const h = harness({ gate: { admit: async () => { throw new Error("boom"); } } });
  h.session.start();
  h.port().deliver(WELCOME);
  h.port().deliver(req("t"));
  await flush();
  assert.equal(h.calls.tab_list, 0);
  assert.equal(h.port().sent.at(-1).error.code, "host_compromised");
});

test("a fresh worker shows the disconnect the host remembers; its own, once seen, wins", () => {
  const h = harness({ wallNow: () => 5_000 });
  h.session.start();
  h.port().deliver({ ...WELCOME, lastDisconnect: { at: 1_234, reason: "port_closed" } });
  assert.deepEqual([h.session.snapshot().lastDisconnectAt, h.session.snapshot().lastDisconnectReason], [1_234, "port_closed"]);
  h.port().drop("Native host has exited.");
  h.timers.advance(60_000);
  h.port().deliver({ ...WELCOME, lastDisconnect: { at: 1_000, reason: "host_vanished" } });
  assert.deepEqual([h.session.snapshot().lastDisconnectAt, h.session.snapshot().lastDisconnectReason], [5_000, "Native host has exited."]);
});

test("a malformed remembered disconnect from the host is ignored", () => {
  for (const told of [null, "port_closed", { at: "1", reason: "x" }, { at: -1, reason: "x" }, { at: 1, reason: "<b>hi</b>" }, { at: 1, reason: "a".repeat(33) }]) {
    const h = harness({ wallNow: () => 5_000 });
    h.session.start();
    h.port().deliver({ ...WELCOME, lastDisconnect: told });
    assert.equal(h.session.snapshot().lastDisconnectReason, null, JSON.stringify(told));
  }
});

test("a host that never said welcome is remembered as such (not found, or could not start)", () => {
  const h = harness();
  h.session.start();
  h.port().drop("Specified native messaging host not found.");
  const snap = h.session.snapshot();
  assert.deepEqual([snap.lastDisconnectReason, snap.lastDisconnectWelcomed], ["Specified native messaging host not found.", false]);
});
