// ownership.js — which MCP session owns which tab, and which window each session opens its tabs
// in. Pure: no chrome. It must never hand a tab to a second session (a tab id released on
// removal and later reused by Chrome belongs to nobody) and never let a session reach a tab it
// did not open through tab_open.

/**
 * @typedef {object} Ownership
 * @property {(session: string, tabId: number) => boolean} claim record that `session` opened
 *   `tabId`; false (and no change) when another session already owns it
 * @property {(tabId: number) => string | null} owner
 * @property {(tabId: number) => boolean} release forget the tab (it was closed)
 * @property {(session: string) => number[]} endSession forget the session's tabs and window;
 *   returns the tab ids it owned (the tabs themselves stay open)
 * @property {(session: string) => number[]} tabsOf
 * @property {(session: string) => number | null} windowOf
 * @property {(session: string, windowId: number) => void} setWindow
 * @property {(windowId: number) => void} forgetWindow the window was closed
 */

/** @returns {Ownership} */
export function createOwnership() {
  /** @type {Map<number, string>} */
  const ownerByTab = new Map();
  /** @type {Map<string, Set<number>>} */
  const tabsBySession = new Map();
  /** @type {Map<string, number>} */
  const windowBySession = new Map();

  /** @param {number} tabId */
  function release(tabId) {
    const session = ownerByTab.get(tabId);
    if (session === undefined) return false;
    ownerByTab.delete(tabId);
    const set = tabsBySession.get(session);
    set?.delete(tabId);
    if (set !== undefined && set.size === 0) tabsBySession.delete(session);
    return true;
  }

  return {
    claim(session, tabId) {
      if (typeof session !== "string" || session === "" || !Number.isInteger(tabId) || tabId < 0) {
        throw new TypeError("ownership: claim(session: non-empty string, tabId: integer >= 0)");
      }
      const current = ownerByTab.get(tabId);
      if (current !== undefined) return current === session;
      ownerByTab.set(tabId, session);
      let set = tabsBySession.get(session);
      if (set === undefined) tabsBySession.set(session, (set = new Set()));
      set.add(tabId);
      return true;
    },
    owner: (tabId) => ownerByTab.get(tabId) ?? null,
    release,
    endSession(session) {
      const ids = [...(tabsBySession.get(session) ?? [])];
      for (const id of ids) release(id);
      windowBySession.delete(session);
      return ids;
    },
    tabsOf: (session) => [...(tabsBySession.get(session) ?? [])],
    windowOf: (session) => windowBySession.get(session) ?? null,
    setWindow(session, windowId) {
      windowBySession.set(session, windowId);
    },
    forgetWindow(windowId) {
      for (const [session, id] of windowBySession) if (id === windowId) windowBySession.delete(session);
    },
  };
}
