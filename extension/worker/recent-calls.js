// recent-calls.js — a small ring buffer of the host requests the worker answered, for the popup:
// {action, client?, ok, code?, at} per request (client: the paired label the host named), newest last, at most RECENT_MAX, kept in
// memory and mirrored to chrome.storage.session (worker/mirror.js: survives worker restarts, not
// browser restarts; a call's answer never waits on the write). Pure: storage, the timer and the
// clock are injected. It must never store a request's args or a reply's result or message — only
// the action name, the client's label, the outcome and the error code.

import { CODE } from "../shared/error-codes.js";
import { createMirror } from "./mirror.js";
import { isPlainObject } from "../shared/wire.js";

export const RECENT_MAX = 20;
export const RECENT_STORAGE_KEY = "recentCalls";
const MAX_NAME = 64;

/** @typedef {{action: string, client?: string, ok: boolean, code?: string, at: number}} RecentCall */

/**
 * The entry for one answered request (reply: a dispatch.js Reply).
 * @param {unknown} action
 * @param {unknown} reply
 * @param {number} at
 * @param {unknown} [client] the requesting client's label (dispatch.js already checked its shape)
 * @returns {RecentCall}
 */
export function recentEntry(action, reply, at, client) {
  const ok = isPlainObject(reply) && reply.ok === true;
  /** @type {RecentCall} */
  const entry = { action: typeof action === "string" ? action.slice(0, MAX_NAME) : "?", ok, at };
  if (typeof client === "string" && client !== "") entry.client = client.slice(0, MAX_NAME);
  if (!ok) {
    const error = isPlainObject(reply) && isPlainObject(reply.error) ? reply.error : null;
    entry.code = error !== null && typeof error.code === "string" ? error.code.slice(0, MAX_NAME) : CODE.INTERNAL_ERROR;
  }
  return entry;
}

/**
 * True for an entry of the shape recentEntry writes (anything else in storage is dropped).
 * @param {unknown} e
 * @returns {e is RecentCall}
 */
function isRecentCall(e) {
  return isPlainObject(e) && typeof e.action === "string" && typeof e.ok === "boolean" && typeof e.at === "number"
    && (e.code === undefined || typeof e.code === "string") && (e.client === undefined || typeof e.client === "string");
}

/**
 * @param {{storageGet: (key: string) => Promise<unknown>, storageSet: (key: string, value: unknown) => Promise<void>,
 *   now: () => number, setTimer?: (fn: () => void, ms: number) => unknown, max?: number,
 *   log?: {warn: (...a: unknown[]) => void}}} deps
 */
export function createRecentCalls({ storageGet, storageSet, now, setTimer = (fn, ms) => setTimeout(fn, ms), max = RECENT_MAX, log = console }) {
  /** Changes to the list, one after another. */
  let chain = Promise.resolve();
  /** The list, read from storage once per worker start (only this worker writes it), then kept
   * here and mirrored back at most once per interval. @type {Promise<RecentCall[]> | null} */
  let kept = null;
  const current = () => (kept ??= load());
  const mirror = createMirror({
    write: async () => storageSet(RECENT_STORAGE_KEY, [...(await current())]), setTimer, log, what: "recent calls",
  });

  /** @returns {Promise<RecentCall[]>} */
  async function load() {
    try {
      const stored = await storageGet(RECENT_STORAGE_KEY);
      return Array.isArray(stored) ? stored.filter(isRecentCall).slice(-max) : [];
    } catch {
      return [];
    }
  }

  return {
    /**
     * Record one answered request.
     * @param {unknown} action
     * @param {unknown} reply
     * @param {unknown} [client] the requesting client's label
     * @returns {Promise<void>} settles once listed (never rejects); stored within the mirror's interval
     */
    record(action, reply, client) {
      const entry = recentEntry(action, reply, now(), client);
      chain = chain.then(async () => {
        const list = await current();
        list.push(entry);
        if (list.length > max) list.splice(0, list.length - max);
        mirror.changed();
      }).catch((err) => log.warn("tabwarden: could not record a recent call", err));
      return chain;
    },
    /** @returns {Promise<RecentCall[]>} oldest first */
    list: () => chain.then(current).then((list) => [...list]),
    /** Settles once the writes started so far have ended. */
    stored: () => chain.then(mirror.settled),
  };
}
