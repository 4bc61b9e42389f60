// session-clients.js — which paired client each session is, for the person's eyes: the label
// the host named on a session's requests (dispatch.js Context.client) and when it last called,
// so the popup's and options page's agent-tab rows say "claude-code, last call 17:42" instead of
// a raw session name. At most MAX_SESSIONS, least recently seen dropped first, kept in memory
// and mirrored to chrome.storage.session (worker/mirror.js: survives a worker restart; a call's
// answer never waits on the write). Pure: storage, the timer and the clock are injected.
// It must never decide anything (a label here grants nothing) and never store a request's args.

import { createMirror } from "./mirror.js";
import { isPlainObject } from "../shared/wire.js";

export const SESSION_CLIENTS_KEY = "sessionClients";
export const MAX_SESSIONS = 64;
const MAX_TEXT = 200;

/** @typedef {{client: string | null, lastAt: number}} SessionSeen */

/**
 * @param {{storageGet: (key: string) => Promise<unknown>, storageSet: (key: string, value: unknown) => Promise<void>,
 *   now: () => number, setTimer?: (fn: () => void, ms: number) => unknown, log?: {warn: (...a: unknown[]) => void}}} deps
 */
export function createSessionClients({ storageGet, storageSet, now, setTimer = (fn, ms) => setTimeout(fn, ms), log = console }) {
  let chain = Promise.resolve();
  /** The records, read from storage once per worker start (only this worker writes them), then
   * kept here and mirrored back at most once per interval. @type {Promise<Record<string, SessionSeen>> | null} */
  let kept = null;
  const current = () => (kept ??= load());
  const mirror = createMirror({
    write: async () => storageSet(SESSION_CLIENTS_KEY, { ...(await current()) }), setTimer, log, what: "sessions' clients",
  });

  /** @returns {Promise<Record<string, SessionSeen>>} */
  async function load() {
    let stored;
    try {
      stored = await storageGet(SESSION_CLIENTS_KEY);
    } catch {
      return {};
    }
    /** @type {Record<string, SessionSeen>} */
    const out = {};
    if (!isPlainObject(stored)) return out;
    for (const [session, v] of Object.entries(stored)) {
      if (isPlainObject(v) && typeof v.lastAt === "number" && (v.client === null || typeof v.client === "string")) {
        out[session] = { client: v.client, lastAt: v.lastAt };
      }
    }
    return out;
  }

  return {
    /**
     * A session's request was answered.
     * @param {unknown} session
     * @param {unknown} client
     * @returns {Promise<void>} never rejects
     */
    seen(session, client) {
      if (typeof session !== "string" || session === "" || session.length > MAX_TEXT) return chain;
      const entry = { client: typeof client === "string" && client !== "" ? client.slice(0, MAX_TEXT) : null, lastAt: now() };
      chain = chain.then(async () => {
        const all = await current();
        delete all[session];
        all[session] = entry;
        const over = Object.keys(all).length - MAX_SESSIONS;
        if (over > 0) {
          for (const [name] of Object.entries(all).sort((a, b) => a[1].lastAt - b[1].lastAt).slice(0, over)) delete all[name];
        }
        mirror.changed();
      }).catch((err) => log.warn("tabwarden: could not record a session's client", err));
      return chain;
    },
    /** @returns {Promise<Map<string, SessionSeen>>} */
    snapshot: () => chain.then(current).then((all) => new Map(Object.entries(all))),
    /** Settles once the writes started so far have ended. */
    stored: () => chain.then(mirror.settled),
  };
}
