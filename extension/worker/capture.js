// capture.js — the opt-in console and network tails of owned tabs (page_console, page_network):
// what the policy's consoleCapture / networkCapture let the extension record from the CDP events
// of the debugger it keeps on owned tabs (worker/debugger.js routes them here), in bounded rings per
// tab with per-tab and global byte budgets for response bodies. The network tail lists every
// request type Chrome reports (document, script, stylesheet, image, font, XHR, fetch, WebSocket
// handshakes...), each with its status, its failure (Chrome's net::ERR_ text, a blocked reason)
// and its timing; a body only for XHR/fetch responses. Pure: no chrome; the CDP sender,
// the domain hold and the clock are injected. It must never record anything while its policy
// key is off (the moment it learns the key went off it drops every buffer of that kind, before
// anything else, and stops the CDP domains), never keep a request header, a cookie, a response
// header or any auth value, never keep console text, a URL or a body unmasked (card-like numbers,
// JWTs, bearer tokens, secret-named values, secret query values), never answer an entry whose
// origin the policy does not approve (withheld, counted), and never let an event throw.

import { utf8Length } from "./chunking.js";
import { normaliseOrigin, originOf } from "../shared/origin.js";
import { maskText, maskUrl } from "./mask.js";
import { NO_POLICY } from "./policy.js";
import { isPlainObject } from "../shared/wire.js";

/** Most console entries kept per tab (the oldest go first). */
export const CONSOLE_RING = 200;
/** Most network entries kept per tab: beyond it the oldest is dropped (counted in `dropped`). */
export const NETWORK_RING = 500;
/** Most requests followed at once per tab before their response finished. */
export const MAX_PENDING = 500;
/** Longest console text kept (UTF-16 units), after masking. */
export const MAX_TEXT = 2000;
/** Longest URL kept, after masking. */
export const MAX_URL = 2048;
/** Largest response body kept (bytes of UTF-8 text); a larger one is `bodyOmitted: "too_large"`. */
export const BODY_CAP = 256 * 1024;
/** Body bytes kept per tab at once; beyond it, new bodies are `bodyOmitted: "budget"`. */
export const TAB_BODY_BUDGET = 2 * 1024 * 1024;
/** Body bytes kept across all tabs at once. */
export const GLOBAL_BODY_BUDGET = 8 * 1024 * 1024;
/** What Chrome is asked to buffer for getResponseBody (Network.enable). */
export const CHROME_BUFFER = Object.freeze({ maxTotalBufferSize: 16 * 1024 * 1024, maxResourceBufferSize: BODY_CAP * 4 });
/** The console levels recorded, and the request types (CDP ResourceType). */
export const LEVELS = Object.freeze(["error", "warning"]);
/**
 * The levels recorded besides, in a ring of their own (a chatty page's logs never push an error
 * out) and answered only when page_console asks for them (`levels`).
 */
export const OPT_IN_LEVELS = Object.freeze(["log", "info", "debug"]);
/** A console API call's level (CDP Runtime.consoleAPICalled `type`); null: not recorded. */
const API_LEVEL = new Map([["error", "error"], ["assert", "error"], ["warning", "warning"], ["log", "log"], ["dir", "log"],
  ["dirxml", "log"], ["table", "log"], ["trace", "log"], ["count", "log"], ["timeEnd", "log"], ["info", "info"], ["debug", "debug"]]);
/** A browser message's level (CDP Log.entryAdded `level`). */
const LOG_LEVEL = new Map([["error", "error"], ["warning", "warning"], ["info", "info"], ["verbose", "debug"]]);
/** The request types page_network lists (CDP Network.ResourceType), and the ones with a body. */
export const NETWORK_TYPES = Object.freeze(["Document", "Stylesheet", "Image", "Media", "Font", "Script", "TextTrack", "XHR", "Fetch",
  "Prefetch", "EventSource", "WebSocket", "Manifest", "SignedExchange", "Ping", "CSPViolationReport", "Preflight", "FedCM", "Other"]);
const BODY_TYPES = new Set(["XHR", "Fetch"]);
/** Why a body is not in an entry. */
export const OMITTED = Object.freeze({ TOO_LARGE: "too_large", BUDGET: "budget", BINARY: "binary", ORIGIN: "origin", UNAVAILABLE: "unavailable" });

// ---------------------------------------------------------------- masking

// What is kept is masked on arrival by worker/mask.js's rules (the one place they live), so nothing
// unmasked is ever held; worker/dispatch.js masks every reply again on its way out.

/**
 * A request URL as kept (worker/mask.js `maskUrl`), capped at MAX_URL; a WebSocket's (ws:, wss:)
 * masked by the same rules as its http(s) twin.
 * @param {unknown} url
 */
function keptUrl(url) {
  if (typeof url !== "string" || !/^wss?:/i.test(url)) return maskUrl(url, MAX_URL);
  const masked = maskUrl(httpTwin(url), MAX_URL);
  return masked.startsWith("http") ? `ws${masked.slice(4)}` : masked;
}

/** A ws: or wss: URL as its http: or https: twin (any other as it is). @param {unknown} url */
const httpTwin = (url) => (typeof url === "string" && /^wss?:/i.test(url) ? `http${url.slice(2)}` : url);

/** True for a MIME type whose body is text. @param {unknown} mime */
export function isTextMime(mime) {
  if (typeof mime !== "string") return false;
  const m = mime.toLowerCase().split(";")[0].trim();
  return m.startsWith("text/") || /[/+](json|xml|javascript|ecmascript|x-www-form-urlencoded|graphql)$/.test(m) || m === "application/x-ndjson";
}

/**
 * Whole milliseconds from CDP monotonic time `from` to `to` (seconds), or undefined when either
 * is unknown or they run backwards.
 * @param {unknown} from @param {unknown} to
 */
export function msBetween(from, to) {
  const a = Number(from);
  const b = Number(to);
  if (from === null || to === null || !Number.isFinite(a) || !Number.isFinite(b) || b < a) return undefined;
  return Math.round((b - a) * 1000);
}

/**
 * Milliseconds from a request's start (CDP monotonic seconds) until its response headers began
 * to arrive (CDP ResourceTiming: `requestTime` in seconds, the rest in ms after it), or undefined.
 * @param {number | null} start @param {unknown} timing
 */
export function ttfbOf(start, timing) {
  if (start === null || !isPlainObject(timing)) return undefined;
  const tm = /** @type {any} */ (timing);
  const began = Number(tm.requestTime);
  const begun = Number(tm.receiveHeadersStart);
  const at = Number.isFinite(begun) && begun > 0 ? begun : Number(tm.receiveHeadersEnd);
  if (!Number.isFinite(began) || began <= 0 || !Number.isFinite(at) || at < 0) return undefined;
  const ms = Math.round((began - start) * 1000 + at);
  return ms >= 0 ? ms : undefined;
}

// ---------------------------------------------------------------- CDP payloads → entries

/** One CDP RemoteObject as text. @param {any} arg */
function remoteText(arg) {
  if (!isPlainObject(arg)) return "";
  if (arg.type === "string") return String(arg.value ?? "");
  if (Object.hasOwn(arg, "value") && (arg.type === "number" || arg.type === "boolean")) return String(arg.value);
  if (typeof arg.unserializableValue === "string") return arg.unserializableValue;
  if (arg.type === "undefined") return "undefined";
  if (arg.subtype === "null") return "null";
  return typeof arg.description === "string" ? arg.description : String(arg.type ?? "");
}

/**
 * Console text as kept: cut long before masking (masking is linear, but a page may log
 * megabytes), the token the cut went through dropped whole, masked, then capped at MAX_TEXT.
 * @param {string} raw
 */
function keptText(raw) {
  const cut = raw.length > 2 * MAX_TEXT ? raw.slice(0, 2 * MAX_TEXT).replace(/\S*$/, "") : raw;
  const s = maskText(cut);
  return s.length > MAX_TEXT || cut !== raw ? `${s.slice(0, MAX_TEXT)}…` : s;
}

/**
 * The console entry a Runtime/Log event makes, without its origin (the caller resolves it), or
 * null when the event is not a console message of a recorded level (LEVELS, OPT_IN_LEVELS).
 * @param {string} method
 * @param {unknown} params
 * @returns {{ts: number, level: string, text: string, source: string, contextId?: number, url?: string} | null}
 */
export function consoleEntryOf(method, params) {
  if (!isPlainObject(params)) return null;
  const p = /** @type {any} */ (params);
  if (method === "Runtime.consoleAPICalled") {
    const level = API_LEVEL.get(String(p.type)) ?? null;
    if (level === null) return null;
    const args = Array.isArray(p.args) ? p.args : [];
    const text = (p.type === "assert" ? "Assertion failed: " : "") + args.map(remoteText).join(" ");
    return { ts: Math.trunc(Number(p.timestamp) || 0), level, text: keptText(text), source: "console", contextId: p.executionContextId };
  }
  if (method === "Runtime.exceptionThrown") {
    const d = isPlainObject(p.exceptionDetails) ? p.exceptionDetails : {};
    const head = typeof d.text === "string" ? d.text : "Uncaught";
    const desc = isPlainObject(d.exception) ? remoteText(d.exception) : "";
    const text = desc !== "" && !head.includes(desc) ? `${head} ${desc}` : head;
    return { ts: Math.trunc(Number(p.timestamp) || 0), level: "error", text: keptText(text), source: "exception", contextId: d.executionContextId };
  }
  if (method === "Log.entryAdded") {
    const e = isPlainObject(p.entry) ? p.entry : {};
    const level = LOG_LEVEL.get(String(e.level)) ?? null;
    if (level === null) return null;
    return { ts: Math.trunc(Number(e.timestamp) || 0), level, text: keptText(String(e.text ?? "")), source: "browser", url: typeof e.url === "string" ? e.url : "" };
  }
  return null;
}

// ---------------------------------------------------------------- the store

/**
 * @typedef {{ts: number, level: string, text: string, source: string, origin: string | null, seq?: number}} ConsoleEntry
 * @typedef {{durationMs?: number, ttfbMs?: number, failed?: string, blocked?: string, fromCache?: boolean}} Outcome
 * @typedef {Outcome & {id: number, ts: number, method: string, url: string, status: number, type: string, mimeType: string,
 *   size: number, origin: string | null, targetOrigin: string | null, body?: string, bodyBytes: number,
 *   bodyOmitted?: string, evicted?: boolean}} NetworkEntry
 * @typedef {{ts: number, start: number | null, method: string, url: string, type: string, origin: string | null,
 *   targetOrigin: string | null, status: number, mimeType: string, size: number, ttfbMs?: number, fromCache?: boolean}} Pending
 * @typedef {{consoleRing: ConsoleEntry[], verboseRing: ConsoleEntry[], seen: Set<string>, since: number, verboseSince: number, contexts: Map<number, string>,
 *   networkRing: NetworkEntry[], pending: Map<string, Pending>, bodyBytes: number, inflight: Set<Promise<void>>,
 *   nextId: number, dropped: number}} TabCapture
 */

/**
 * @typedef {object} CaptureDeps
 * @property {(tabId: number, method: string, params?: Record<string, unknown>) => Promise<any>} send
 *   one CDP command on an attached owned tab (rejects when it cannot)
 * @property {(tabId: number, domain: string, on: boolean) => void} hold keep a CDP domain enabled
 *   against other users' `.disable` (worker/debugger.js)
 * @property {() => number[]} attached the tabs with a debugger now
 * @property {() => number} now ms since the epoch
 * @property {{warn: (...a: unknown[]) => void}} [log]
 */

/**
 * The capture controller: learns the policy from every request (`observe`), enables the CDP
 * domains it needs on each attached tab (`attached`, and at a policy change), records events
 * (`event`), and answers the two tools (`console`, `network`).
 * @param {CaptureDeps} deps
 */
export function createCapture({ send, hold, attached, now, log = console }) {
  /** @type {Map<number, TabCapture>} */
  const tabs = new Map();
  /** When each kind's capture began (ms since the epoch), or null while it is off. */
  const began = { console: /** @type {number | null} */ (null), network: /** @type {number | null} */ (null) };
  /** The last policy seen (a body is fetched only for an approved target). */
  let policy = NO_POLICY;
  let globalBodyBytes = 0;
  /** The order console entries arrived in (page_console merges its two rings by it). */
  let arrived = 0;

  /** @param {number} tabId @returns {TabCapture} */
  function tab(tabId) {
    let t = tabs.get(tabId);
    if (t === undefined) {
      t = { consoleRing: [], verboseRing: [], seen: new Set(), since: 0, verboseSince: 0, contexts: new Map(), networkRing: [], pending: new Map(), bodyBytes: 0, inflight: new Set(), nextId: 0, dropped: 0 };
      tabs.set(tabId, t);
    }
    return t;
  }

  /** @param {TabCapture} t @param {number} bytes */
  function freeBody(t, bytes) {
    t.bodyBytes -= bytes;
    globalBodyBytes -= bytes;
  }

  function dropConsole() {
    for (const t of tabs.values()) {
      t.consoleRing.length = 0;
      t.verboseRing.length = 0;
      t.seen.clear();
      t.contexts.clear();
    }
  }

  function dropNetwork() {
    for (const t of tabs.values()) {
      t.networkRing.length = 0;
      t.pending.clear();
      t.inflight.clear();
      t.bodyBytes = 0;
      t.dropped = 0;
    }
    globalBodyBytes = 0;
  }

  /** @param {number} tabId @param {string} method @param {Record<string, unknown>} [params] */
  const quiet = (tabId, method, params) => send(tabId, method, params).catch((/** @type {unknown} */ err) => {
    log.warn(`tabwarden: capture could not send ${method} to tab ${tabId}`, String(err instanceof Error ? err.message : err).slice(0, 200));
  });

  /**
   * Enable what is on for one tab (after an attach, or when a key turned on).
   * @param {number} tabId
   * @param {{console: boolean, network: boolean}} which
   * @param {(tabId: number, method: string, params?: Record<string, unknown>) => Promise<any>} [via]
   */
  async function enable(tabId, which, via = send) {
    const jobs = [];
    const q = (/** @type {string} */ m, /** @type {Record<string, unknown>} */ p = {}) =>
      via(tabId, m, p).catch((/** @type {unknown} */ err) => log.warn(`tabwarden: capture could not send ${m} to tab ${tabId}`, String(err).slice(0, 200)));
    if (which.console) {
      hold(tabId, "Runtime", true);
      jobs.push(q("Runtime.enable"), q("Log.enable"));
    }
    if (which.network) jobs.push(q("Network.enable", { ...CHROME_BUFFER }));
    await Promise.all(jobs);
  }

  /** @param {number} tabId @param {{console: boolean, network: boolean}} which */
  function disable(tabId, which) {
    if (which.console) {
      hold(tabId, "Runtime", false);
      quiet(tabId, "Log.disable");
      quiet(tabId, "Runtime.disable");
    }
    if (which.network) quiet(tabId, "Network.disable");
  }

  /** @param {ConsoleEntry[]} ring @param {TabCapture} t @param {ConsoleEntry} e */
  function pushConsole(ring, t, e) {
    const key = `${e.source}|${e.ts}|${e.level}|${e.origin}|${e.text}`;
    if (t.seen.has(key)) return; // a replay (Runtime.enable / Log.enable report stored messages)
    t.seen.add(key);
    ring.push(e);
    while (ring.length > CONSOLE_RING) {
      const old = /** @type {ConsoleEntry} */ (ring.shift());
      t.seen.delete(`${old.source}|${old.ts}|${old.level}|${old.origin}|${old.text}`);
      // a later replay of an evicted one stays out (each ring keeps its own mark, so a chatty
      // page's logs going out never keep out an error of the same millisecond)
      if (ring === t.consoleRing) t.since = Math.max(t.since, old.ts + 1);
      else t.verboseSince = Math.max(t.verboseSince, old.ts + 1);
    }
  }

  /**
   * An entry takes the next id of its tab and its place in the ring; the oldest beyond
   * NETWORK_RING is dropped (its body bytes freed) and counted.
   * @param {TabCapture} t @param {Omit<NetworkEntry, "id">} fields
   * @returns {NetworkEntry}
   */
  function pushNetwork(t, fields) {
    const e = /** @type {NetworkEntry} */ ({ id: ++t.nextId, ...fields });
    t.networkRing.push(e);
    while (t.networkRing.length > NETWORK_RING) {
      const old = /** @type {NetworkEntry} */ (t.networkRing.shift());
      freeBody(t, old.bodyBytes);
      old.bodyBytes = 0;
      old.evicted = true;
      t.dropped += 1;
    }
    return e;
  }

  /**
   * The timing, failure and cache fields of a request that ended at CDP monotonic time `end`.
   * @param {Pending} r @param {unknown} end @param {Outcome} [more]
   * @returns {Outcome}
   */
  function outcome(r, end, more = {}) {
    /** @type {Outcome} */
    const o = {};
    const d = msBetween(r.start, end);
    if (d !== undefined) o.durationMs = d;
    if (r.ttfbMs !== undefined && (d === undefined || r.ttfbMs <= d)) o.ttfbMs = r.ttfbMs;
    if (r.fromCache === true) o.fromCache = true;
    return { ...o, ...more };
  }

  /**
   * A finished response: its entry takes its place in the ring at once; its body is fetched
   * when it is text, small enough, within both budgets and from an approved target.
   * @param {number} tabId
   * @param {TabCapture} t
   * @param {Pending} r
   * @param {string} requestId
   * @param {number} encoded
   * @param {unknown} end when it finished (CDP monotonic seconds)
   */
  function finished(tabId, t, r, requestId, encoded, end) {
    // The body's decoded bytes (dataReceived); the wire total (headers too) only when none came.
    const size = r.size > 0 ? r.size : Math.max(0, Math.trunc(Number(encoded) || 0));
    const fields = { ts: r.ts, method: r.method, url: r.url, status: r.status, type: r.type, mimeType: r.mimeType, size, origin: r.origin, targetOrigin: r.targetOrigin, bodyBytes: 0, ...outcome(r, end) };
    if (!BODY_TYPES.has(r.type)) {
      pushNetwork(t, fields); // metadata only: no body is ever asked for
      return;
    }
    /** @type {Omit<NetworkEntry, "id">} */
    const e = fields;
    if (!policy.approves(r.targetOrigin) || !policy.approves(r.origin)) e.bodyOmitted = OMITTED.ORIGIN;
    else if (!isTextMime(r.mimeType)) e.bodyOmitted = OMITTED.BINARY;
    else if (size > BODY_CAP) e.bodyOmitted = OMITTED.TOO_LARGE;
    else if (t.bodyBytes + size > TAB_BODY_BUDGET || globalBodyBytes + size > GLOBAL_BODY_BUDGET) e.bodyOmitted = OMITTED.BUDGET;
    // Reserve the bytes while Chrome answers, so two bodies cannot both fit one gap.
    if (e.bodyOmitted === undefined) {
      e.bodyBytes = size;
      t.bodyBytes += size;
      globalBodyBytes += size;
    }
    const kept = pushNetwork(t, e);
    if (kept.bodyOmitted !== undefined) return;
    const startedAt = began.network;
    const work = (async () => {
      let got;
      try {
        got = await send(tabId, "Network.getResponseBody", { requestId });
      } catch {
        got = null;
      }
      // Dropped meanwhile (capture off, or on again: a new capture; the tab forgotten; the ring
      // moved on): its bytes are already free and nothing is kept.
      if (began.network !== startedAt || tabs.get(tabId) !== t || kept.evicted === true) return;
      freeBody(t, kept.bodyBytes);
      kept.bodyBytes = 0;
      if (!isPlainObject(got) || typeof got.body !== "string") kept.bodyOmitted = OMITTED.UNAVAILABLE;
      else if (got.base64Encoded === true) kept.bodyOmitted = OMITTED.BINARY;
      else {
        const body = maskText(got.body);
        const bytes = utf8Length(body);
        if (bytes > BODY_CAP) kept.bodyOmitted = OMITTED.TOO_LARGE;
        else if (t.bodyBytes + bytes > TAB_BODY_BUDGET || globalBodyBytes + bytes > GLOBAL_BODY_BUDGET) kept.bodyOmitted = OMITTED.BUDGET;
        else {
          kept.body = body;
          kept.bodyBytes = bytes;
          t.bodyBytes += bytes;
          globalBodyBytes += bytes;
        }
      }
    })();
    t.inflight.add(work);
    work.finally(() => t.inflight.delete(work));
  }

  /**
   * A request Chrome is about to send (a WebSocket's handshake too), followed until it ends.
   * @param {TabCapture} t @param {string} requestId
   * @param {{wallTime: unknown, start: unknown, method: unknown, url: unknown, type: string, doc: string | null}} r
   */
  function follow(t, requestId, r) {
    const wall = Number(r.wallTime);
    const ts = Number.isFinite(wall) && wall > 0 ? Math.trunc(wall * 1000) : now();
    if (began.network === null || ts < began.network) return;
    const start = Number(r.start);
    t.pending.set(requestId, {
      ts,
      start: Number.isFinite(start) ? start : null,
      method: String(r.method ?? "GET").slice(0, 16),
      url: keptUrl(r.url),
      type: r.type,
      origin: r.doc,
      targetOrigin: originOf(httpTwin(r.url)),
      status: 0,
      mimeType: "",
      size: 0,
    });
    while (t.pending.size > MAX_PENDING) t.pending.delete(/** @type {string} */ (t.pending.keys().next().value));
  }

  /** A response's status, MIME type, cache and time to first byte. @param {Pending} r @param {any} response */
  function responded(r, response) {
    // Status, MIME type and timing only: response headers (Set-Cookie among them) are never read.
    r.status = Math.trunc(Number(response.status) || 0);
    r.mimeType = String(response.mimeType ?? "").slice(0, 100);
    if (response.fromDiskCache === true || response.fromPrefetchCache === true) r.fromCache = true;
    const ttfb = ttfbOf(r.start, response.timing);
    if (ttfb !== undefined) r.ttfbMs = ttfb;
  }

  /** A request that ended without a response body: its entry, with why. @param {TabCapture} t @param {Pending} r @param {unknown} end @param {Outcome} why */
  function ended(t, r, end, why) {
    const fields = { ts: r.ts, method: r.method, url: r.url, status: r.status, type: r.type, mimeType: r.mimeType, size: r.size,
      origin: r.origin, targetOrigin: r.targetOrigin, bodyBytes: 0, ...outcome(r, end, why) };
    pushNetwork(t, BODY_TYPES.has(r.type) ? { ...fields, bodyOmitted: OMITTED.UNAVAILABLE } : fields);
  }

  /** @param {number} tabId @param {string} method @param {unknown} params */
  function networkEvent(tabId, method, params) {
    if (!isPlainObject(params) || typeof params.requestId !== "string") return;
    const p = /** @type {any} */ (params);
    const t = tab(tabId);
    if (method === "Network.requestWillBeSent") {
      if (!isPlainObject(p.request)) return;
      const hop = t.pending.get(p.requestId);
      // A redirect: the hop before it ends here with its 3xx status (a new hop follows).
      if (hop !== undefined && isPlainObject(p.redirectResponse)) {
        t.pending.delete(p.requestId);
        responded(hop, p.redirectResponse);
        ended(t, hop, p.timestamp, {});
      }
      const type = NETWORK_TYPES.includes(p.type) ? String(p.type) : "Other";
      // A document's request belongs to the document it loads (a frame of an unapproved site is
      // withheld whole, its address too); any other to the document that made it.
      const doc = type === "Document" ? originOf(p.request.url) : originOf(p.documentURL);
      // Only these fields of the request are read: never its headers, cookies or body.
      follow(t, p.requestId, { wallTime: p.wallTime, start: p.timestamp, method: p.request.method, url: p.request.url, type, doc });
      return;
    }
    if (method === "Network.webSocketCreated") {
      // No document URL here: the script that opened it stands for its document (none: withheld),
      // and it is answered only while the socket's own site is approved as well.
      const init = isPlainObject(p.initiator) ? p.initiator : {};
      const frames = isPlainObject(init.stack) && Array.isArray(init.stack.callFrames) ? init.stack.callFrames : [];
      const by = typeof init.url === "string" && init.url !== "" ? init.url : frames.map((/** @type {any} */ f) => f?.url).find((/** @type {unknown} */ u) => typeof u === "string" && u !== "");
      follow(t, p.requestId, { wallTime: null, start: null, method: "GET", url: p.url, type: "WebSocket", doc: originOf(by) });
      return;
    }
    const r = t.pending.get(p.requestId);
    if (r === undefined) return;
    if (method === "Network.webSocketWillSendHandshakeRequest") {
      const wall = Number(p.wallTime);
      if (Number.isFinite(wall) && wall > 0) r.ts = Math.trunc(wall * 1000);
      const start = Number(p.timestamp);
      if (Number.isFinite(start)) r.start = start;
    } else if (method === "Network.webSocketHandshakeResponseReceived" && isPlainObject(p.response)) {
      t.pending.delete(p.requestId);
      r.status = Math.trunc(Number(p.response.status) || 0);
      ended(t, r, p.timestamp, {});
    } else if (method === "Network.webSocketFrameError" || method === "Network.webSocketClosed") {
      t.pending.delete(p.requestId); // before its handshake was answered
      ended(t, r, p.timestamp, { failed: method === "Network.webSocketClosed" ? "closed" : String(p.errorMessage ?? "failed").slice(0, 100) });
    } else if (method === "Network.responseReceived" && isPlainObject(p.response)) {
      responded(r, p.response);
    } else if (method === "Network.requestServedFromCache") {
      r.fromCache = true;
    } else if (method === "Network.dataReceived") {
      r.size += Math.max(0, Math.trunc(Number(p.dataLength) || 0));
    } else if (method === "Network.loadingFinished") {
      t.pending.delete(p.requestId);
      finished(tabId, t, r, p.requestId, p.encodedDataLength, p.timestamp);
    } else if (method === "Network.loadingFailed") {
      t.pending.delete(p.requestId);
      /** @type {Outcome} */
      const why = { failed: String(p.canceled === true ? "canceled" : p.errorText ?? "failed").slice(0, 100) };
      // The reason's name only (CDP's enums): a CORS error's failed parameter is never read.
      if (typeof p.blockedReason === "string" && p.blockedReason !== "") why.blocked = p.blockedReason.slice(0, 60);
      else if (isPlainObject(p.corsErrorStatus) && typeof p.corsErrorStatus.corsError === "string") why.blocked = `cors:${p.corsErrorStatus.corsError.slice(0, 60)}`;
      ended(t, r, p.timestamp, why);
    }
  }

  /** @param {number} tabId @param {string} method @param {unknown} params */
  function consoleEvent(tabId, method, params) {
    const t = tab(tabId);
    const p = /** @type {any} */ (isPlainObject(params) ? params : {});
    if (method === "Runtime.executionContextCreated") {
      const c = isPlainObject(p.context) ? /** @type {any} */ (p.context) : null;
      if (c !== null && Number.isInteger(c.id)) {
        const o = typeof c.origin === "string" ? normaliseOrigin(c.origin) : null;
        if (o !== null) t.contexts.set(c.id, o);
        else t.contexts.delete(c.id);
      }
      return;
    }
    if (method === "Runtime.executionContextDestroyed") {
      t.contexts.delete(p.executionContextId);
      return;
    }
    if (method === "Runtime.executionContextsCleared") {
      t.contexts.clear();
      return;
    }
    const e = consoleEntryOf(method, p);
    if (e === null || began.console === null) return;
    // Since capture began (Runtime.enable and Log.enable replay what the page logged before).
    const opted = !LEVELS.includes(e.level);
    if (e.ts < began.console || e.ts < (opted ? t.verboseSince : t.since)) return;
    const origin = e.source === "browser" ? originOf(e.url) : Number.isInteger(e.contextId) ? t.contexts.get(/** @type {number} */ (e.contextId)) ?? null : null;
    pushConsole(opted ? t.verboseRing : t.consoleRing, t, { ts: e.ts, level: e.level, text: e.text, source: e.source, origin, seq: ++arrived });
  }

  return {
    /**
     * Learn the policy a request carries. A key that went off drops its buffers at once (before
     * this returns) and stops its CDP domains; one that went on begins capture on every attached
     * tab (awaited, so the call that carried it runs with capture on).
     * @param {import("./policy.js").Policy} next
     */
    async observe(next) {
      policy = next;
      const want = { console: next.allows("consoleCapture"), network: next.allows("networkCapture") };
      const off = { console: !want.console && began.console !== null, network: !want.network && began.network !== null };
      const on = { console: want.console && began.console === null, network: want.network && began.network === null };
      if (off.console) {
        began.console = null;
        dropConsole();
      }
      if (off.network) {
        began.network = null;
        dropNetwork();
      }
      if (off.console || off.network) for (const tabId of attached()) disable(tabId, off);
      if (on.console || on.network) {
        const at = now();
        if (on.console) began.console = at;
        if (on.network) began.network = at;
        await Promise.all(attached().map((tabId) => enable(tabId, on)));
      }
    },

    /**
     * The debugger was just attached to an owned tab: enable what is on (through `via`, the
     * attachment's own sender, since the attachment is not settled yet).
     * @param {number} tabId
     * @param {(tabId: number, method: string, params?: Record<string, unknown>) => Promise<any>} via
     */
    async attached(tabId, via) {
      const which = { console: began.console !== null, network: began.network !== null };
      if (which.console || which.network) await enable(tabId, which, via);
    },

    /**
     * One CDP event of an owned tab (never throws).
     * @param {number} tabId
     * @param {string} method
     * @param {unknown} params
     */
    event(tabId, method, params) {
      try {
        if (method.startsWith("Network.")) {
          if (began.network !== null) networkEvent(tabId, method, params);
        } else if (method.startsWith("Runtime.") || method === "Log.entryAdded") {
          if (began.console !== null) consoleEvent(tabId, method, params);
        }
      } catch (err) {
        log.warn("tabwarden: a capture event could not be recorded", String(err).slice(0, 200));
      }
    },

    /** The tab left its session or closed: drop what it had. @param {number} tabId */
    forget(tabId) {
      const t = tabs.get(tabId);
      if (t === undefined) return;
      globalBodyBytes -= t.bodyBytes;
      tabs.delete(tabId);
    },

    /**
     * page_console's answer for one tab: the newest `limit` entries of `level` and of the opt-in
     * `levels` (oldest first) whose origin `approves` approves; the rest withheld (counted).
     * `clear` empties the tab's rings.
     * @param {number} tabId
     * @param {{level: "error" | "warning" | "all", levels?: string[], limit: number, clear: boolean}} q
     * @param {(origin: string | null) => boolean} approves the call's policy's `approves`
     */
    console(tabId, { level, levels = [], limit, clear }, approves) {
      const t = tabs.get(tabId);
      const asked = t === undefined ? [] : t.consoleRing.filter((e) => level === "all" || e.level === level);
      const also = t === undefined || levels.length === 0 ? [] : t.verboseRing.filter((e) => levels.includes(e.level));
      // both rings hold entries in the order they arrived: merged by it
      const all = also.length === 0 ? asked : [...asked, ...also].sort((x, y) => (x.seq ?? 0) - (y.seq ?? 0));
      const shown = all.filter((e) => approves(e.origin));
      const entries = shown.slice(-limit).map(({ ts, level: l, text, source, origin }) => ({ ts, level: l, text, source, origin: /** @type {string} */ (origin) }));
      if (clear && t !== undefined) {
        // A later replay of a cleared entry stays out.
        for (const e of t.consoleRing) t.since = Math.max(t.since, e.ts + 1);
        for (const e of t.verboseRing) t.verboseSince = Math.max(t.verboseSince, e.ts + 1);
        t.consoleRing.length = 0;
        t.verboseRing.length = 0;
        t.seen.clear();
      }
      return { enabled: began.console !== null, entries, withheld: all.length - shown.length, more: shown.length - entries.length };
    },

    /**
     * page_network's answer for one tab: the finished and failed requests whose (masked) URL
     * contains `url`, of `types` (all when null), only the failed ones (no response, or 4xx/5xx)
     * with `failedOnly`, after entry `sinceId` when given; from documents whose origin `approves`
     * approves (the rest withheld, counted). Without `sinceId` the newest `limit` (`more`: older
     * ones left out); with it the oldest `limit` after it (`more`: newer ones left, to page on
     * from the last id). `dropped` counts what the ring dropped since capture began or the last
     * `clear`. A body (XHR/fetch) only while its target's origin is approved too. Bodies Chrome
     * is still being asked for are waited for (each ask is bounded by `send`).
     * @param {number} tabId
     * @param {{url: string | null, limit: number, clear: boolean, types?: string[] | null, failedOnly?: boolean, sinceId?: number | null, bodies?: boolean}} q
     * @param {(origin: string | null) => boolean} approves the call's policy's `approves`
     */
    async network(tabId, { url, limit, clear, types = null, failedOnly = false, sinceId = null, bodies = false }, approves) {
      const before = tabs.get(tabId);
      if (before !== undefined) await Promise.all([...before.inflight]);
      const t = tabs.get(tabId);
      const all = t === undefined ? [] : t.networkRing.filter((e) => (url === null || e.url.includes(url))
        && (types === null || types.includes(e.type))
        && (!failedOnly || e.failed !== undefined || e.status >= 400)
        && (sinceId === null || e.id > sinceId));
      // A WebSocket's document is not known (see webSocketCreated): its own site must be approved too.
      const shown = all.filter((e) => approves(e.origin) && (e.type !== "WebSocket" || approves(e.targetOrigin)));
      const picked = sinceId === null ? shown.slice(-limit) : shown.slice(0, limit);
      const entries = picked.map((e) => {
        /** @type {Record<string, unknown>} */
        const out = { id: e.id, ts: e.ts, method: e.method, url: e.url, status: e.status, type: e.type, mimeType: e.mimeType, size: e.size, origin: e.origin };
        for (const k of /** @type {const} */ (["durationMs", "ttfbMs", "failed", "blocked", "fromCache"])) if (e[k] !== undefined) out[k] = e[k];
        if (!bodies || !BODY_TYPES.has(e.type)) return out; // metadata only unless bodies are asked for
        if (e.body !== undefined && approves(e.targetOrigin)) out.body = e.body;
        else out.bodyOmitted = e.body !== undefined ? OMITTED.ORIGIN : e.bodyOmitted ?? OMITTED.UNAVAILABLE;
        return out;
      });
      const dropped = t === undefined ? 0 : t.dropped;
      if (clear && t !== undefined) {
        for (const e of t.networkRing) {
          freeBody(t, e.bodyBytes);
          e.bodyBytes = 0;
          e.evicted = true;
        }
        t.networkRing.length = 0;
        t.dropped = 0;
      }
      return { enabled: began.network !== null, entries, withheld: all.length - shown.length, more: shown.length - entries.length, dropped };
    },

    /** Body bytes held, per tab and in all (for tests and the worker console). */
    usage: () => ({ global: globalBodyBytes, tabs: Object.fromEntries([...tabs].map(([id, t]) => [id, t.bodyBytes])) }),
  };
}

/** @typedef {ReturnType<typeof createCapture>} Capture */
