// ownership.js — which MCP session owns which tab, which window each session opens its tabs in,
// which tabs are orphans (their session ended) and which the person has looked at. Pure: no
// chrome; the caller persists `snapshot()` (chrome.storage.session, so it survives a worker
// restart) through the injected `save`, and restores it with `load` at worker start. It must
// never hand a tab to a second session (a tab id released on removal and later reused by Chrome
// belongs to nobody; a stored tab that no longer exists is dropped at load), never let a session
// reach a tab it did not open through tab_open or that one of its own tabs did not open
// (worker/popups.js claims those), and never let anyone drive an orphan.

/** Most tabs a snapshot may restore (far above any policy's maxAgentTabs). */
export const MAX_RESTORED = 1000;
const MAX_SESSION = 200;

/**
 * One agent tab as the lifecycle lists it.
 * @typedef {{tabId: number, session: string, openedAt: number, orphanedAt: number | null,
 *   viewed: boolean}} AgentTab
 */

/**
 * What `snapshot()` returns and `load` accepts (plain JSON).
 * @typedef {{v: 1, tabs: AgentTab[], windows: Array<[string, number]>}} OwnershipSnapshot
 */

/**
 * @typedef {object} Ownership
 * @property {(session: string, tabId: number) => boolean} claim record that `session` opened
 *   `tabId`; false (and no change) when another session (or an orphan) already holds it
 * @property {(tabId: number) => string | null} owner the live session driving the tab; null
 *   for a tab nobody owns and for an orphan (nobody may drive it)
 * @property {(tabId: number) => boolean} release forget the tab (it was closed)
 * @property {(session: string) => number[]} endSession the session ended: its tabs become
 *   orphans (they stay open) and its window is forgotten; returns the tab ids
 * @property {(session: string) => number[]} tabsOf the session's live (not orphaned) tabs
 * @property {(session: string) => number | null} windowOf
 * @property {(session: string, windowId: number) => void} setWindow
 * @property {(windowId: number) => void} forgetWindow the window was closed
 * @property {(tabId: number) => boolean} markViewed the person looked at the tab; true when
 *   that is news
 * @property {() => AgentTab[]} agentTabs every agent tab (live and orphaned), oldest first
 * @property {() => number[]} evictable orphans the person never looked at, oldest orphan first
 * @property {() => string[]} liveSessions sessions holding at least one live tab
 * @property {(tabId: number) => boolean} isOrphan
 * @property {() => OwnershipSnapshot} snapshot
 * @property {(snapshot: unknown, existingTabIds: Iterable<number>) => number} load restore a
 *   snapshot, keeping only tabs that still exist (and none already known); returns how many
 */

/**
 * @param {{save?: (snapshot: OwnershipSnapshot) => void, now?: () => number}} [options]
 * @returns {Ownership}
 */
export function createOwnership({ save = () => {}, now = () => Date.now() } = {}) {
  /** @type {Map<number, AgentTab>} */
  const tabs = new Map();
  /** @type {Map<string, number>} */
  const windowBySession = new Map();

  function snapshot() {
    return /** @type {OwnershipSnapshot} */ ({
      v: 1, tabs: [...tabs.values()].map((t) => ({ ...t })), windows: [...windowBySession],
    });
  }
  const changed = () => save(snapshot());

  /** @param {number} tabId */
  function release(tabId) {
    if (!tabs.delete(tabId)) return false;
    changed();
    return true;
  }

  /** @param {string} session */
  const liveOf = (session) => [...tabs.values()].filter((t) => t.session === session && t.orphanedAt === null);

  return {
    claim(session, tabId) {
      if (typeof session !== "string" || session === "" || !Number.isInteger(tabId) || tabId < 0) {
        throw new TypeError("ownership: claim(session: non-empty string, tabId: integer >= 0)");
      }
      const current = tabs.get(tabId);
      if (current !== undefined) return current.session === session && current.orphanedAt === null;
      tabs.set(tabId, { tabId, session, openedAt: now(), orphanedAt: null, viewed: false });
      changed();
      return true;
    },
    owner(tabId) {
      const t = tabs.get(tabId);
      return t === undefined || t.orphanedAt !== null ? null : t.session;
    },
    release,
    endSession(session) {
      const ended = liveOf(session);
      const at = now();
      for (const t of ended) t.orphanedAt = at;
      const hadWindow = windowBySession.delete(session);
      if (ended.length > 0 || hadWindow) changed();
      return ended.map((t) => t.tabId);
    },
    tabsOf: (session) => liveOf(session).map((t) => t.tabId),
    windowOf: (session) => windowBySession.get(session) ?? null,
    setWindow(session, windowId) {
      windowBySession.set(session, windowId);
      changed();
    },
    forgetWindow(windowId) {
      let any = false;
      for (const [session, id] of windowBySession) {
        if (id === windowId) {
          windowBySession.delete(session);
          any = true;
        }
      }
      if (any) changed();
    },
    markViewed(tabId) {
      const t = tabs.get(tabId);
      if (t === undefined || t.viewed) return false;
      t.viewed = true;
      changed();
      return true;
    },
    agentTabs: () => [...tabs.values()].sort((a, b) => a.openedAt - b.openedAt).map((t) => ({ ...t })),
    evictable: () => [...tabs.values()]
      .filter((t) => t.orphanedAt !== null && !t.viewed)
      .sort((a, b) => /** @type {number} */ (a.orphanedAt) - /** @type {number} */ (b.orphanedAt) || a.openedAt - b.openedAt)
      .map((t) => t.tabId),
    liveSessions: () => [...new Set([...tabs.values()].filter((t) => t.orphanedAt === null).map((t) => t.session))],
    isOrphan: (tabId) => tabs.get(tabId)?.orphanedAt != null,
    snapshot,
    load(stored, existingTabIds) {
      const exists = new Set(existingTabIds);
      const record = /** @type {any} */ (stored);
      if (record === null || typeof record !== "object" || record.v !== 1) return 0;
      let restored = 0;
      const list = Array.isArray(record.tabs) ? record.tabs.slice(0, MAX_RESTORED) : [];
      for (const t of list) {
        const entry = parseTab(t);
        // A tab that is gone (or whose id Chrome may have reused) is nobody's; a tab already
        // known since the worker started keeps what it has.
        if (entry === null || !exists.has(entry.tabId) || tabs.has(entry.tabId)) continue;
        tabs.set(entry.tabId, entry);
        restored += 1;
      }
      const windows = Array.isArray(record.windows) ? record.windows.slice(0, MAX_RESTORED) : [];
      for (const pair of windows) {
        if (!Array.isArray(pair) || !validSession(pair[0]) || !Number.isInteger(pair[1])) continue;
        // Only a session with a live tab still has a window worth reusing.
        if (!windowBySession.has(pair[0]) && liveOf(pair[0]).length > 0) windowBySession.set(pair[0], pair[1]);
      }
      changed();
      return restored;
    },
  };
}

/** @param {unknown} s */
const validSession = (s) => typeof s === "string" && s.length > 0 && s.length <= MAX_SESSION;
/** @param {unknown} n */
const validTime = (n) => typeof n === "number" && Number.isFinite(n) && n >= 0;

/**
 * A stored tab entry, or null when any field is malformed.
 * @param {unknown} raw
 * @returns {AgentTab | null}
 */
function parseTab(raw) {
  if (raw === null || typeof raw !== "object") return null;
  const t = /** @type {Record<string, unknown>} */ (raw);
  if (!Number.isInteger(t.tabId) || /** @type {number} */ (t.tabId) < 0 || !validSession(t.session)) return null;
  if (!validTime(t.openedAt) || !(t.orphanedAt === null || validTime(t.orphanedAt)) || typeof t.viewed !== "boolean") return null;
  return {
    tabId: /** @type {number} */ (t.tabId), session: /** @type {string} */ (t.session),
    openedAt: /** @type {number} */ (t.openedAt), orphanedAt: /** @type {number | null} */ (t.orphanedAt),
    viewed: t.viewed,
  };
}
