// popups.js — tabs that an owned tab opens (a link with target=_blank, window.open): they join the
// opener's session as if it had opened them with tab_open (ownership, kept from discarding,
// counted under the agent-tab cap — orphans are evicted to make room as for tab_open — and the
// debugger attached), and the action that caused one can wait for it and report it (`newTab`).
// Fed by chrome.webNavigation.onCreatedNavigationTarget (background.js forwards it). Pure: no
// chrome; ownership, the lifecycle and the debugger attach are injected. It must never let a tab
// join whose opener no live session owns (a person's tab, or an orphan: its popups stay the
// person's), never hand a tab to a second session (ownership.claim refuses), and never go over
// the cap (a popup that finds no room stays unowned: nobody can drive it).

import { NO_POLICY } from "./policy.js";

/**
 * One tab that joined a session this way.
 * @typedef {{id: number, url: string, opener: number, session: string}} JoinedTab
 */

/**
 * @typedef {object} Popups
 * @property {(openerTabId: unknown, tabId: unknown, url: unknown) => Promise<JoinedTab | null>} created
 *   a tab was opened by (a frame of) `openerTabId`; the joined tab, or null when it did not join
 * @property {(openerTabId: number, policy: import("./policy.js").Policy) => PopupWatch} watch arm before an action that
 *   may open a tab; `policy` (the call's) is also the cap later popups of that session are held to
 * @property {(tabId: number) => void} removed tabs.onRemoved
 */

/**
 * @typedef {object} PopupWatch
 * @property {Promise<JoinedTab>} promise the first tab that joins from the opener while armed
 * @property {() => JoinedTab | null} seen that tab, if one joined already
 * @property {() => void} cancel disarm (the promise then never settles)
 */

/**
 * @param {{ownership: import("./ownership.js").Ownership,
 *   lifecycle: Pick<import("./tab-lifecycle.js").TabLifecycle, "makeRoom" | "claimed">,
 *   attach: (session: string, tabId: number) => Promise<unknown>,
 *   mute?: (tabId: number) => Promise<unknown>,
 *   log?: {warn: (...a: unknown[]) => void}}} deps
 * @returns {Popups}
 */
export function createPopups({ ownership, lifecycle, attach, mute, log = console }) {
  /** openerTabId -> armed watches. @type {Map<number, Set<{take: (t: JoinedTab) => void}>>} */
  const watching = new Map();
  /** session -> the policy of its latest armed call (the cap its popups are held to). */
  /** @type {Map<string, import("./policy.js").Policy>} */
  const policyOf = new Map();

  return {
    async created(openerTabId, tabId, url) {
      if (!Number.isInteger(openerTabId) || !Number.isInteger(tabId) || /** @type {number} */ (tabId) < 0) return null;
      const opener = /** @type {number} */ (openerTabId);
      const id = /** @type {number} */ (tabId);
      const session = ownership.owner(opener);
      if (session === null) return null; // a person's tab (or an orphan): its popups are the person's
      try {
        await lifecycle.makeRoom(policyOf.get(session) ?? NO_POLICY);
      } catch (err) {
        log.warn(`tabwarden: tab ${id}, opened by agent tab ${opener}, did not join its session (the agent-tab cap)`, err);
        return null;
      }
      // The opener may have left the session while room was made; a tab already owned stays so.
      if (ownership.owner(opener) !== session || !ownership.claim(session, id)) return null;
      await lifecycle.claimed(id);
      // Muted as a tab_open tab is, unless the session's policy says agentTabsAudible (a popup
      // whose opener armed no watch is held to no policy: muted).
      if (mute && !(policyOf.get(session) ?? NO_POLICY).allows("agentTabsAudible")) {
        await mute(id).catch((err) => log.warn(`tabwarden: could not mute the new agent tab ${id}`, err));
      }
      try {
        await attach(session, id);
      } catch (err) {
        log.warn(`tabwarden: could not attach the debugger to the new tab ${id}`, err);
      }
      /** @type {JoinedTab} */
      const joined = { id, url: typeof url === "string" ? url : "", opener, session };
      for (const w of [...(watching.get(opener) ?? [])]) w.take(joined);
      return joined;
    },

    watch(openerTabId, policy) {
      const session = ownership.owner(openerTabId);
      if (session !== null) policyOf.set(session, policy);
      /** @type {JoinedTab | null} */
      let got = null;
      /** @type {(t: JoinedTab) => void} */
      let resolve = () => {};
      /** @type {Promise<JoinedTab>} */
      const promise = new Promise((r) => { resolve = r; });
      const entry = {
        take: (/** @type {JoinedTab} */ t) => {
          if (got !== null) return;
          got = t;
          resolve(t);
        },
      };
      const set = watching.get(openerTabId) ?? new Set();
      set.add(entry);
      watching.set(openerTabId, set);
      return {
        promise,
        seen: () => got,
        cancel() {
          set.delete(entry);
          if (set.size === 0 && watching.get(openerTabId) === set) watching.delete(openerTabId);
        },
      };
    },

    removed(tabId) {
      watching.delete(tabId);
    },
  };
}
