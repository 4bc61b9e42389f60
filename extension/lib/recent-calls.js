// recent-calls.js — a small ring buffer of the host requests the worker answered, for the popup:
// {action, client?, ok, code?, at} per request (client: the paired label the host named), newest last, at most RECENT_MAX, kept in
// chrome.storage.session (survives worker restarts, not browser restarts). Pure: storage and the
// clock are injected. It must never store a request's args or a reply's result or message — only
// the action name, the client's label, the outcome and the error code.

import { CODE } from "./error-codes.js";
import { isPlainObject } from "./wire.js";

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
 *   now: () => number, max?: number, log?: {warn: (...a: unknown[]) => void}}} deps
 */
export function createRecentCalls({ storageGet, storageSet, now, max = RECENT_MAX, log = console }) {
  /** Writes one after another. */
  let chain = Promise.resolve();
  /** The list, read from storage once per worker start (only this worker writes it), then kept
   * here: a call's record costs one storage write, not a read and a write. @type {Promise<RecentCall[]> | null} */
  let kept = null;
  const current = () => (kept ??= load());

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
     * @returns {Promise<void>} settles once stored (never rejects)
     */
    record(action, reply, client) {
      const entry = recentEntry(action, reply, now(), client);
      chain = chain.then(async () => {
        const list = await current();
        list.push(entry);
        if (list.length > max) list.splice(0, list.length - max);
        await storageSet(RECENT_STORAGE_KEY, [...list]);
      }).catch((err) => log.warn("tabwarden: could not record a recent call", err));
      return chain;
    },
    /** @returns {Promise<RecentCall[]>} oldest first */
    list: () => chain.then(current).then((list) => [...list]),
  };
}
