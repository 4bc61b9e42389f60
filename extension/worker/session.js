// session.js — the native-port connection state machine: hello on connect, welcome handling,
// serving requests through the dispatcher (chunking replies over CHUNK_BYTES), origin grants
// sent to the host and matched with their grant_result, host_call/host_reply (pairing, host
// proof) matched the same way, an optional request gate (worker/pinning.js, worker/epoch-ratchet.js), session_end, clearing all state and
// scheduling a backoff reconnect when the port drops. Pure: the port, timers, clock and logger are injected (background.js
// wires the real ones). It must never touch the chrome global, never throw out of a port
// listener, never serve requests before a matching welcome, and never post a reply from one
// connection onto a later one.

import { BridgeError } from "../shared/bridge-error.js";
import { CHUNK_BYTES, MAX_REASSEMBLED, chunkReply, utf8Length } from "./chunking.js";
import { CODE, errorReply } from "../shared/error-codes.js";
import { validateRequest } from "./dispatch.js";
import { createPendingTable } from "./pending.js";
import { PROTOCOL_VERSION, isPlainObject } from "../shared/wire.js";

/** How long an origin grant waits for the host's grant_result. */
export const GRANT_TIMEOUT_MS = 10_000;

/** How long a host_call waits for the host's host_reply. */
export const HOST_CALL_TIMEOUT_MS = 15_000;

/**
 * A port-like object (shared/chrome-api.js adapts chrome.runtime.Port to this).
 * onDisconnect listeners receive the reason (chrome.runtime.lastError.message) or null.
 * @typedef {object} PortLike
 * @property {(msg: object) => void} postMessage
 * @property {() => void} disconnect
 * @property {{addListener: (fn: (msg: unknown) => void) => void}} onMessage
 * @property {{addListener: (fn: (reason: string | null) => void) => void}} onDisconnect
 */

/**
 * @typedef {"idle" | "awaiting_welcome" | "ready" | "mismatch" | "reconnect_wait" | "stopped"} Phase
 */

/**
 * @typedef {object} SessionSnapshot
 * @property {Phase} phase
 * @property {number | null} hostProtocol protocol from the host's welcome
 * @property {string | null} hostVersion
 * @property {string | null} browser host's browser label
 * @property {number} inFlight requests being handled on the current connection
 * @property {number | null} reconnectInMs delay of the scheduled reconnect, if any
 * @property {number | null} connectedSince wall-clock ms when the current connection became ready
 * @property {number | null} lastDisconnectAt wall-clock ms of this worker's last disconnect
 * @property {string | null} lastDisconnectReason why (runtime.lastError's text, or ours)
 * @property {boolean | null} lastDisconnectWelcomed whether that connection had reached the
 *   host's welcome (false: the host never answered: not found, or could not start)
 */

/**
 * What a request gate answers: null serves the request; a table code, or a code with the message
 * to send, refuses it.
 * @typedef {string | {code: string, message: string} | null} GateVerdict
 */

/**
 * @typedef {object} SessionOptions
 * @property {() => PortLike} connect opens the native port (may throw)
 * @property {import("./dispatch.js").Dispatcher} dispatcher
 * @property {import("./backoff.js").Backoff} backoff
 * @property {import("./pending.js").Timers} timers
 * @property {() => number} now milliseconds, monotonic enough for uptime
 * @property {string} extensionVersion sent in hello
 * @property {{warn: (...a: unknown[]) => void}} [log]
 * @property {number} [maxInFlight=16] concurrent requests before answering "busy"
 * @property {number} [maxMessageBytes] largest reply, chunks reassembled (default MAX_REASSEMBLED)
 * @property {number} [chunkBytes] replies over this many bytes go as chunks (default CHUNK_BYTES)
 * @property {(session: string, opts: {closeTabs: boolean}) => void} [onSessionEnd] the host's
 *   session_end for `session` (closeTabs: the policy closes its tabs rather than orphaning them)
 * @property {(notice: {epoch: unknown}) => void} [onTrustChanged] the host's trust_changed notice
 *   (host/notices.py) on a ready connection: the trust record, kill latch or audit log changed on
 *   disk; `epoch` is the record's epoch as the host states it then (unchecked, as a welcome's),
 *   the rollback witness's input; nothing else in it is acted on
 * @property {{admit: (request: Record<string, unknown>) => Promise<GateVerdict>}} [gate] asked
 *   with the host's request frame before serving it: null serves it, a table code (or a code and
 *   message) answers it with that error (worker/pinning.js: host_compromised; worker/epoch-ratchet.js:
 *   trust_rolled_back)
 * @property {() => Promise<Record<string, unknown>>} [helloFields] more fields for `hello`
 *   (epochSeen); hello waits for them, and goes without them if they fail
 * @property {(welcome: {epoch: unknown}) => void} [onWelcome] a connection became ready (welcome
 *   with our protocol); `epoch` is the record's epoch as the host stated it (unchecked)
 * @property {() => void} [onClosed] the current connection ended (dropped or stopped)
 * @property {(action: string, reply: import("./dispatch.js").Reply, who?: {session: string, client: string | null}) => void} [onAnswered] a
 *   request with a valid action was answered with `reply` (worker/recent-calls.js; never args)
 * @property {() => number} [wallNow] wall-clock ms for the status fields (default: no times)
 */

/**
 * @typedef {object} Session
 * @property {() => void} start connect unless connected or a reconnect is already scheduled
 * @property {() => void} stop disconnect, cancel any reconnect, stay down until start()
 * @property {() => void} wake the wake alarm fired (worker/wake.js): connect now unless connected
 *   or stopped; a reconnect waiting out its backoff is brought forward, so "expected back within
 *   one alarm period" holds however far the backoff had grown
 * @property {() => SessionSnapshot} snapshot
 * @property {(origin: string) => Promise<unknown>} requestGrant ask the host to record an
 *   approved origin; resolves on grant_result ok, rejects with a BridgeError otherwise
 *   (the host's code, "timeout" after GRANT_TIMEOUT_MS, "extension_not_connected")
 * @property {(action: string, args?: object) => Promise<any>} hostCall call the host
 *   (host_call); resolves with host_reply's result, rejects with a BridgeError (the host's code,
 *   "timeout" after HOST_CALL_TIMEOUT_MS, "extension_not_connected")
 */

/**
 * @param {SessionOptions} options
 * @returns {Session}
 */
export function createSession(options) {
  const { connect, dispatcher, backoff, timers, now, extensionVersion } = options;
  const log = options.log ?? console;
  const maxInFlight = options.maxInFlight ?? 16;
  const maxMessageBytes = options.maxMessageBytes ?? MAX_REASSEMBLED;
  const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
  const onSessionEnd = options.onSessionEnd ?? (() => {});
  const onTrustChanged = options.onTrustChanged ?? (() => {});
  const grants = createPendingTable({ ...timers, defaultTimeoutMs: GRANT_TIMEOUT_MS });
  let grantSeq = 0;
  const calls = createPendingTable({ ...timers, defaultTimeoutMs: HOST_CALL_TIMEOUT_MS });
  let callSeq = 0;
  const gate = options.gate ?? null;
  /** @type {(welcome: {epoch: unknown}) => void} */
  const onWelcomeHook = options.onWelcome ?? (() => {});
  const helloFields = options.helloFields ?? null;
  const onClosedHook = options.onClosed ?? (() => {});
  const onAnsweredHook = options.onAnswered ?? (() => {});
  const wallNow = options.wallNow ?? null;
  /** @type {number | null} */
  let connectedSince = null;
  /** @type {{at: number | null, reason: string, welcomed: boolean | null} | null} */
  let lastDisconnect = null;
  /** @param {string} reason @param {boolean | null} welcomed */
  const noteDisconnect = (reason, welcomed) => {
    connectedSince = null;
    lastDisconnect = { at: wallNow === null ? null : wallNow(), reason: reason.slice(0, 200), welcomed };
  };

  /**
   * Everything about one connection lives here and is dropped with it.
   * @typedef {{port: PortLike, openedAt: number, phase: Phase, hostProtocol: number | null,
   *   hostVersion: string | null, browser: string | null, inFlight: number}} Conn
   */
  /** @type {Conn | null} */
  let conn = null;
  /** @type {unknown} */
  let reconnectTimer = null;
  /** @type {number | null} */
  let reconnectInMs = null;
  let stopped = false;

  /** @param {unknown} err */
  const describe = (err) => (err instanceof Error ? err.message : String(err));

  function cancelReconnect() {
    if (reconnectTimer !== null) timers.clearTimer(reconnectTimer);
    reconnectTimer = null;
    reconnectInMs = null;
  }

  /** @param {number} delay */
  function scheduleReconnect(delay) {
    cancelReconnect();
    if (stopped) return;
    reconnectInMs = delay;
    reconnectTimer = timers.setTimer(() => {
      reconnectTimer = null;
      reconnectInMs = null;
      if (!stopped && conn === null) open();
    }, delay);
  }

  function open() {
    /** @type {PortLike} */
    let port;
    try {
      port = connect();
    } catch (err) {
      const delay = backoff.next();
      log.warn(`tabwarden: connecting to the native host failed: ${describe(err)}; retry in ${delay} ms`);
      scheduleReconnect(delay);
      return;
    }
    /** @type {Conn} */
    const c = {
      port, openedAt: now(), phase: "awaiting_welcome",
      hostProtocol: null, hostVersion: null, browser: null, inFlight: 0,
    };
    conn = c;
    port.onMessage.addListener((msg) => {
      if (conn !== c) return;
      try {
        onMessage(c, msg);
      } catch (err) {
        log.warn(`tabwarden: error handling a host message: ${describe(err)}`);
      }
    });
    port.onDisconnect.addListener((reason) => closed(c, reason ?? "native port closed"));
    const hello = { type: "hello", protocol: PROTOCOL_VERSION, extensionVersion };
    if (helloFields === null) {
      send(c, hello);
      return;
    }
    helloFields().then(
      (extra) => send(c, { ...(isPlainObject(extra) ? extra : {}), ...hello }),
      (err) => {
        log.warn(`tabwarden: hello goes without its extra fields: ${describe(err)}`);
        send(c, hello);
      },
    );
  }

  /**
   * The connection ended (port dropped or unusable): forget all of it, schedule a reconnect.
   * @param {Conn} c
   * @param {string} reason
   */
  function closed(c, reason) {
    if (conn !== c) return;
    conn = null;
    grants.rejectAll();
    calls.rejectAll();
    try {
      c.port.disconnect();
    } catch {
      // already gone
    }
    hook(onClosedHook);
    noteDisconnect(reason, c.phase !== "awaiting_welcome");
    const delay = backoff.afterConnection(now() - c.openedAt);
    log.warn(`tabwarden: native host disconnected: ${reason}; reconnecting in ${delay} ms`);
    scheduleReconnect(delay);
  }

  /** @param {() => void} fn */
  function hook(fn) {
    try {
      fn();
    } catch (err) {
      log.warn(`tabwarden: session hook failed: ${describe(err)}`);
    }
  }

  /**
   * @param {Conn} c
   * @param {object} msg
   * @returns {boolean} whether it was posted
   */
  function send(c, msg) {
    if (conn !== c) return false;
    try {
      c.port.postMessage(msg);
      return true;
    } catch (err) {
      closed(c, `postMessage failed: ${describe(err)}`);
      return false;
    }
  }

  /**
   * @param {Conn} c
   * @param {unknown} msg
   */
  function onMessage(c, msg) {
    if (!isPlainObject(msg)) {
      log.warn("tabwarden: dropping a non-object message from the host");
      return;
    }
    if (msg.type === "welcome") onWelcome(c, msg);
    else if (msg.type === "request") onRequest(c, msg);
    else if (msg.type === "grant_result") {
      if (!grants.settle(msg)) log.warn("tabwarden: ignoring a grant_result for no pending grant");
    } else if (msg.type === "host_reply") {
      if (!calls.settle(msg)) log.warn("tabwarden: ignoring a host_reply for no pending host_call");
    } else if (msg.type === "session_end") {
      if (typeof msg.session === "string" && msg.session !== "") onSessionEnd(msg.session, { closeTabs: msg.closeTabs === true });
    } else if (msg.type === "trust_changed") {
      if (c.phase === "ready") hook(() => onTrustChanged({ epoch: msg.epoch }));
    }
    else log.warn(`tabwarden: ignoring host message of type ${JSON.stringify(String(msg.type).slice(0, 32))}`);
  }

  /**
   * @param {Conn} c
   * @param {Record<string, unknown>} msg
   */
  function onWelcome(c, msg) {
    if (c.phase !== "awaiting_welcome") {
      log.warn("tabwarden: ignoring a repeated welcome");
      return;
    }
    c.hostProtocol = typeof msg.protocol === "number" ? msg.protocol : null;
    c.hostVersion = typeof msg.hostVersion === "string" ? msg.hostVersion : null;
    c.browser = typeof msg.browser === "string" ? msg.browser : null;
    if (msg.protocol === PROTOCOL_VERSION) {
      c.phase = "ready";
      connectedSince = wallNow === null ? null : wallNow();
      // A worker Chrome stopped never saw its own disconnect; the host remembers the one before it.
      const told = msg.lastDisconnect;
      const at = isPlainObject(told) ? told.at : undefined;
      if (lastDisconnect === null && isPlainObject(told) && typeof at === "number" && Number.isSafeInteger(at) && at > 0
        && typeof told.reason === "string" && /^[a-z_]{1,32}$/.test(told.reason)) {
        lastDisconnect = { at, reason: told.reason, welcomed: true };
      }
      hook(() => onWelcomeHook({ epoch: msg.epoch }));
    } else {
      c.phase = "mismatch";
      log.warn(`tabwarden: host speaks protocol ${String(msg.protocol)}, extension speaks ${PROTOCOL_VERSION}; not serving requests`);
    }
  }

  /**
   * @param {Conn} c
   * @param {Record<string, unknown>} msg
   */
  function onRequest(c, msg) {
    const checked = validateRequest(msg);
    const id = checked.ok ? checked.request.id : checked.id;
    const action = checked.ok ? checked.request.action : null;
    const who = checked.ok ? { session: checked.request.session, client: checked.request.client } : undefined;
    /** @param {import("./dispatch.js").Reply} reply */
    const answered = (reply) => {
      if (action !== null) hook(() => onAnsweredHook(action, reply, who));
    };
    if (c.phase !== "ready") {
      if (id === null) return;
      const why = c.phase === "mismatch"
        ? `host protocol ${String(c.hostProtocol)} is not ${PROTOCOL_VERSION}`
        : "request arrived before welcome";
      const reply = errorReply(id, CODE.PROTOCOL_MISMATCH, why);
      send(c, reply);
      answered(reply);
      return;
    }
    if (c.inFlight >= maxInFlight) {
      if (id !== null) {
        const reply = errorReply(id, CODE.BUSY, `more than ${maxInFlight} requests in flight`);
        send(c, reply);
        answered(reply);
      }
      return;
    }
    c.inFlight += 1;
    admit(msg)
      .then((verdict) => (verdict === null ? dispatcher.dispatch(msg)
        : id === null ? null : errorReply(id, verdict.code, verdict.message)))
      .then((reply) => {
        if (reply !== null) {
          sendReply(c, reply);
          answered(reply);
        }
      })
      .catch((err) => log.warn(`tabwarden: dispatch failed: ${describe(err)}`))
      .finally(() => {
        c.inFlight -= 1;
      });
  }

  /**
   * Ask the gate (if any) whether this request may be served now: null serves, a code refuses
   * (a gate that throws, or answers anything else, refuses with host_compromised).
   * @param {Record<string, unknown>} request
   * @returns {Promise<{code: string, message: string} | null>}
   */
  async function admit(request) {
    if (gate === null) return null;
    const compromised = { code: CODE.HOST_COMPROMISED, message: "the host did not prove it holds the key this browser pinned" };
    try {
      const verdict = await gate.admit(request);
      if (verdict === null) return null;
      if (verdict === CODE.HOST_COMPROMISED) return compromised;
      if (typeof verdict === "string") return { code: verdict, message: "refused by this browser" };
      if (isPlainObject(verdict) && typeof verdict.code === "string" && typeof verdict.message === "string") {
        return { code: verdict.code, message: verdict.message };
      }
      return compromised;
    } catch (err) {
      log.warn(`tabwarden: request gate failed: ${describe(err)}`);
      return compromised;
    }
  }

  /**
   * Post a reply unless its connection is gone. Over chunkBytes it goes as consecutive chunk
   * messages (posted back to back, so no other message interleaves); over maxMessageBytes it
   * becomes message_too_large.
   * @param {Conn} c
   * @param {import("./dispatch.js").Reply} reply
   */
  function sendReply(c, reply) {
    if (conn !== c) return; // the host that asked is gone; its ids mean nothing to the next one
    let text;
    try {
      text = JSON.stringify(reply);
    } catch {
      send(c, errorReply(reply.id, CODE.INTERNAL_ERROR, "reply could not be serialized"));
      return;
    }
    const size = utf8Length(text);
    if (size > maxMessageBytes) {
      send(c, errorReply(reply.id, CODE.MESSAGE_TOO_LARGE, `reply is ${size} bytes; limit is ${maxMessageBytes}`));
      return;
    }
    if (size <= chunkBytes) {
      send(c, reply);
      return;
    }
    for (const chunk of chunkReply(reply.id, text, chunkBytes)) {
      if (!send(c, chunk)) return;
    }
  }

  return {
    start() {
      stopped = false;
      if (conn !== null || reconnectTimer !== null) return;
      open();
    },

    wake() {
      if (stopped || conn !== null) return;
      cancelReconnect();
      open();
    },

    stop() {
      stopped = true;
      cancelReconnect();
      grants.rejectAll();
      calls.rejectAll();
      const c = conn;
      conn = null;
      if (c !== null) {
        try {
          c.port.disconnect();
        } catch {
          // already gone
        }
        hook(onClosedHook);
        noteDisconnect("stopped", null);
      }
    },

    snapshot() {
      /** @type {Phase} */
      let phase;
      if (stopped) phase = "stopped";
      else if (conn !== null) phase = conn.phase;
      else phase = reconnectTimer !== null ? "reconnect_wait" : "idle";
      return {
        phase,
        hostProtocol: conn?.hostProtocol ?? null,
        hostVersion: conn?.hostVersion ?? null,
        browser: conn?.browser ?? null,
        inFlight: conn?.inFlight ?? 0,
        reconnectInMs,
        connectedSince: conn?.phase === "ready" ? connectedSince : null,
        lastDisconnectAt: lastDisconnect?.at ?? null,
        lastDisconnectReason: lastDisconnect?.reason ?? null,
        lastDisconnectWelcomed: lastDisconnect?.welcomed ?? null,
      };
    },

    requestGrant(origin) {
      const c = conn;
      if (c === null || c.phase !== "ready") {
        return Promise.reject(new BridgeError(CODE.EXTENSION_NOT_CONNECTED, "the host is not connected"));
      }
      grantSeq += 1;
      const id = `grant-${grantSeq}`;
      const promise = grants.add(id);
      send(c, { type: "grant", id, kind: "origin", origin });
      return promise;
    },

    hostCall(action, args = {}) {
      const c = conn;
      if (c === null || c.phase !== "ready") {
        return Promise.reject(new BridgeError(CODE.EXTENSION_NOT_CONNECTED, "the host is not connected"));
      }
      callSeq += 1;
      const id = `call-${callSeq}`;
      const promise = calls.add(id);
      send(c, { type: "host_call", id, action, args });
      return promise;
    },
  };
}
