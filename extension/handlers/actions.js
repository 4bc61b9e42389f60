// handlers/actions.js — the catalogue of page actions the extension serves: one Map from each
// action name to the handler family (handlers/*.js) that answers it (worker/catalogue.js, generated
// from the MCP tool catalogue, names the family), and the dispatch routes built from it for
// background.js (each action that takes waitFor / observe wrapped once), and
// FRAME_OUTPUT: the actions whose output renders every frame of the page or saves a file a frame
// started (mcp_server/catalogue/ FrameOutput; docs/adr/0007-frames-in-rendered-output.md), each
// route of which createRoutes wraps in the frame check. Pure: imports no chrome, so Node (and a
// Python test comparing it with the MCP tool catalogue) can import it. It must never route an
// action that is not a key of PAGE_ACTIONS, nor start with a key that has no handler, nor route
// a RENDERS action around the frame check: createRoutes throws or wraps instead.

import { BridgeError } from "../shared/bridge-error.js";
import { ACTION_FAMILIES, FRAME_OUTPUT as DECLARED_FRAME_OUTPUT } from "../worker/catalogue.js";
import { CODE } from "../shared/error-codes.js";
import { maskCards } from "../worker/redact.js";
import { isPlainObject } from "../shared/wire.js";
import { fetchHandlers } from "./fetch.js";
import { captureHandlers } from "./capture.js";
import { emulateHandlers } from "./emulate.js";
import { filesHandlers } from "./files.js";
import { frameList, framesHandlers } from "./frames.js";
import { inputHandlers } from "./input.js";
import { interactHandlers, withAftermath } from "./interact.js";
import { keyboardHandlers } from "./keyboard.js";
import { navHandlers } from "./nav.js";
import { pageHandlers } from "./page.js";
import { readHandlers } from "./read.js";
import { tabHandlers } from "./tabs.js";
import { argTabId, ownedTab, step } from "./support.js";

/**
 * What every family gets: support.js's deps with every browser call the families use, the
 * click grace, the debugger manager and the open dialogs (handlers/input.js).
 * @typedef {import("./support.js").HandlerDeps & {browser: import("./nav.js").NavBrowserApi
 *   & import("./read.js").ReadBrowserApi & import("./interact.js").InteractBrowserApi
 *   & import("./frames.js").FramesBrowserApi & import("./files.js").FilesBrowserApi,
 *   grace?: import("../worker/grace.js").Grace, cdp: import("../worker/debugger.js").DebuggerManager,
 *   dialogs: import("../worker/dialogs.js").Dialogs, mac?: boolean,
 *   popups?: import("../worker/popups.js").Popups, capture?: import("../worker/capture.js").Capture,
 *   downloads: import("../worker/downloads.js").DownloadLog,
 *   navBlock?: import("../worker/nav-block.js").NavBlocker}} ActionDeps
 */
/** @typedef {(deps: ActionDeps) => Array<[string, import("../worker/dispatch.js").Handler]>} HandlerFamily */

/**
 * The handler module of each family (handlers/<family>.js), by the family name the MCP catalogue
 * gives each action (mcp_server/catalogue/<family>.py; worker/catalogue.js).
 * @type {ReadonlyMap<string, HandlerFamily>}
 */
const FAMILIES = new Map(/** @type {Array<[string, HandlerFamily]>} */ ([
  ["tabs", tabHandlers],
  ["page", pageHandlers],
  ["nav", navHandlers],
  ["read", readHandlers],
  ["interact", interactHandlers],
  ["input", inputHandlers],
  ["frames", framesHandlers],
  ["keyboard", keyboardHandlers],
  ["fetch", fetchHandlers],
  ["capture", captureHandlers],
  ["files", filesHandlers],
  ["emulate", emulateHandlers],
]));

/**
 * Every page action, in catalogue order, with the family that serves it: worker/catalogue.js, which
 * is generated from the MCP tool catalogue. The keys are the action names the host may send
 * (docs/protocol.md "The page-tool catalogue"). A family this file does not know stops the worker.
 * @type {ReadonlyMap<string, HandlerFamily>}
 */
export const PAGE_ACTIONS = new Map(ACTION_FAMILIES.map(([action, name]) => {
  const family = FAMILIES.get(name);
  if (family === undefined) throw new Error(`actions: ${JSON.stringify(action)} is of the family ${JSON.stringify(name)}, which has no handler module`);
  return /** @type {[string, HandlerFamily]} */ ([action, family]);
}));

/**
 * The actions whose output can include frames other than the one the origin gate passed, as the
 * MCP catalogue declares them (FrameOutput; worker/catalogue.js is generated from it): "renders"
 * (pixels or a PDF of the whole page, subframes included) and "saves" (a file a frame of the page
 * started; worker/downloads.js attributes it to that frame).
 * @type {ReadonlyMap<string, "renders" | "saves">}
 */
export const FRAME_OUTPUT = new Map(DECLARED_FRAME_OUTPUT);

/**
 * The hint of a refusal over a frame: which origin, and what the person can do.
 * @param {string} tool @param {string | null} origin
 */
export function frameRefusal(tool, origin) {
  const which = origin === null ? "a frame with no web origin (data:, blob:, or an error page)" : `a frame from ${origin}`;
  return `${tool} renders every frame of the page and ${which} is not approved; nothing was captured. `
    + (origin === null
      ? "Such a frame can never be approved: use page_text, page_snapshot or page_markdown, which read only approved frames"
      : `Ask the person to approve ${origin} (they are asked when you call again), or use page_text, page_snapshot or page_markdown, which read only approved frames`);
}

/** Most characters of one frame's text the card check reads; a frame with more is refused. */
export const MAX_CHECKED_TEXT = 5_000_000;

/**
 * Runs in each frame (isolated world; serialised by executeScript, so self-contained): the text a
 * render of it would show — the body's rendered text, and what form fields display (a password
 * field shows dots) — or null past MAX_CHECKED_TEXT (kept in step by hand: it cannot import).
 */
export function renderedText() {
  const parts = [document.body instanceof HTMLElement ? document.body.innerText : String(document.documentElement?.textContent ?? "")];
  for (const el of document.querySelectorAll("input, textarea, select")) {
    if (el instanceof HTMLInputElement && el.type !== "password" && el.type !== "hidden") parts.push(el.value);
    else if (el instanceof HTMLTextAreaElement) parts.push(el.value);
    else if (el instanceof HTMLSelectElement) for (const o of el.selectedOptions) parts.push(o.text);
  }
  const text = parts.join("\n");
  return text.length > 5_000_000 ? null : text;
}

/**
 * A render cannot be masked afterwards: refused while any frame's text shows a card number
 * (worker/redact.js maskCards finds one), or a frame's text cannot be read or is too long to check.
 * @param {ActionDeps} deps @param {import("./support.js").Ctx} ctx @param {string} action
 * @param {number} tabId @param {number[]} frameIds
 */
async function refuseShownCards(deps, ctx, action, tabId, frameIds) {
  const run = deps.browser.executeInFrames;
  if (typeof run !== "function") throw new BridgeError(CODE.INTERNAL_ERROR, "frames cannot be read in this extension");
  let results;
  try {
    results = await step(ctx, "check the page for card numbers", run(tabId, frameIds, renderedText));
  } catch (err) {
    if (err instanceof BridgeError) throw err;
    results = null;
  }
  const read = new Map((Array.isArray(results) ? results : []).map((r) => [r?.frameId, r?.result]));
  for (const frameId of frameIds) {
    const text = read.get(frameId);
    if (typeof text !== "string") {
      throw new BridgeError(CODE.POLICY_DENIED, `${action} could not check every frame of the page for card numbers (one could not be read, or holds over ${MAX_CHECKED_TEXT} characters); nothing was captured`);
    }
    if (maskCards(text) !== text) {
      throw new BridgeError(CODE.POLICY_DENIED,
        `${action} would show a card number that is on the page, and a picture or a PDF cannot be masked; nothing was captured. `
        + "Read the page with page_text, page_snapshot or page_markdown (card numbers masked), or capture after the number is gone from the page");
    }
  }
}

/**
 * Wraps a RENDERS action: before it runs, the tab is owned, its top origin passes the origin
 * gate and then every other frame's origin, outermost first, each on its own (the person is
 * asked about an unapproved one, as for a navigation to it; about:blank and about:srcdoc frames
 * count as the frame whose origin they inherit, a frame with no web origin is refused); after it
 * ran, the tab's frames are listed again and the output is dropped, refused, when any frame's
 * origin is not one the check passed or the policy approves (a frame that came or navigated
 * during the capture). The refusal is origin_not_approved naming the frame's origin. Before and
 * after, every frame's text is checked for card numbers (refuseShownCards: policy_denied). The
 * answer names the origins of the frames the capture showed (`capturedOrigins`): the MCP server
 * records each as a capture the lineage ledger cannot read (docs/adr/0008) and strips the field.
 * @param {ActionDeps} deps
 * @param {string} action
 * @param {import("../worker/dispatch.js").Handler} handler
 * @returns {import("../worker/dispatch.js").Handler}
 */
export function rendersOnlyApproved(deps, action, handler) {
  /** @param {number} tabId @param {import("./support.js").Ctx} ctx */
  async function frames(tabId, ctx) {
    const list = deps.browser.getAllFrames;
    if (typeof list !== "function") throw new BridgeError(CODE.INTERNAL_ERROR, "frames cannot be listed in this extension");
    let raw;
    try {
      raw = await step(ctx, "list the tab's frames", list(tabId));
    } catch (err) {
      if (err instanceof BridgeError) throw err;
      throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
    }
    if (!Array.isArray(raw)) throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
    const all = frameList(raw);
    if (all.length === 0) throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
    return all;
  }
  return async (args, ctx) => {
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    /** @type {Set<string>} */
    const passed = new Set([await deps.ensureOrigin(tab?.url, ctx, action)]);
    // Outermost first (frameList orders by frameId; a frame's origin is asked about once).
    const before = await frames(tabId, ctx);
    for (const f of before) {
      if (f.frameId === 0) continue;
      if (f.origin === null) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, frameRefusal(action, null));
      if (!passed.has(f.origin)) passed.add(await deps.ensureOrigin(f.gateUrl, ctx, action));
    }
    await refuseShownCards(deps, ctx, action, tabId, before.map((f) => f.frameId));
    const result = await handler(args, ctx);
    const after = await frames(tabId, ctx);
    for (const f of after) {
      if (f.origin === null || !(passed.has(f.origin) || ctx.policy.approves(f.origin))) {
        throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, frameRefusal(action, f.origin));
      }
    }
    await refuseShownCards(deps, ctx, action, tabId, after.map((f) => f.frameId));
    if (!isPlainObject(result)) return result;
    return { ...result, capturedOrigins: [...new Set(after.map((f) => f.origin))] };
  };
}

/**
 * Wraps a SAVES action: its answer must name the origin of the frame that started the file
 * (`frameOrigin`, from worker/downloads.js), approved by the policy, or nothing is answered (and so
 * nothing copied into the sandbox); the field is removed before the answer leaves. The handler
 * already never sees a download it must withhold (so this refusal is a second lock that answers
 * nothing about such a download: it fires only on a handler that lost its attribution).
 * @param {string} action
 * @param {import("../worker/dispatch.js").Handler} handler
 * @returns {import("../worker/dispatch.js").Handler}
 */
export function savesOnlyApproved(action, handler) {
  return async (args, ctx) => {
    const result = await handler(args, ctx);
    if (!isPlainObject(result) || typeof result.frameOrigin !== "string" || !ctx.policy.approves(result.frameOrigin)) {
      throw new BridgeError(CODE.INTERNAL_ERROR, `${action} could not tell which frame started the file: nothing was saved`);
    }
    const { frameOrigin: _, ...answer } = result;
    return answer;
  };
}

/** @param {ActionDeps} deps @param {string} action @param {import("../worker/dispatch.js").Handler} handler */
function frameChecked(deps, action, handler) {
  const kind = FRAME_OUTPUT.get(action);
  if (kind === "renders") return rendersOnlyApproved(deps, action, handler);
  if (kind === "saves") return savesOnlyApproved(action, handler);
  return handler;
}

/**
 * The handler of every action in PAGE_ACTIONS, in its order. Throws when a family serves an
 * action the catalogue does not list for it, or leaves one of its listed actions unserved.
 * @param {ActionDeps} deps
 * @returns {Map<string, import("../worker/dispatch.js").Handler>}
 */
export function createRoutes(deps) {
  // One map of each tab's latest snapshot for every family that addresses elements by ref, and
  // one of each call's frame (so withAftermath's wait runs in the frame the action ran in).
  const shared = { ...deps, docTokens: new Map(), callFrame: new WeakMap() };
  /** @type {Map<string, import("../worker/dispatch.js").Handler>} */
  const served = new Map();
  for (const family of new Set(PAGE_ACTIONS.values())) {
    for (const [action, handler] of family(shared)) {
      if (PAGE_ACTIONS.get(action) !== family || served.has(action)) {
        throw new Error(`actions: ${family.name} serves ${JSON.stringify(action)}, which PAGE_ACTIONS does not give it`);
      }
      served.set(action, handler);
    }
  }
  /** @type {Map<string, import("../worker/dispatch.js").Handler>} */
  const routes = new Map();
  for (const action of PAGE_ACTIONS.keys()) {
    const handler = served.get(action);
    if (handler === undefined) throw new Error(`actions: nothing serves ${JSON.stringify(action)}`);
    routes.set(action, frameChecked(shared, action, handler));
  }
  // Every action's optional waitFor and observe (handlers/interact.js), around the handlers.
  return withAftermath(shared, routes);
}
