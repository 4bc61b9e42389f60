// pending.js — table of requests this side has sent and is awaiting replies for: matches replies
// by id, times each request out, and rejects everything on disconnect.
// Pure: no chrome; timers are injected. It must never resolve a request twice or keep a timer
// alive for a settled request.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { REASON_RE } from "../shared/presence-reasons.js";
import { isPlainObject } from "../shared/wire.js";

/**
 * @typedef {object} Timers
 * @property {(fn: () => void, ms: number) => unknown} setTimer
 * @property {(handle: unknown) => void} clearTimer
 */

/**
 * @typedef {object} PendingTable
 * @property {(id: string, timeoutMs?: number) => Promise<unknown>} add register a request id;
 *   resolves with the reply's `result`, rejects with a BridgeError (throws on duplicate id)
 * @property {(reply: unknown) => boolean} settle feed a `reply` message; false if its id is unknown
 * @property {(code?: string, message?: string) => number} rejectAll reject every pending
 *   request (default "extension_not_connected"); returns how many were rejected
 * @property {(id: string) => boolean} has
 * @property {() => number} size
 */

/**
 * @param {Timers & {defaultTimeoutMs?: number}} options
 * @returns {PendingTable}
 */
export function createPendingTable({ setTimer, clearTimer, defaultTimeoutMs = 30_000 }) {
  /** @type {Map<string, {resolve: (v: unknown) => void, reject: (e: Error) => void, timer: unknown}>} */
  const entries = new Map();

  /** @param {string} id */
  function take(id) {
    const entry = entries.get(id);
    if (!entry) return undefined;
    entries.delete(id);
    clearTimer(entry.timer);
    return entry;
  }

  return {
    add(id, timeoutMs = defaultTimeoutMs) {
      if (typeof id !== "string") throw new TypeError("pending: id must be a string");
      if (entries.has(id)) throw new Error(`pending: duplicate id ${JSON.stringify(id)}`);
      return new Promise((resolve, reject) => {
        const timer = setTimer(() => {
          if (take(id)) reject(new BridgeError(CODE.TIMEOUT, `no reply within ${timeoutMs} ms`));
        }, timeoutMs);
        entries.set(id, { resolve, reject, timer });
      });
    },

    settle(reply) {
      if (!isPlainObject(reply) || typeof reply.id !== "string") return false;
      const entry = take(reply.id);
      if (!entry) return false;
      if (reply.ok === true) {
        entry.resolve(reply.result);
      } else {
        const err = isPlainObject(reply.error) ? reply.error : {};
        const e = new BridgeError(String(err.code), typeof err.message === "string" ? err.message : "");
        if (typeof err.reason === "string" && REASON_RE.test(err.reason)) e.reason = err.reason;
        entry.reject(e);
      }
      return true;
    },

    rejectAll(code = CODE.EXTENSION_NOT_CONNECTED, message = "native port disconnected") {
      const ids = [...entries.keys()];
      for (const id of ids) take(id)?.reject(new BridgeError(code, message));
      return ids.length;
    },

    has: (id) => entries.has(id),
    size: () => entries.size,
  };
}
