// handlers/capture.js — page_console and page_network: the console and network tails
// worker/capture.js records on owned tabs while the signed policy's consoleCapture /
// networkCapture is on. Thin glue: argument checks, ownership and the origin gate on the tab's
// current URL, then the store's answer filtered by the policy's approved origins. It must never
// touch the chrome global, never answer for a tab the session does not own or whose current site
// is not approved, and never return an entry whose origin the policy does not approve (it is
// withheld and counted) nor anything recorded while capture was off (nothing is).

import { BridgeError } from "../shared/bridge-error.js";
import { turnOnWords } from "../shared/policy-words.js";
import { CODE } from "../shared/error-codes.js";
import { argInt, argTabId, ownedTab } from "./support.js";

/** Most entries one call answers, and the default. */
export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;
/** @param {import("./support.js").Ctx} ctx @param {string} key */
const on = (ctx, key) => ctx.policy.allows(key);

// clear, level, limit and the url filter's type and length are the wire schema's
// (worker/dispatch.js checks it before any handler runs): what is read here is only what was given.

/** @param {Record<string, unknown>} args */
const argClear = (args) => args.clear === true;

/** @param {string} key @param {string} tool */
const offHint = (key, tool) =>
  `${tool} records nothing while policy ${key} is off; ${turnOnWords(key)}, then call again: entries appear from then on`;

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {capture?: import("../worker/capture.js").Capture}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function captureHandlers(deps) {
  const { ensureOrigin } = deps;

  /** @param {Record<string, unknown>} args @param {import("./support.js").Ctx} ctx @param {string} tool */
  async function gated(args, ctx, tool) {
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    await ensureOrigin(tab?.url, ctx, tool);
    if (deps.capture === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "capture is not available in this extension");
    return { tabId, capture: deps.capture };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageConsole(args, ctx) {
    const level = args.level === "error" || args.level === "warning" ? args.level : "all";
    // the opt-in levels' names are the wire schema's (log, info, debug)
    const levels = Array.isArray(args.levels) ? [...new Set(args.levels.map(String))] : [];
    const limit = argInt(args, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
    const clear = argClear(args);
    const { tabId, capture } = await gated(args, ctx, "page_console");
    if (!on(ctx, "consoleCapture")) return { enabled: false, entries: [], withheld: 0, more: 0, hint: offHint("consoleCapture", "page_console") };
    return capture.console(tabId, { level, levels, limit, clear }, ctx.policy.approves);
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageNetwork(args, ctx) {
    const url = typeof args.url === "string" && args.url !== "" ? args.url : null;
    const limit = argInt(args, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
    const clear = argClear(args);
    // the type names are the wire schema's (CDP resource types); none given: every type
    const types = Array.isArray(args.types) && args.types.length > 0 ? [...new Set(args.types.map(String))] : null;
    const failedOnly = args.failedOnly === true;
    const sinceId = Number.isSafeInteger(args.sinceId) ? /** @type {number} */ (args.sinceId) : null;
    const bodies = args.bodies === true; // metadata only unless asked
    const { tabId, capture } = await gated(args, ctx, "page_network");
    if (!on(ctx, "networkCapture")) return { enabled: false, entries: [], withheld: 0, more: 0, dropped: 0, hint: offHint("networkCapture", "page_network") };
    return await capture.network(tabId, { url, limit, clear, types, failedOnly, sinceId, bodies }, ctx.policy.approves);
  }

  return [
    ["page_console", pageConsole],
    ["page_network", pageNetwork],
  ];
}
