// tab-lifecycle.js — what happens to agent tabs around their session: ending a session (its tabs
// kept as orphans, or closed when the policy says closeTabsOnSessionEnd), the sweep that ends
// sessions whose MCP process died while no host watched (host_call sessions_alive), the agent-tab
// list the popup, the options page and `tabwarden tabs` show (origin and masked title only), the
// one-click close of orphans, the cap on open agent tabs (tab_open evicts the oldest orphan the
// person never looked at), the "person looked at it" mark (tabs.onActivated of any tab but the
// ones the agent's own tab operations activate), and keeping driven tabs from being discarded
// (autoDiscardable). Pure: the
// browser calls, ownership, host call and timers are injected. It must never close a tab that is
// not an agent tab, never evict a live session's tab or one the person looked at, and never put
// a URL path or an unmasked title into a list.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { maskCards } from "./redact.js";
import { isPlainObject } from "../shared/wire.js";

/** chrome.storage.session key of the persisted ownership (worker/ownership.js snapshot). */
export const AGENT_TABS_KEY = "agentTabs";
/**
 * After an agent tab operation, an activation of the tab it activated (the tab it created, the
 * new window's tab, the tab it made active) is still the agent's doing for this long. Any other
 * tab the person activates in that time is the person's.
 */
export const SETTLE_MS = 500;
/** Longest title a list shows. */
const MAX_TITLE = 200;

/**
 * The agent's tab operations, and which tabs each one makes active (from its arguments and its
 * answer): those activations are the agent's, not the person looking. Closing a tab activates a
 * neighbour, which Chrome reports before it answers (so while the call runs); focusing a window
 * activates no tab.
 * @type {ReadonlyArray<[string, (args: any[], result: any) => number[]]>}
 */
const AGENT_ACTIVATES = Object.freeze([
  ["createTab", (args, tab) => (args[0]?.active === false ? [] : [tab?.id])],
  ["createWindow", (_args, win) => (Array.isArray(win?.tabs) ? win.tabs.map((/** @type {any} */ t) => t?.id) : [])],
  ["updateTab", (args) => (args[1]?.active === true ? [args[0]] : [])],
  ["removeTab", () => []],
  ["updateWindowProps", () => []],
]);

/**
 * One row of the agent-tab list (popup, options page, `tabwarden tabs`).
 * @typedef {{id: number, session: string, origin: string, title: string, orphaned: boolean,
 *   orphanedAt: number | null, viewed: boolean}} AgentTabRow
 */

/**
 * @typedef {object} LifecycleBrowser
 * @property {() => Promise<unknown[]>} queryAllTabs
 * @property {(tabId: number) => Promise<void>} removeTab
 * @property {(tabId: number, props: object) => Promise<any>} updateTab
 */

/**
 * @typedef {object} TabLifecycle
 * @property {(tabId: number) => void} activated chrome.tabs.onActivated
 * @property {<B extends object>(browser: B) => B} agentBrowser the browser calls handlers use,
 *   with tab creation, update and removal marked as the agent's (their activations are not the
 *   person's)
 * @property {(session: string, opts: {closeTabs: boolean}) => Promise<number[]>} sessionEnded
 * @property {(hostCall: (action: string, args: object) => Promise<any>) => Promise<string[]>} sweep
 *   ends the held sessions the host finds gone; returns their names
 * @property {() => Promise<AgentTabRow[]>} list every agent tab still open
 * @property {() => Promise<number>} closeOrphans closes every orphan; how many
 * @property {(tabId: number) => Promise<boolean>} closeOrphan closes one orphan (false: not one)
 * @property {(tabId: number) => Promise<boolean>} closeAgentTab the person closes one agent tab,
 *   live or orphaned, from the popup or the options page: closed and forgotten by its session
 *   (false: not an agent tab, so never the person's own)
 * @property {(policy: import("./policy.js").Policy) => Promise<number[]>} makeRoom before tab_open: closes orphans
 *   until below the cap; throws tab_limit when it cannot; returns the closed ids
 * @property {(tabId: number) => Promise<void>} claimed a tab became owned (kept from discarding)
 */

/**
 * @param {{ownership: import("./ownership.js").Ownership, browser: LifecycleBrowser,
 *   timers: import("./pending.js").Timers, onReleased?: (tabId: number) => void,
 *   log?: {warn: (...a: unknown[]) => void}}} deps
 * @returns {TabLifecycle}
 */
export function createTabLifecycle({ ownership, browser, timers, onReleased = () => {}, log = console }) {
  // Theory: Chrome reports an activation the agent caused before it answers the call that caused
  // it (a created tab, a closed tab's neighbour), so while an agent operation runs every
  // activation is the agent's; once it answered, only the tab it activated stays the agent's for
  // SETTLE_MS (a late report). A blanket "everything for SETTLE_MS after any agent operation"
  // lost the person's own activations: a person who clicked another tab within half a second of
  // any agent action (or while an agent worked steadily) was never seen looking.
  let agentOps = 0;
  /** @type {Map<number, number>} tab id → how many recent agent activations of it are pending */
  const agentActivated = new Map();

  /** @param {number} tabId */
  function expectActivation(tabId) {
    agentActivated.set(tabId, (agentActivated.get(tabId) ?? 0) + 1);
    timers.setTimer(() => {
      const n = (agentActivated.get(tabId) ?? 1) - 1;
      if (n > 0) agentActivated.set(tabId, n);
      else agentActivated.delete(tabId);
    }, SETTLE_MS);
  }

  /**
   * Run one agent tab operation; activations while it runs are the agent's, and so is a late one
   * of the tabs `activates(result)` names.
   * @template T
   * @param {() => Promise<T>} op
   * @param {(result: T) => number[]} [activates]
   * @returns {Promise<T>}
   */
  async function asAgent(op, activates = () => []) {
    agentOps += 1;
    try {
      const result = await op();
      for (const id of activates(result)) if (Number.isInteger(id)) expectActivation(id);
      return result;
    } finally {
      agentOps -= 1;
    }
  }

  /** @param {number} tabId */
  async function close(tabId) {
    try {
      await asAgent(() => browser.removeTab(tabId));
    } catch {
      // already gone
    } finally {
      ownership.release(tabId);
      onReleased(tabId);
    }
  }

  /** @param {number} tabId @param {boolean} keep */
  async function discardable(tabId, keep) {
    try {
      await browser.updateTab(tabId, { autoDiscardable: !keep });
    } catch (err) {
      log.warn(`tabwarden: could not set autoDiscardable on tab ${tabId}`, err);
    }
  }

  /** @type {TabLifecycle["sessionEnded"]} */
  async function sessionEnded(session, { closeTabs }) {
    const ids = ownership.endSession(session);
    for (const id of ids) {
      if (closeTabs) await close(id);
      else await discardable(id, false);
    }
    return ids;
  }

  async function list() {
    const open = await browser.queryAllTabs();
    /** @type {Map<number, Record<string, unknown>>} */
    const byId = new Map();
    for (const t of Array.isArray(open) ? open : []) {
      if (isPlainObject(t) && Number.isInteger(t.id)) byId.set(/** @type {number} */ (t.id), t);
    }
    /** @type {AgentTabRow[]} */
    const rows = [];
    for (const t of ownership.agentTabs()) {
      const tab = byId.get(t.tabId);
      if (tab === undefined) continue;
      const title = typeof tab.title === "string" ? tab.title.slice(0, MAX_TITLE) : "";
      rows.push({
        id: t.tabId, session: t.session,
        origin: originOf(typeof tab.url === "string" ? tab.url : "") ?? "",
        title: maskCards(title), orphaned: t.orphanedAt !== null, orphanedAt: t.orphanedAt, viewed: t.viewed,
      });
    }
    return rows;
  }

  return {
    activated(tabId) {
      // Chrome reports activations in the order it made them, and an agent operation's own
      // activation before the next operation's: once another tab was activated, a pending late
      // report for an earlier tab can no longer come, so that tab's next activation is the
      // person's (the person looking at the agent's first tab just after its second one opened).
      for (const id of [...agentActivated.keys()]) if (id !== tabId) agentActivated.delete(id);
      if (agentOps > 0 || agentActivated.has(tabId)) return;
      ownership.markViewed(tabId);
    },
    agentBrowser(b) {
      const real = /** @type {Record<string, any>} */ (b);
      /** @type {Record<string, any>} */
      const wrapped = { ...real };
      for (const [name, activates] of AGENT_ACTIVATES) {
        if (typeof real[name] === "function") {
          wrapped[name] = (/** @type {unknown[]} */ ...args) => asAgent(() => real[name](...args), (r) => activates(args, r));
        }
      }
      return /** @type {any} */ (wrapped);
    },
    sessionEnded,
    async sweep(hostCall) {
      const held = ownership.liveSessions();
      if (held.length === 0) return [];
      const r = await hostCall("sessions_alive", { sessions: held });
      const gone = isPlainObject(r) && Array.isArray(r.gone) ? r.gone.filter((n) => held.includes(n)) : [];
      const closeTabs = isPlainObject(r) && r.closeTabs === true;
      for (const name of gone) await sessionEnded(name, { closeTabs });
      return gone;
    },
    list,
    async closeOrphans() {
      const ids = ownership.agentTabs().filter((t) => t.orphanedAt !== null).map((t) => t.tabId);
      for (const id of ids) await close(id);
      return ids.length;
    },
    async closeOrphan(tabId) {
      if (!ownership.isOrphan(tabId)) return false;
      await close(tabId);
      return true;
    },
    async closeAgentTab(tabId) {
      if (ownership.owner(tabId) === null && !ownership.isOrphan(tabId)) return false;
      await close(tabId);
      return true;
    },
    async makeRoom(policy) {
      const cap = policy.maxAgentTabs;
      /** @type {number[]} */
      const closed = [];
      const openIds = new Set((await list()).map((r) => r.id));
      // Tabs that are gone but not yet released do not count.
      for (const t of ownership.agentTabs()) if (!openIds.has(t.tabId)) ownership.release(t.tabId);
      while (ownership.agentTabs().length >= cap) {
        const [victim] = ownership.evictable();
        if (victim === undefined) {
          throw new BridgeError(CODE.TAB_LIMIT,
            `${ownership.agentTabs().length} agent tabs are open (the cap is ${cap}) and none can be closed for you: `
            + "the others belong to live sessions or the person has looked at them");
        }
        await close(victim);
        closed.push(victim);
      }
      return closed;
    },
    async claimed(tabId) {
      await discardable(tabId, true);
    },
  };
}
