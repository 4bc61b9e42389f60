// confirm-window.js — asks the person in the extension's own confirm window and answers from
// the runtime messages that window sends. Pure: the window API is injected (shared/chrome-api.js
// supplies the real one); its messages are admitted by the message router
// (worker/message-router.js) from this extension's confirm page alone, for the id its URL names.
// It must treat a window that cannot open or closes as "deny" and one nobody answered in time as
// "timeout" (both refusals: `refuseUnlessAllowed`), and never let a click allow a confirmation
// that asks for a tap.

import { BridgeError } from "./bridge-error.js";
import { CODE } from "./error-codes.js";

/** Page the confirm window loads; its query carries the confirmation id. */
export const CONFIRM_PAGE = "confirm.html";

/** Popup geometry (DESIGN.md "Confirmations and defaults"); tests/browser/test_ui_layout.py lays the page out at it. */
export const CONFIRM_WINDOW = Object.freeze({ type: "popup", focused: true, width: 460, height: 360 });

/**
 * What the confirm window asks about: an origin to approve, or one action. With `presence`, the
 * window asks for a tap on the security key for that action and detail instead of a click.
 * `client` (the asking client's paired label, ctx.client), `fields` (a submit's field names and
 * method, page/actions.js describe) and `source` (where an address or value came from, the
 * provenance gate's words) are shown, never decided on; so is `grace` (the seconds an allow
 * covers further graceable actions on this tab and origin, worker/grace.js; 0 or absent: none).
 * @typedef {{kind: "origin" | "action", tool: string, origin?: string, detail?: string,
 *   pattern?: string | null, presence?: {action: string, detail: string} | null, timeoutMs: number,
 *   client?: string | null, fields?: unknown, source?: string | null, grace?: number}} ConfirmRequest
 */
/** @typedef {(req: ConfirmRequest) => Promise<import("../worker/confirm-broker.js").Decision>} Confirm */

/**
 * Refuse unless the person allowed: `confirm_timeout` when nobody answered in time,
 * `confirm_denied` otherwise (deny, window closed, window could not open).
 * @param {import("../worker/confirm-broker.js").Decision} decision
 * @param {string} what what was asked about, e.g. "closing the tab"
 */
export function refuseUnlessAllowed(decision, what) {
  if (decision === "allow") return;
  if (decision === "timeout") throw new BridgeError(CODE.CONFIRM_TIMEOUT, `nobody answered the confirmation for ${what} in time`);
  throw new BridgeError(CODE.CONFIRM_DENIED, `the person did not allow ${what}`);
}

/**
 * @typedef {object} WindowApi
 * @property {(opts: {url: string, type: "popup", focused: boolean, width: number, height: number}) =>
 *   Promise<{id?: number} | undefined>} createWindow
 * @property {(windowId: number) => Promise<void>} removeWindow
 */

/**
 * @param {{broker: import("../worker/confirm-broker.js").ConfirmBroker, windows: WindowApi,
 *   log?: {warn: (...a: unknown[]) => void}, now?: () => number}} deps now: the wall clock the
 *   window's countdown is shown against (the page reads the same clock)
 * @returns {Confirm}
 */
export function createConfirmer({ broker, windows, log = console, now = () => Date.now() }) {
  return async function confirm(req) {
    const { id, promise } = broker.open({ ...req, expiresAt: now() + req.timeoutMs });
    /** @type {number | null} */
    let windowId = null;
    try {
      const mode = req.presence ? "&mode=presence" : "";
      const win = await windows.createWindow({ url: `${CONFIRM_PAGE}?id=${encodeURIComponent(id)}${mode}`, ...CONFIRM_WINDOW });
      if (win && Number.isInteger(win.id)) {
        windowId = /** @type {number} */ (win.id);
        broker.attachWindow(id, windowId);
      } else {
        broker.answer(id, "deny");
      }
    } catch (err) {
      log.warn("tabwarden: the confirm window could not open; denying", err);
      broker.answer(id, "deny");
    }
    const decision = await promise;
    // A refused tap's window stays, saying why, until the person closes it.
    if (!broker.keepsWindow(id) && windowId !== null) {
      windows.removeWindow(windowId).catch(() => {}); // already closed by the person
    }
    return decision;
  };
}

/**
 * The confirm page's own messages, by type, for the message router (worker/message-router.js),
 * which admits only this extension's confirm page and only about the confirmation its URL names
 * (`msg.id`): confirm_details (what to show) and confirm_answer (the person's click).
 * @param {import("../worker/confirm-broker.js").ConfirmBroker} broker
 * @returns {ReadonlyMap<string, (msg: Record<string, unknown>) => object>}
 */
export function confirmWindowMessages(broker) {
  return new Map([
    ["confirm_details", (msg) => {
      const details = broker.details(/** @type {string} */ (msg.id));
      return details === null ? { ok: false } : { ok: true, details };
    }],
    ["confirm_answer", (msg) => {
      const id = /** @type {string} */ (msg.id);
      // A presence-confirm request is allowed only by the host's verdict on a tap
      // (shared/presence-confirm.js), never by a click: from the page it can only be denied.
      const pending = broker.details(id);
      if (msg.decision === "allow" && pending !== null && pending.presence !== null) {
        broker.answer(id, "deny");
        return { ok: false };
      }
      const decision = msg.decision === "allow" ? "allow" : "deny";
      // keepWindow: the page denies after a refused tap and keeps saying why (a deny only).
      return { ok: broker.answer(id, decision, { keepWindow: decision === "deny" && msg.keepWindow === true }) };
    }],
  ]);
}
