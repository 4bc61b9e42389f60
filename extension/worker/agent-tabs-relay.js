// agent-tabs-relay.js — the service worker's side of the agent-tab list on the popup and the
// options page: agent_tabs_list (every agent tab still open: session, origin, masked title,
// orphaned or not: worker/tab-lifecycle.js; the session's client label and last call when known:
// worker/session-clients.js), agent_tabs_close_orphan {tabId} and
// agent_tabs_close_orphans (closing orphans: narrowing, free) and agent_tabs_close {tabId} (the
// person closes one agent tab, live or orphaned: narrowing, free; its session forgets it). Pure:
// the lifecycle is injected; the message router (worker/message-router.js) admits this
// extension's popup and options page alone. It must never close a tab no agent opened (the
// person's own).

import { CODE } from "../shared/error-codes.js";

/**
 * @param {{lifecycle: Pick<import("./tab-lifecycle.js").TabLifecycle, "list" | "closeOrphan" | "closeOrphans" | "closeAgentTab">,
 *   sessionClients?: {snapshot: () => Promise<Map<string, import("./session-clients.js").SessionSeen>>},
 *   log?: {warn: (...a: unknown[]) => void}}} deps
 */
export function createAgentTabsRelay({ lifecycle, sessionClients, log = console }) {
  /** Each row with its session's client label and last call (null when not known). */
  async function rows() {
    const tabs = await lifecycle.list();
    /** @type {Map<string, import("./session-clients.js").SessionSeen>} */
    let seen = new Map();
    try {
      if (sessionClients) seen = await sessionClients.snapshot();
    } catch {
      seen = new Map();
    }
    return tabs.map((row) => {
      const s = seen.get(row.session);
      return { ...row, client: s?.client ?? null, lastCallAt: s?.lastAt ?? null };
    });
  }

  /** @param {Record<string, unknown>} msg */
  async function answer(msg) {
    try {
      if (msg.type === "agent_tabs_list") return { ok: true, tabs: await rows() };
      if (msg.type === "agent_tabs_close_orphans") return { ok: true, closed: await lifecycle.closeOrphans() };
      const tabId = msg.tabId;
      if (!Number.isInteger(tabId) || /** @type {number} */ (tabId) < 0) return { ok: false, code: CODE.BAD_REQUEST };
      const closing = msg.type === "agent_tabs_close" ? lifecycle.closeAgentTab : lifecycle.closeOrphan;
      return (await closing(/** @type {number} */ (tabId)))
        ? { ok: true, closed: 1 } : { ok: false, code: CODE.TAB_NOT_FOUND };
    } catch (err) {
      log.warn("tabwarden: agent tab list failed", err);
      return { ok: false, code: CODE.INTERNAL_ERROR };
    }
  }

  return {
    /**
     * The agent-tab messages, by type, for the message router (worker/message-router.js), which
     * admits only this extension's popup and options page.
     * @type {ReadonlyMap<string, (msg: Record<string, unknown>) => Promise<object>>}
     */
    messages: new Map(["agent_tabs_list", "agent_tabs_close_orphan", "agent_tabs_close_orphans", "agent_tabs_close"]
      .map((type) => [type, answer])),
  };
}
