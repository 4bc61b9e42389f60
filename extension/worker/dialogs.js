// dialogs.js — the JavaScript dialogs (alert, confirm, prompt, beforeunload) of each owned tab,
// as the debugger's Page.javascriptDialogOpening/Closed events report them: the one open now, who
// is waiting to hear of one, the last few and how each was answered, and the one-shot answer an
// agent armed for the next one (policy dialogArming). With arming off (the default) a dialog stays
// open until page_dialog answers it and calls answer `dialog_open`; with it on, a dialog is
// answered at once: as armed when an arm is set for the dialog's origin (then the arm is gone),
// else dismissed ("auto-dismissed"), so it never blocks. Pure: no chrome. It must never hold or
// hand out a dialog's text unmasked (card-like numbers masked as page text is, capped), never hold
// a prompt's armed answer anywhere but in its arm (never in the recent list), never keep an arm
// past a navigation of its tab, a change of the tab's policy to arming off, the debugger leaving
// the tab or the tab being forgotten, and never keep a tab's dialog after it closed.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { maskCards } from "./redact.js";

/** The dialog types Chrome reports (CDP Page.DialogType). */
export const DIALOG_TYPES = Object.freeze(["alert", "confirm", "prompt", "beforeunload"]);
/** Longest dialog text kept and shown (characters; an error message holds at most 500). */
export const MAX_DIALOG_TEXT = 300;
/** Dialogs remembered per tab (the oldest goes first). */
export const MAX_RECENT = 10;

/**
 * How a dialog was answered, and by whom: "agent" (page_dialog answered it while open), "arm"
 * (the answer armed for it), "tabwarden" (dismissed because nothing was armed), "page or person"
 * (it closed without us: the person answered it in Chrome, or the page went away).
 * @typedef {{answered: "accepted" | "dismissed" | "auto-dismissed", by: "agent" | "arm" | "tabwarden" | "page or person"}} Answer
 */
/**
 * One dialog as it may be shown: type, text masked, origin of the frame that opened it, how it
 * was answered ("open" while it is).
 * @typedef {{type: string, message: string, origin: string, answered: string, by: string}} RecentDialog
 */
/**
 * One open dialog: its type, its text masked, the URL of the frame that opened it; `entry` is its
 * row in the recent list, `pending` the answer being sent.
 * @typedef {{type: string, message: string, url: string, entry: RecentDialog, pending: Answer | null}} Dialog
 */
/**
 * The one-shot answer armed for the next dialog of a tab's current document.
 * @typedef {{accept: boolean, promptText: string | null, origin: string}} Arm
 */
/**
 * What the debugger sends for a dialog answered at once (Page.handleJavaScriptDialog), and how it
 * is recorded once sent.
 * @typedef {{params: {accept: boolean, promptText?: string}, how: Answer}} Disposition
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
 * @property {(tabId: number, params: unknown) => Disposition | null} opened
 *   Page.javascriptDialogOpening: null when the dialog stays open (arming off), else the answer
 *   to send at once
 * @property {(tabId: number, how: Answer) => void} answering an answer is being sent
 * @property {(tabId: number) => void} answerFailed it could not be sent: the dialog stays open
 * @property {(tabId: number, params?: unknown) => void} closed Page.javascriptDialogClosed
 * @property {(tabId: number) => Dialog | null} current
 * @property {(tabId: number) => Dialog | null} blocking the open dialog nobody is answering
 * @property {(tabId: number) => {promise: Promise<Dialog>, cancel: () => void}} watch resolves
 *   when a dialog opens on the tab after this call and stays open, or a beforeunload is
 *   auto-dismissed (the navigation it guarded will not happen); never, once cancelled
 * @property {(tabId: number, on: boolean) => void} setArming the policy in force for the tab's
 *   calls (dialogArming); off clears its arm
 * @property {(tabId: number) => boolean} arming
 * @property {(tabId: number, arm: Arm | null) => void} arm set (or clear) the tab's one-shot answer
 * @property {(tabId: number) => Arm | null} armed
 * @property {(tabId: number) => void} navigated the tab's document changed: its arm is gone
 * @property {(tabId: number) => number} navigations how many navigations the tab has had (a
 *   change while the person was asked means another document)
 * @property {(tabId: number) => RecentDialog[]} recent oldest first
 * @property {(tabId: number) => void} forget the debugger left the tab: its open dialog and arm
 *   are unseen from now on (the recent list stays)
 * @property {(tabId: number) => void} removed the tab left its session or closed: everything
 * @property {() => number} size tabs with an open dialog
 */

/** @returns {Dialogs} */
export function createDialogs() {
  /** @type {Map<number, Dialog>} */
  const open = new Map();
  /** @type {Map<number, Set<(d: Dialog) => void>>} */
  const waiters = new Map();
  /** @type {Map<number, RecentDialog[]>} */
  const history = new Map();
  /** Tabs whose calls run with dialogArming on. @type {Set<number>} */
  const armingOn = new Set();
  /** @type {Map<number, Arm>} */
  const arms = new Map();
  /** @type {Map<number, number>} */
  const navs = new Map();

  /** @param {number} tabId @param {Dialog} dialog */
  function notify(tabId, dialog) {
    const set = waiters.get(tabId);
    waiters.delete(tabId);
    for (const fn of set ?? []) fn(dialog);
  }

  /** @param {number} tabId @param {RecentDialog} entry */
  function remember(tabId, entry) {
    let list = history.get(tabId);
    if (list === undefined) history.set(tabId, (list = []));
    list.push(entry);
    if (list.length > MAX_RECENT) list.splice(0, list.length - MAX_RECENT);
  }

  return {
    opened(tabId, params) {
      const p = /** @type {Record<string, unknown>} */ (params !== null && typeof params === "object" ? params : {});
      const type = typeof p.type === "string" && DIALOG_TYPES.includes(p.type) ? p.type : "alert";
      const url = typeof p.url === "string" ? p.url.slice(0, 2048) : "";
      const message = maskDialogText(p.message);
      /** @type {RecentDialog} */
      const entry = { type, message, origin: originOf(url) ?? "", answered: "open", by: "" };
      remember(tabId, entry);
      /** @type {Dialog} */
      const dialog = { type, message, url, entry, pending: null };
      open.set(tabId, dialog);
      if (!armingOn.has(tabId)) {
        notify(tabId, dialog);
        return null;
      }
      const arm = arms.get(tabId) ?? null;
      // An arm answers only a dialog from the origin it was armed on (not an embedded frame's).
      if (arm !== null && arm.origin !== "" && arm.origin === entry.origin) {
        arms.delete(tabId); // one shot
        /** @type {Disposition["params"]} */
        const out = { accept: arm.accept };
        if (arm.accept && type === "prompt" && arm.promptText !== null) out.promptText = arm.promptText;
        dialog.pending = { answered: arm.accept ? "accepted" : "dismissed", by: "arm" };
        return { params: out, how: dialog.pending };
      }
      dialog.pending = { answered: "auto-dismissed", by: "tabwarden" };
      // Staying on the page is the answer: the navigation the call waits for will not come.
      if (type === "beforeunload") notify(tabId, dialog);
      return { params: { accept: false }, how: dialog.pending };
    },
    answering(tabId, how) {
      const d = open.get(tabId);
      if (d !== undefined) d.pending = how;
    },
    answerFailed(tabId) {
      const d = open.get(tabId);
      if (d === undefined) return;
      d.pending = null;
      notify(tabId, d); // it blocks the tab after all: the running call learns it
    },
    closed(tabId, params) {
      const d = open.get(tabId);
      open.delete(tabId);
      if (d === undefined || d.entry.answered !== "open") return;
      const result = params !== null && typeof params === "object" ? /** @type {{result?: unknown}} */ (params).result : undefined;
      const how = d.pending ?? { answered: result === true ? "accepted" : "dismissed", by: "page or person" };
      d.entry.answered = how.answered;
      d.entry.by = how.by;
    },
    current: (tabId) => open.get(tabId) ?? null,
    blocking(tabId) {
      const d = open.get(tabId);
      return d !== undefined && d.pending === null ? d : null;
    },
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
    setArming(tabId, on) {
      if (on) armingOn.add(tabId);
      else {
        armingOn.delete(tabId);
        arms.delete(tabId);
      }
    },
    arming: (tabId) => armingOn.has(tabId),
    arm(tabId, arm) {
      if (arm === null) arms.delete(tabId);
      else if (armingOn.has(tabId)) arms.set(tabId, { accept: arm.accept === true, promptText: arm.promptText, origin: arm.origin });
    },
    armed: (tabId) => arms.get(tabId) ?? null,
    navigated(tabId) {
      arms.delete(tabId);
      navs.set(tabId, (navs.get(tabId) ?? 0) + 1);
    },
    navigations: (tabId) => navs.get(tabId) ?? 0,
    recent: (tabId) => (history.get(tabId) ?? []).map((e) => ({ ...e })),
    forget(tabId) {
      open.delete(tabId);
      arms.delete(tabId);
      navs.set(tabId, (navs.get(tabId) ?? 0) + 1); // unseen navigations may follow
    },
    removed(tabId) {
      open.delete(tabId);
      arms.delete(tabId);
      history.delete(tabId);
      armingOn.delete(tabId);
      navs.delete(tabId);
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

/**
 * The `navigation_cancelled` for a call during which the page asked before leaving
 * (beforeunload) and was answered "stay" because nothing was armed (policy dialogArming on).
 * @param {number} tabId
 * @param {Dialog} dialog
 * @param {string} during
 * @param {boolean} approved false: its text is withheld (a site the policy does not approve)
 */
export function leaveRefused(tabId, dialog, during, approved) {
  const text0 = approved ? ` ${JSON.stringify(dialog.message)}` : "";
  return new BridgeError(CODE.NAVIGATION_CANCELLED,
    `while ${during} ran, the page on tab ${tabId} asked before leaving${text0}; nothing was armed, so tabwarden dismissed it and the tab stayed on its page. To leave, arm an accept first (page_dialog with arm "accept"), then repeat the call`);
}
