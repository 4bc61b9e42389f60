// dialogs.js — which JavaScript dialog (alert, confirm, prompt, beforeunload) is open on each
// owned tab, as the debugger's Page.javascriptDialogOpening/Closed events report it, who is waiting
// to hear of one, and the `dialog_open` refusal built from it. Pure: no chrome. It must never hold
// or hand out a dialog's text unmasked (card-like numbers masked as page text is, capped), never
// keep a tab's dialog after it closed, the debugger left the tab or the tab was forgotten.

import { BridgeError } from "./bridge-error.js";
import { CODE } from "./error-codes.js";
import { maskCards } from "./redact.js";

/** The dialog types Chrome reports (CDP Page.DialogType). */
export const DIALOG_TYPES = Object.freeze(["alert", "confirm", "prompt", "beforeunload"]);
/** Longest dialog text kept and shown (characters; an error message holds at most 500). */
export const MAX_DIALOG_TEXT = 300;

/**
 * One open dialog: its type, its text masked, the origin of the frame that opened it.
 * @typedef {{type: string, message: string, url: string}} Dialog
 */

/**
 * The dialog's text as it may leave the extension: card-like numbers masked, capped.
 * @param {unknown} text
 */
export function maskDialogText(text) {
  const s = maskCards(typeof text === "string" ? text : "");
  return s.length > MAX_DIALOG_TEXT ? `${s.slice(0, MAX_DIALOG_TEXT)}…` : s;
}

/**
 * @typedef {object} Dialogs
 * @property {(tabId: number, params: unknown) => void} opened Page.javascriptDialogOpening
 * @property {(tabId: number) => void} closed Page.javascriptDialogClosed, or answered by us
 * @property {(tabId: number) => Dialog | null} current
 * @property {(tabId: number) => {promise: Promise<Dialog>, cancel: () => void}} watch resolves
 *   when a dialog opens on the tab after this call (never, once cancelled)
 * @property {(tabId: number) => void} forget the tab is gone or the debugger left it
 * @property {() => number} size tabs with an open dialog
 */

/** @returns {Dialogs} */
export function createDialogs() {
  /** @type {Map<number, Dialog>} */
  const open = new Map();
  /** @type {Map<number, Set<(d: Dialog) => void>>} */
  const waiters = new Map();

  return {
    opened(tabId, params) {
      const p = /** @type {Record<string, unknown>} */ (params !== null && typeof params === "object" ? params : {});
      const type = typeof p.type === "string" && DIALOG_TYPES.includes(p.type) ? p.type : "alert";
      /** @type {Dialog} */
      const dialog = { type, message: maskDialogText(p.message), url: typeof p.url === "string" ? p.url.slice(0, 2048) : "" };
      open.set(tabId, dialog);
      const set = waiters.get(tabId);
      waiters.delete(tabId);
      for (const fn of set ?? []) fn(dialog);
    },
    closed(tabId) {
      open.delete(tabId);
    },
    current: (tabId) => open.get(tabId) ?? null,
    watch(tabId) {
      /** @type {(d: Dialog) => void} */
      let fire = () => {};
      /** @type {Promise<Dialog>} */
      const promise = new Promise((resolve) => {
        fire = resolve;
      });
      let set = waiters.get(tabId);
      if (set === undefined) waiters.set(tabId, (set = new Set()));
      set.add(fire);
      return {
        promise,
        cancel() {
          const s = waiters.get(tabId);
          s?.delete(fire);
          if (s !== undefined && s.size === 0) waiters.delete(tabId);
        },
      };
    },
    forget(tabId) {
      open.delete(tabId);
    },
    size: () => open.size,
  };
}

/** How a dialog type reads in a message. @param {string} type */
const named = (type) => (type === "beforeunload" ? 'a "leave this page?" (beforeunload)' : `${type === "alert" ? "an" : "a"} ${type}()`);

/**
 * The `dialog_open` refusal for a call on a tab whose dialog is open; `during` names the call
 * that was running when the dialog opened (it may have acted).
 * @param {number} tabId
 * @param {Dialog} dialog
 * @param {string} [during]
 * @param {{approved?: boolean}} [opts] false: the dialog's frame is on a site the policy does not
 *   approve (an owned tab can wander off), so its text is withheld
 */
export function dialogOpenError(tabId, dialog, during, { approved = true } = {}) {
  const text0 = approved ? JSON.stringify(dialog.message) : "(its text withheld: it comes from a site that is not approved)";
  const what = `${named(dialog.type)} dialog ${text0}`;
  const text = during === undefined
    ? `tab ${tabId} is blocked by ${what}; answer it with page_dialog (accept or dismiss) first`
    : `while ${during} ran, the page on tab ${tabId} opened ${what}; answer it with page_dialog (accept or dismiss), then check the page`;
  return new BridgeError(CODE.DIALOG_OPEN, text);
}
