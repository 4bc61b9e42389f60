// message-router.js — the one door for chrome.runtime messages from the extension's own pages:
// a table from message type to the sender tier it accepts (the options page, the popup, the
// confirm window about its own confirmation), the sender's tier resolved once, and a message from
// any other sender refused before any relay code runs. Pure: no chrome; the extension id, the
// pages' URLs and the relays' handlers are injected. It must never route a type the table does
// not list (a Map: "constructor" and "__proto__" stay unknown), never run a handler for a sender
// whose tier the type does not accept, and never take a sender's word for its tier: only
// `sender.id` equal to this extension's id AND `sender.url`, before any query or fragment, equal
// to the page's own URL place it (a content script has this extension's id but a web page's
// URL: no tier). The confirm window's tier holds for the confirmation named in its own URL only.
//
// Theory: background.js builds the router from MESSAGE_TABLE and the relays' `messages` maps
// (worker/pairing.js, policy-relay.js, popup-relay.js, agent-tabs-relay.js,
// shared/presence-confirm.js, shared/confirm-window.js); the relays check the message's shape
// and never its sender. A refusal answers what the relays answered before the router existed:
// `{ok: false, code: "bad_request"}` (asynchronously), or `{ok: false}` (at once) for the
// confirm window's details and answer.

import { CONFIRM_PAGE } from "../shared/confirm-window.js";
import { CODE } from "../shared/error-codes.js";
import { isPlainObject } from "../shared/wire.js";

/** The tiers of sender, by the extension page each one is. */
export const TIER = Object.freeze({ OPTIONS: "options", POPUP: "popup", CONFIRM: "confirm" });
/** @typedef {typeof TIER[keyof typeof TIER]} Tier */

/** Each tier's page (manifest options_page, action.default_popup; the confirm window's page). */
export const TIER_PAGES = Object.freeze({ [TIER.OPTIONS]: "options.html", [TIER.POPUP]: "popup.html", [TIER.CONFIRM]: CONFIRM_PAGE });

/**
 * One row of the table: the tiers a type accepts, what a refusal answers, and whether the answer
 * is given at once (the confirm window's own messages) rather than as a promise.
 * @typedef {Readonly<{tiers: readonly Tier[], refusal: Readonly<Record<string, unknown>>, sync: boolean}>} Route
 */

const REFUSED = Object.freeze({ ok: false, code: CODE.BAD_REQUEST });
const CONFIRM_REFUSED = Object.freeze({ ok: false });

/** @param {readonly Tier[]} tiers @param {{sync?: boolean, refusal?: Readonly<Record<string, unknown>>}} [o] @returns {Route} */
const route = (tiers, { sync = false, refusal = REFUSED } = {}) => Object.freeze({ tiers: Object.freeze([...tiers]), refusal, sync });

const OPTIONS_ONLY = route([TIER.OPTIONS]);
const POPUP_ONLY = route([TIER.POPUP]);
const OPTIONS_OR_POPUP = route([TIER.OPTIONS, TIER.POPUP]);
const CONFIRM_WINDOW = route([TIER.CONFIRM]);
const CONFIRM_WINDOW_AT_ONCE = route([TIER.CONFIRM], { sync: true, refusal: CONFIRM_REFUSED });

/**
 * Every runtime message the worker answers, and who may send it.
 * @type {ReadonlyMap<string, Route>}
 */
export const MESSAGE_TABLE = new Map([
  // Pairing this browser (worker/pairing.js): the options page.
  ["options_status", OPTIONS_ONLY],
  ["pair_begin", OPTIONS_ONLY],
  ["pair_complete", OPTIONS_ONLY],
  // The Policy, MCP clients and Audit log sections (worker/policy-relay.js): the options page.
  ["policy_get", OPTIONS_ONLY],
  ["presence_begin", OPTIONS_ONLY],
  ["presence_complete", OPTIONS_ONLY],
  ["policy_restrict", OPTIONS_ONLY],
  ["kill", OPTIONS_ONLY],
  ["clients_recent", OPTIONS_ONLY],
  ["client_revoke", OPTIONS_ONLY],
  ["audit_tail", OPTIONS_ONLY],
  // The toolbar popup's status and kill switch (worker/popup-relay.js): the popup.
  ["popup_status", POPUP_ONLY],
  ["popup_kill", POPUP_ONLY],
  // The agent-tab list (worker/agent-tabs-relay.js): the popup and the options page.
  ["agent_tabs_list", OPTIONS_OR_POPUP],
  ["agent_tabs_close_orphan", OPTIONS_OR_POPUP],
  ["agent_tabs_close_orphans", OPTIONS_OR_POPUP],
  ["agent_tabs_close", OPTIONS_OR_POPUP],
  // The confirm window, about the confirmation its URL names (shared/presence-confirm.js,
  // shared/confirm-window.js).
  ["confirm_presence_begin", CONFIRM_WINDOW],
  ["confirm_presence_complete", CONFIRM_WINDOW],
  ["confirm_details", CONFIRM_WINDOW_AT_ONCE],
  ["confirm_answer", CONFIRM_WINDOW_AT_ONCE],
  // Any of our pages' own errors, for the host's log (shared/page-errors.js, worker/error-report.js).
  ["page_error", route([TIER.OPTIONS, TIER.POPUP, TIER.CONFIRM])],
]);

/**
 * Which of this extension's pages sent a message, and (the confirm window) which confirmation its
 * URL names. `{tier: null}` for anything else: another extension, a content script, a web page, a
 * page of ours at another path.
 * @param {unknown} sender chrome.runtime.MessageSender
 * @param {{extensionId: string, pageUrl: (page: string) => string}} self pageUrl: runtime.getURL
 * @returns {{tier: Tier | null, confirmationId: string | null}}
 */
export function senderTier(sender, { extensionId, pageUrl }) {
  const none = { tier: null, confirmationId: null };
  if (sender === null || typeof sender !== "object") return none;
  const { id, url } = /** @type {{id?: unknown, url?: unknown}} */ (sender);
  if (typeof extensionId !== "string" || extensionId === "" || id !== extensionId || typeof url !== "string") return none;
  // Compare the text before "?"/"#" (URL.origin is "null" for chrome-extension: in some engines).
  const [base] = url.split(/[?#]/, 1);
  for (const tier of Object.values(TIER)) {
    const own = pageUrl(TIER_PAGES[tier]);
    if (typeof own !== "string" || own === "" || base !== own) continue;
    if (tier !== TIER.CONFIRM) return { tier, confirmationId: null };
    let confirmationId = null;
    try {
      confirmationId = new URL(url).searchParams.get("id");
    } catch {
      return none;
    }
    return { tier, confirmationId: confirmationId === "" ? null : confirmationId };
  }
  return none;
}

/**
 * @typedef {(msg: Record<string, unknown>) => unknown} MessageHandler answers a message already
 *   admitted (its sender's tier checked; for the confirm window, `msg.id` is its confirmation)
 */

/**
 * @typedef {object} MessageRouter
 * @property {(msg: unknown, sender: unknown) => unknown} route the answer (a promise for the
 *   asynchronous types), or undefined when the message is not one of the table's
 * @property {(type: string) => boolean} has
 */

/**
 * @param {{extensionId: string, pageUrl: (page: string) => string,
 *   handlers: Iterable<[string, MessageHandler]>, table?: ReadonlyMap<string, Route>}} deps
 *   handlers: each type's relay (every type of the table needs one, and none may be missing
 *   from the table); table: MESSAGE_TABLE unless a test passes its own
 * @returns {MessageRouter}
 */
export function createMessageRouter({ extensionId, pageUrl, handlers, table = MESSAGE_TABLE }) {
  /** @type {Map<string, MessageHandler>} */
  const handling = new Map(handlers);
  for (const [type, handle] of handling) {
    if (!table.has(type)) throw new TypeError(`message router: ${type} has no row in the table (who may send it?)`);
    if (typeof handle !== "function") throw new TypeError(`message router: ${type} has no handler function`);
  }
  for (const type of table.keys()) {
    if (!handling.has(type)) throw new TypeError(`message router: ${type} has no handler`);
  }

  return {
    has: (type) => handling.has(type),
    route(msg, sender) {
      if (!isPlainObject(msg) || typeof msg.type !== "string") return undefined;
      const row = table.get(msg.type);
      const handle = handling.get(msg.type);
      if (row === undefined || handle === undefined) return undefined;
      const from = senderTier(sender, { extensionId, pageUrl });
      const admitted = from.tier !== null && row.tiers.includes(from.tier)
        // The confirm window speaks only about the confirmation its own URL names.
        && (from.tier !== TIER.CONFIRM || (typeof msg.id === "string" && msg.id !== "" && msg.id === from.confirmationId));
      if (!admitted) {
        const refusal = { ...row.refusal };
        return row.sync ? refusal : Promise.resolve(refusal);
      }
      return handle(msg);
    },
  };
}
