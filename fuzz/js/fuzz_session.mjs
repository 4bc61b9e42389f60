// Invariant: whatever the native host sends, in whatever order, across connections that drop and come back — session.js (the native-port state machine) never throws out of a port listener, runs a page handler only for a request that arrived on a connection whose welcome named our protocol, that validates as docs/protocol.md's `request` and that the request gate admitted, never runs more handlers at once than its in-flight cap, posts a reply or chunk only onto the connection its request arrived on, never puts an unexpected exception's text on the wire, chunks only what rejoins to a whole reply, settles a host_call only with the host_reply for it on the same connection, and hands session_end on only for a non-empty session name.
//
// fuzz_session.mjs — drives createSession (extension/worker/session.js) with the real dispatcher
// (dispatch.js) and backoff (backoff.js) over fake ports, timers and clock. An input is a script
// of steps — host messages, disconnects, timer ticks, host calls, stop/start — bent by the shared
// seeded mutator (mutator.mjs). Run by `python -m fuzz.run` (as fuzz_session) or directly:
//   node fuzz/js/fuzz_session.mjs --runs 100000 --seed 1 [--seconds S] [--replay FILE]

import { createBackoff } from "../../extension/worker/backoff.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { createSession } from "../../extension/worker/session.js";
import { PROTOCOL_VERSION } from "../../extension/shared/wire.js";
import { nonEmpty, plain, runTargets } from "./mutator.mjs";

const SECRET = "SECRET-must-not-leak-5c1e";
const MAX_IN_FLIGHT = 3;
const CHUNK_BYTES = 96;
const MAX_MESSAGE_BYTES = 2048;

function check(ok, what) {
  if (!ok) throw new Error(`invariant broken: ${what}`);
}

/** Broken invariants seen inside handlers (the dispatcher catches what a handler throws). */
let violations = [];

/** docs/protocol.md's `request`, written out again (as in fuzz_extension_messages.mjs's model). */
function modelRequest(m) {
  return plain(m) && nonEmpty(m.id) && m.type === "request" && nonEmpty(m.action) && plain(m.args)
    && nonEmpty(m.session) && m.session.length <= 200 && plain(m.policy);
}

/** Fake timers and a clock that only move when the script says so. */
function fakeTime() {
  let now = 0;
  let seq = 0;
  /** @type {Map<number, {at: number, fn: () => void}>} */
  const due = new Map();
  return {
    now: () => now,
    timers: {
      setTimer(fn, ms) {
        seq += 1;
        due.set(seq, { at: now + Math.max(0, Number(ms) || 0), fn });
        return seq;
      },
      clearTimer(handle) {
        due.delete(/** @type {number} */ (handle));
      },
    },
    tick(ms) {
      const until = now + ms;
      for (;;) {
        let next = null;
        for (const [id, t] of due) if (t.at <= until && (next === null || t.at < due.get(next).at)) next = id;
        if (next === null) break;
        const t = due.get(next);
        due.delete(next);
        now = Math.max(now, t.at);
        t.fn();
      }
      now = until;
    },
  };
}

const settle = async () => {
  for (let i = 0; i < 8; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

async function runScript(input) {
  const steps = plain(input) && Array.isArray(input.steps) ? input.steps : [];
  const time = fakeTime();
  const warnings = [];
  const log = { warn: (...a) => warnings.push(a.map(String).join(" ")) };
  /** @type {Array<{posted: object[], requestIds: Set<string>, phase: string, listeners: Function[], drops: Function[], replies: Map<string, unknown>}>} */
  const ports = [];
  let failConnect = false;
  const allowedArgs = new Set();
  let running = 0;
  let ran = 0;
  const slow = [];
  const ended = [];
  const expectedEnded = [];

  const handlers = new Map([
    ["echo", (args) => ({ echo: plain(args) && typeof args.v === "string" ? args.v : null })],
    ["boom", () => { throw new Error(SECRET); }],
    ["refuse", () => { throw new BridgeError("policy_denied", "no"); }],
    ["big", (args) => ({ text: "é".repeat(plain(args) && Number.isInteger(args.n) ? Math.min(Math.max(args.n, 0), 4000) : 200) })],
    ["slow", () => new Promise((resolve) => slow.push(resolve))],
  ]);
  const guarded = new Map();
  for (const [name, fn] of handlers) {
    guarded.set(name, async (args, ctx) => {
      if (!allowedArgs.has(args)) violations.push(`handler ${name} ran for a request the model refuses`);
      if (!(plain(ctx) && typeof ctx.session === "string")) violations.push("handler context");
      running += 1;
      ran += 1;
      if (running > MAX_IN_FLIGHT) violations.push(`more than ${MAX_IN_FLIGHT} handlers at once`);
      try {
        return await fn(args);
      } finally {
        running -= 1;
      }
    });
  }
  const session = createSession({
    connect() {
      if (failConnect) throw new Error("connectNative failed");
      const port = { posted: [], requestIds: new Set(), phase: "awaiting_welcome", listeners: [], drops: [], replies: new Map() };
      ports.push(port);
      return {
        postMessage(msg) {
          port.posted.push(JSON.parse(JSON.stringify(msg)));
        },
        disconnect() {},
        onMessage: { addListener: (fn) => port.listeners.push(fn) },
        onDisconnect: { addListener: (fn) => port.drops.push(fn) },
      };
    },
    dispatcher: createDispatcher(guarded, { log, now: time.now }),
    backoff: createBackoff({ initialMs: 100, maxMs: 1000, healthyMs: 500, jitter: (x) => x }),
    timers: time.timers,
    now: time.now,
    extensionVersion: "0.0.0-fuzz",
    maxInFlight: MAX_IN_FLIGHT,
    chunkBytes: CHUNK_BYTES,
    maxMessageBytes: MAX_MESSAGE_BYTES,
    log,
    onSessionEnd: (name) => ended.push(name),
    gate: {
      async admit(request) {
        await null;
        if (plain(request.args) && request.args.refuse === true) return "host_compromised";
        if (plain(request.args) && request.args.gateThrows === true) throw new Error(SECRET);
        return null;
      },
    },
  });
  /** host_call promises: what each settled with, and on which port it was asked. */
  const calls = [];
  const current = () => ports[ports.length - 1] ?? null;

  function deliver(raw) {
    const port = current();
    if (port === null || port.dead) return;
    // What a native port hands over is always JSON.parse's output (native messaging is JSON).
    const text = JSON.stringify(raw);
    if (text === undefined) return;
    const msg = JSON.parse(text);
    if (plain(msg) && msg.type === "welcome" && port.phase === "awaiting_welcome") {
      port.phase = msg.protocol === PROTOCOL_VERSION ? "ready" : "mismatch";
    }
    if (plain(msg) && msg.type === "request" && typeof msg.id === "string") port.requestIds.add(msg.id);
    if (port.phase === "ready" && modelRequest(msg) && !(msg.args.refuse === true || msg.args.gateThrows === true)) {
      allowedArgs.add(msg.args);
    }
    if (plain(msg) && msg.type === "session_end" && typeof msg.session === "string" && msg.session !== "") {
      expectedEnded.push(msg.session);
    }
    // The first host_reply for an id settles its call; later ones find nothing pending.
    const pending = plain(msg) && calls.some((e) => e.port === port && e.id === msg.id && e.settled === null);
    if (pending && msg.type === "host_reply" && !port.replies.has(msg.id)) {
      port.replies.set(msg.id, msg);
    }
    for (const fn of port.listeners) fn(msg); // must never throw
  }

  session.start();
  for (const step of steps) {
    if (!plain(step)) continue;
    switch (step.op) {
      case "msg":
        deliver(step.msg);
        break;
      case "drop": {
        const port = current();
        if (port !== null && !port.dead) {
          port.dead = true;
          for (const fn of port.drops) fn(typeof step.reason === "string" ? step.reason : null);
        }
        break;
      }
      case "tick":
        time.tick(Number.isFinite(step.ms) ? Math.min(Math.max(step.ms, 0), 60_000) : 100);
        break;
      case "flush":
        await settle();
        break;
      case "release":
        while (slow.length > 0) slow.shift()({ done: true });
        break;
      case "failConnect":
        failConnect = step.value === true;
        break;
      case "hostCall": {
        const port = current();
        const before = port === null ? 0 : port.posted.length;
        const entry = { port, settled: null };
        calls.push(entry);
        session.hostCall(typeof step.action === "string" ? step.action : "x", plain(step.args) ? step.args : {}).then(
          (value) => { entry.settled = { ok: true, value }; },
          (err) => { entry.settled = { ok: false, err }; },
        );
        const sent = port === null ? undefined : port.posted.slice(before).find((m) => m.type === "host_call");
        entry.id = sent?.id ?? null;
        break;
      }
      case "reply": {
        // A host_reply for the n-th host call so far (maybe from an earlier connection).
        const target = calls[Number.isInteger(step.n) ? Math.abs(step.n) % Math.max(calls.length, 1) : 0];
        deliver({ type: "host_reply", id: target?.id ?? step.id, ok: step.ok !== false, result: step.result ?? { r: 1 }, error: step.error });
        break;
      }
      case "stop": {
        const port = current();
        if (port !== null) port.dead = true; // a stopped session listens to it no more
        session.stop();
        break;
      }
      case "start":
        session.start();
        break;
      default:
        break;
    }
  }
  while (slow.length > 0) slow.shift()({ done: true });
  await settle();
  time.tick(60_000);
  await settle();

  // --- what went onto the wire ------------------------------------------------------------------
  const seen = violations;
  violations = [];
  check(seen.length === 0, seen[0]);
  check(!warnings.some((w) => w.includes("error handling a host message")), `a host message threw inside session.js: ${warnings.find((w) => w.includes("error handling"))}`);
  for (const [k, port] of ports.entries()) {
    check(port.posted.length === 0 || port.posted[0].type === "hello", `port ${k}: hello first`);
    const chunks = new Map();
    for (const m of port.posted) {
      const text = JSON.stringify(m);
      check(!text.includes(SECRET), `port ${k}: an exception's text went onto the wire`);
      check(["hello", "reply", "chunk", "grant", "host_call"].includes(m.type), `port ${k}: posted a ${m.type}`);
      if (m.type === "reply" || m.type === "chunk") {
        check(port.requestIds.has(m.id), `port ${k}: a reply for ${JSON.stringify(m.id)}, not asked on this connection`);
        if (m.type === "chunk") check(utf8(m.data) <= CHUNK_BYTES, `port ${k}: a chunk over the chunk size`);
        else if (m.ok === true) check(utf8(text) <= CHUNK_BYTES, `port ${k}: an unchunked reply over the chunk size`);
        else check(utf8(text) <= 1024, `port ${k}: an error reply over 1 KiB`);
      }
      if (m.type === "reply" && m.ok === true) check(port.phase === "ready", `port ${k}: served before a matching welcome`);
      if (m.type === "chunk") {
        const list = chunks.get(m.id) ?? [];
        list.push(m);
        chunks.set(m.id, list);
      }
    }
    for (const [id, list] of chunks) {
      // Chunks of one reply go back to back; a second reply with the same id would start at seq 0 again.
      let i = 0;
      while (i < list.length) {
        const total = list[i].total;
        const group = list.slice(i, i + total);
        check(group.length === total && group.every((c, seq) => c.seq === seq && c.total === total), `port ${k}: chunks of ${id} incomplete`);
        const whole = JSON.parse(group.map((c) => c.data).join(""));
        check(plain(whole) && whole.type === "reply" && whole.id === id, `port ${k}: chunks of ${id} do not rejoin to its reply`);
        check(utf8(JSON.stringify(whole)) <= MAX_MESSAGE_BYTES, "a reassembled reply over the limit");
        i += total;
      }
    }
  }
  for (const entry of calls) {
    if (entry.settled?.ok !== true) continue;
    const reply = entry.port?.replies.get(entry.id);
    check(reply !== undefined && reply.ok === true, "a host_call resolved without its host_reply on its own connection");
    check(JSON.stringify(entry.settled.value) === JSON.stringify(reply.result), "a host_call resolved with another reply's result");
  }
  check(JSON.stringify(ended) === JSON.stringify(expectedEnded), "session_end handed on exactly for non-empty session names");
  return ran;
}

function utf8(text) {
  return Buffer.byteLength(text, "utf8");
}

// --- seeds ---------------------------------------------------------------------------------------

const welcome = { type: "welcome", protocol: PROTOCOL_VERSION, hostVersion: "0.1", browser: "chrome", epoch: 3 };
const req = (id, action, args = {}) => ({ op: "msg", msg: { type: "request", id, action, args, session: "s-1", policy: {} } });
const SEEDS = [
  { steps: [{ op: "msg", msg: welcome }, req("1", "echo", { v: "a" }), { op: "flush" }] },
  { steps: [req("1", "echo"), { op: "msg", msg: welcome }, req("2", "echo"), { op: "flush" }] },
  { steps: [{ op: "msg", msg: { ...welcome, protocol: 99 } }, req("1", "echo"), { op: "flush" }] },
  { steps: [{ op: "msg", msg: welcome }, req("1", "boom"), req("2", "refuse"), req("3", "big", { n: 3000 }), req("4", "big", { n: 40 }), { op: "flush" }] },
  { steps: [{ op: "msg", msg: welcome }, req("1", "slow"), req("2", "slow"), req("3", "slow"), req("4", "slow"), req("5", "echo"), { op: "flush" }, { op: "release" }, { op: "flush" }] },
  { steps: [{ op: "msg", msg: welcome }, req("1", "slow"), { op: "flush" }, { op: "drop", reason: "host exited" }, { op: "tick", ms: 200 }, { op: "msg", msg: welcome }, { op: "release" }, { op: "flush" }] },
  { steps: [{ op: "msg", msg: welcome }, req("1", "echo", { refuse: true }), req("2", "echo", { gateThrows: true }), { op: "flush" }] },
  { steps: [{ op: "msg", msg: welcome }, { op: "hostCall", action: "pair_begin" }, { op: "reply", n: 0, result: { ok: 1 } }, { op: "flush" }] },
  { steps: [{ op: "msg", msg: welcome }, { op: "hostCall" }, { op: "drop" }, { op: "tick", ms: 150 }, { op: "msg", msg: welcome }, { op: "reply", n: 0 }, { op: "flush" }] },
  { steps: [{ op: "msg", msg: welcome }, { op: "msg", msg: { type: "session_end", session: "s-1" } }, { op: "msg", msg: { type: "session_end", session: "" } }, { op: "msg", msg: { type: "session_end" } }] },
  { steps: [{ op: "failConnect", value: true }, { op: "drop" }, { op: "tick", ms: 300 }, { op: "failConnect", value: false }, { op: "tick", ms: 2000 }, { op: "msg", msg: welcome }, req("7", "echo"), { op: "flush" }] },
  { steps: [{ op: "msg", msg: welcome }, { op: "msg", msg: welcome }, { op: "stop" }, req("1", "echo"), { op: "start" }, { op: "msg", msg: welcome }, req("2", "echo"), { op: "flush" }] },
  { steps: [{ op: "msg", msg: welcome }, { op: "msg", msg: { type: "grant_result", id: "grant-1", ok: true } }, { op: "msg", msg: { type: "chunk", id: "1", seq: 0, total: 2, data: "{" } }, { op: "msg", msg: "not an object" }, { op: "msg", msg: null }] },
];

const EDGE = [
  null, true, false, 0, -1, 1.5, NaN, Infinity, 2 ** 53, "", " ", "x", "1", "2", "s-1", "request", "reply", "welcome",
  "host_reply", "session_end", "grant_result", "chunk", "echo", "boom", "slow", "big", "constructor", "__proto__",
  "toString", "\ud800", "\u0000", "a".repeat(201), PROTOCOL_VERSION, PROTOCOL_VERSION + 1, [], [1, "a"], {},
  { __proto__: null }, JSON.parse('{"__proto__": {"x": 1}}'), Object.create({ inherited: 1 }),
  { op: "drop" }, { op: "flush" }, { op: "tick", ms: 5000 }, { op: "release" }, { op: "stop" }, { op: "start" },
  { op: "msg", msg: welcome }, req("9", "echo"),
];
const KEYS = ["op", "msg", "type", "id", "action", "args", "session", "policy", "protocol", "ok", "result", "error", "n", "ms", "v", "refuse", "gateThrows", "steps", "__proto__", "x"];

await runTargets({ session: { run: runScript, seeds: SEEDS } }, { edges: EDGE, keys: KEYS });
