// handlers/tabs.js — the tab actions: tab_list, tab_open (within the agent-tab cap, evicting
// orphans: worker/tab-lifecycle.js), tab_close, tab_close_all; and the terminal's two (agent_tabs,
// agent_tabs_close), served only to the host's reserved "terminal" session. Thin glue: browser
// calls are injected (shared/chrome-api.js), ownership, lifecycle, origin gate and confirmations
// come from lib/. It must never touch the chrome global, never read page content, never list,
// close or return a tab the calling session did not open (the terminal's list is every session's
// agent tabs, masked), and never return more than the mapped fields.
// The person's focus: an agent's tab opens in the agent's own window, created unfocused; a later
// tab is created there inactive and then made that window's active tab by tabs.update (Chrome's
// tabs.create with active: true shows its window, which takes the focus from the person's
// window; tabs.update only switches the tab). Each tab it opens is muted before it loads
// anything, unless the policy says `agentTabsAudible`; the person's own tabs are never touched.

import { BridgeError } from "../shared/bridge-error.js";
import { refuseUnlessAllowed } from "../shared/confirm-window.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { toTabList, toTabSummary } from "../worker/tab-mapping.js";
import { isPlainObject } from "../shared/wire.js";
import { argTabId, argUrl, ownedTab, settledTab } from "./support.js";

/** What a new tab shows until the debugger is attached to it. */
export const BLANK = "about:blank";

/**
 * An agent's window: a desktop size, so pages render their desktop layout (a window Chrome sizes
 * by itself can be narrow enough for a page's small-screen layout, which hides navigation behind
 * a menu button). Chrome fits it into the screen's work area when the screen is smaller;
 * page_viewport changes a tab's viewport within it. docs/using-the-tools.md says so.
 */
export const AGENT_WINDOW = Object.freeze({ width: 1280, height: 800 });
/** Longest text of a tab shown in a confirm window. */
const MAX_SHOWN = 300;

/**
 * True when the policy asks the person to confirm `action`.
 * @param {import("./support.js").Ctx} ctx
 * @param {string} action
 */
export function needsConfirm(ctx, action) {
  // Fail closed: a policy whose confirm list is unreadable confirms everything (worker/policy.js).
  return ctx.policy.confirms(action);
}

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function tabHandlers(deps) {
  const { browser, ownership, loads, ensureOrigin, confirm } = deps;
  const lifecycle = deps.lifecycle ?? null;

  /** @type {import("../worker/dispatch.js").Handler} */
  async function tabList(_args, ctx) {
    const mine = new Set(ownership.tabsOf(ctx.session));
    const all = await browser.queryAllTabs();
    return toTabList((Array.isArray(all) ? all : []).filter((t) => isPlainObject(t) && mine.has(/** @type {number} */ (t.id))));
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function tabOpen(args, ctx) {
    const url = argUrl(args);
    // Its lineage was decided before this handler ran (worker/provenance-gate.js `gated`).
    await ensureOrigin(url, ctx, "tab_open");
    await lifecycle?.makeRoom(ctx.policy); // tab_limit when only live or person-viewed tabs remain
    // The tab opens empty (about:blank) and goes to `url` only once the debugger is on it: a
    // dialog the page opens while its first HTML is parsed (an inline alert()) is seen only by a
    // debugger attached before it opened (docs/adr/0005).
    let tab = null;
    const windowId = ownership.windowOf(ctx.session);
    if (windowId !== null) {
      try {
        tab = await browser.createTab({ windowId, url: BLANK, active: false });
      } catch {
        ownership.forgetWindow(windowId); // the person closed it
      }
    }
    if (tab === null) {
      const win = await browser.createWindow({ url: BLANK, focused: false, type: "normal", ...AGENT_WINDOW });
      tab = Array.isArray(win?.tabs) ? win.tabs[0] : null;
      if (!Number.isInteger(win?.id) || !tab) throw new BridgeError(CODE.INTERNAL_ERROR, "the new window has no tab");
      ownership.setWindow(ctx.session, win.id);
    }
    if (!Number.isInteger(tab?.id) || tab.id < 0) throw new BridgeError(CODE.INTERNAL_ERROR, "the new tab has no id");
    const tabId = /** @type {number} */ (tab.id);
    if (!ownership.claim(ctx.session, tabId)) throw new BridgeError(CODE.INTERNAL_ERROR, "the new tab is already owned");
    await lifecycle?.claimed(tabId);
    // Muted before the navigation (nothing the page plays is heard), and the agent window's active
    // tab without showing that window. A failure leaves it audible or behind, no worse.
    const muted = ctx.policy.allows("agentTabsAudible") ? {} : { muted: true };
    await browser.updateTab(tabId, { active: true, ...muted }).catch(() => {});
    const go = async () => {
      // Armed before the navigation starts; about:blank's own "complete" is not the page's.
      const watch = loads.watch(tabId, undefined, { skipBlank: true });
      try {
        await browser.updateTab(tabId, { url });
      } catch {
        watch.cancel();
        throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
      }
      return settledTab(deps, tabId, watch);
    };
    // Through the tab guard (worker/debugger.js): the debugger goes on first, and a dialog the page
    // opens while it loads ends the call with dialog_open instead of holding it.
    const loaded = await (deps.guardTab !== undefined ? deps.guardTab("tab_open", tabId, ctx, go) : go());
    return { tab: toTabSummary(loaded) ?? toTabSummary(tab) };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function tabClose(args, ctx) {
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    if (needsConfirm(ctx, "tab_close")) {
      const url = typeof tab?.url === "string" ? tab.url : "";
      const title = typeof tab?.title === "string" ? tab.title : "";
      const decision = await confirm({
        kind: "action", tool: "tab_close", origin: originOf(url) ?? "", client: ctx.client,
        detail: `Close the tab "${title.slice(0, MAX_SHOWN)}" (${url.slice(0, MAX_SHOWN)})?`,
        timeoutMs: ctx.policy.confirmTimeoutMs,
      });
      refuseUnlessAllowed(decision, "closing the tab");
      if (ownership.owner(tabId) !== ctx.session) throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
    }
    await removeOwned(tabId);
    return { closed: tabId };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function tabCloseAll(_args, ctx) {
    let closed = 0;
    for (const tabId of ownership.tabsOf(ctx.session)) {
      try {
        await removeOwned(tabId);
        closed += 1;
      } catch {
        // already gone: removeOwned released it
      }
    }
    return { closed };
  }

  /** @param {number} tabId */
  async function removeOwned(tabId) {
    try {
      await browser.removeTab(tabId);
    } catch {
      throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
    } finally {
      ownership.release(tabId);
    }
  }

  return [
    ["tab_list", tabList],
    ["tab_open", tabOpen],
    ["tab_close", tabClose],
    ["tab_close_all", tabCloseAll],
  ];
}

/** The session name the host gives a terminal connection (host/sessions.py TERMINAL_SESSION). */
export const TERMINAL_SESSION = "terminal";
/** The terminal's requests (host/sessions.py TERMINAL_ACTIONS); terminal_tap is handlers/terminal-tap.js's. */
export const TERMINAL_ACTIONS = new Set(["agent_tabs", "agent_tabs_close", "terminal_tap"]);

/**
 * The terminal's requests (`tabwarden tabs`): every session's agent tabs, masked, and closing the
 * orphans. The host relays them only from an attested terminal, under TERMINAL_SESSION; any other
 * session is answered as if they did not exist.
 * @param {{lifecycle: import("../worker/tab-lifecycle.js").TabLifecycle}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function terminalTabHandlers({ lifecycle }) {
  /** @param {import("./support.js").Ctx} ctx @param {string} action */
  const terminalOnly = (ctx, action) => {
    if (ctx.session !== TERMINAL_SESSION) throw new BridgeError(CODE.UNKNOWN_ACTION, `unknown action ${JSON.stringify(action)}`);
  };
  return [
    ["agent_tabs", async (_args, ctx) => {
      terminalOnly(ctx, "agent_tabs");
      return { tabs: await lifecycle.list() };
    }],
    ["agent_tabs_close", async (_args, ctx) => {
      terminalOnly(ctx, "agent_tabs_close");
      return { closed: await lifecycle.closeOrphans() };
    }],
  ];
}
