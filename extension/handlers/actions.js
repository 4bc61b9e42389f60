// handlers/actions.js — the catalogue of page actions the extension serves: one Map from each
// action name to the handler family (handlers/*.js) that answers it, and the dispatch routes
// built from it for background.js (each action that takes waitFor / observe wrapped once). Pure: imports no chrome, so Node (and a Python test comparing
// it with the MCP tool catalogue) can import it. It must never route an action that is not a
// key of PAGE_ACTIONS, nor start with a key that has no handler: createRoutes throws instead.

import { fetchHandlers } from "./fetch.js";
import { captureHandlers } from "./capture.js";
import { filesHandlers } from "./files.js";
import { framesHandlers } from "./frames.js";
import { inputHandlers } from "./input.js";
import { interactHandlers, withAftermath } from "./interact.js";
import { keyboardHandlers } from "./keyboard.js";
import { navHandlers } from "./nav.js";
import { pageHandlers } from "./page.js";
import { readHandlers } from "./read.js";
import { tabHandlers } from "./tabs.js";

/**
 * What every family gets: support.js's deps with every browser call the families use, the
 * click grace, the debugger manager and the open dialogs (handlers/input.js).
 * @typedef {import("./support.js").HandlerDeps & {browser: import("./nav.js").NavBrowserApi
 *   & import("./read.js").ReadBrowserApi & import("./interact.js").InteractBrowserApi
 *   & import("./frames.js").FramesBrowserApi & import("./files.js").FilesBrowserApi,
 *   grace?: import("../lib/grace.js").Grace, cdp: import("../lib/debugger.js").DebuggerManager,
 *   dialogs: import("../lib/dialogs.js").Dialogs, mac?: boolean,
 *   popups?: import("../lib/popups.js").Popups, capture?: import("../lib/capture.js").Capture,
 *   downloads: import("../lib/downloads.js").DownloadLog,
 *   navBlock?: import("../lib/nav-block.js").NavBlocker}} ActionDeps
 */
/** @typedef {(deps: ActionDeps) => Array<[string, import("../lib/dispatch.js").Handler]>} HandlerFamily */

/**
 * Every page action, in catalogue order, with the family that serves it. The keys are the
 * action names the host may send (docs/protocol.md "The page-tool catalogue").
 * @type {ReadonlyMap<string, HandlerFamily>}
 */
export const PAGE_ACTIONS = new Map(/** @type {Array<[string, HandlerFamily]>} */ ([
  ["tab_list", tabHandlers],
  ["tab_open", tabHandlers],
  ["tab_close", tabHandlers],
  ["tab_close_all", tabHandlers],
  ["page_navigate", pageHandlers],
  ["page_text", pageHandlers],
  ["page_history", navHandlers],
  ["page_reload", navHandlers],
  ["tab_focus", navHandlers],
  ["page_follow", navHandlers],
  ["page_screenshot", readHandlers],
  ["cookie_get", readHandlers],
  ["storage_get", readHandlers],
  ["page_markdown", readHandlers],
  ["page_scrape", readHandlers],
  ["page_eval", readHandlers],
  ["page_upload", readHandlers],
  ["page_snapshot", interactHandlers],
  ["page_find", interactHandlers],
  ["page_click", interactHandlers],
  ["page_fill", interactHandlers],
  ["page_press", interactHandlers],
  ["page_select", interactHandlers],
  ["page_check", interactHandlers],
  ["page_clear", interactHandlers],
  ["page_hover", inputHandlers],
  ["page_scroll", interactHandlers],
  ["page_settle", interactHandlers],
  ["page_reveal", interactHandlers],
  ["page_wait_for", interactHandlers],
  ["page_get_state", interactHandlers],
  ["page_mouse", inputHandlers],
  ["page_dialog", inputHandlers],
  ["page_frames", framesHandlers],
  ["page_type", keyboardHandlers],
  ["page_keys", keyboardHandlers],
  ["page_fetch", fetchHandlers],
  ["page_console", captureHandlers],
  ["page_network", captureHandlers],
  ["page_pdf", filesHandlers],
  ["page_wait_download", filesHandlers],
  ["page_viewport", filesHandlers],
]));

/**
 * The handler of every action in PAGE_ACTIONS, in its order. Throws when a family serves an
 * action the catalogue does not list for it, or leaves one of its listed actions unserved.
 * @param {ActionDeps} deps
 * @returns {Map<string, import("../lib/dispatch.js").Handler>}
 */
export function createRoutes(deps) {
  // One map of each tab's latest snapshot for every family that addresses elements by ref, and
  // one of each call's frame (so withAftermath's wait runs in the frame the action ran in).
  const shared = { ...deps, docTokens: new Map(), callFrame: new WeakMap() };
  /** @type {Map<string, import("../lib/dispatch.js").Handler>} */
  const served = new Map();
  for (const family of new Set(PAGE_ACTIONS.values())) {
    for (const [action, handler] of family(shared)) {
      if (PAGE_ACTIONS.get(action) !== family || served.has(action)) {
        throw new Error(`actions: ${family.name} serves ${JSON.stringify(action)}, which PAGE_ACTIONS does not give it`);
      }
      served.set(action, handler);
    }
  }
  /** @type {Map<string, import("../lib/dispatch.js").Handler>} */
  const routes = new Map();
  for (const action of PAGE_ACTIONS.keys()) {
    const handler = served.get(action);
    if (handler === undefined) throw new Error(`actions: nothing serves ${JSON.stringify(action)}`);
    routes.set(action, handler);
  }
  // Every action's optional waitFor and observe (handlers/interact.js), around the handlers.
  return withAftermath(shared, routes);
}
