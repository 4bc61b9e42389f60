// options-page.js — the logic of options.html: show whether this browser is paired (and whether
// the host proved its pinned key, and the "Trust record rolled back" banner while the host serves
// an older record than this browser has seen), and pair it: pair_begin through the service worker, the
// WebAuthn create() here in the page (it cannot run in the worker), pair_complete back through the
// worker. Pure: the document, runtime messaging and credential creation are injected (options.js
// wires the real ones). Once paired, the pairing form folds away under the status
// (#pair-block closed; it stays there to pair again); a host that cannot prove the pinned key
// raises the loud #host-key-alarm and unfolds the form. It must never put host- or page-supplied
// text into the DOM as HTML (textContent only) and never pin anything itself (the worker stores
// the record).

import { versionText } from "./popup-page.js";
import { CODE } from "../shared/error-codes.js";
import { problemParts, showProblem } from "../shared/host-problem.js";
import { setGlance } from "./glance.js";
import { refusalHint } from "./policy-page.js";
import { refusedText } from "../shared/presence-reasons.js";
import { renderRollbackBanner } from "./rollback-banner.js";

/**
 * @typedef {object} OptionsPageApi
 * @property {(msg: object) => Promise<any>} sendMessage chrome.runtime.sendMessage
 * @property {(optionsJSON: object) => Promise<object>} createCredential parse the creation
 *   options, navigator.credentials.create({publicKey}), and return the credential's toJSON()
 * @property {(optionsJSON: object) => Promise<object>} [getAssertion] navigator.credentials.get()
 *   for the approval an already enrolled browser's credential gives (a second browser)
 */

const GATE_TEXT = Object.freeze({
  unpinned: "no host key pinned: requests are served as before pairing",
  verifying: "checking that the host holds the pinned key",
  trusted: "the host proved it holds the pinned key",
  compromised: "the host could NOT prove it holds the pinned key: every request is refused",
});

/**
 * The "Connection" and "This browser" tiles at the top of the page, from an options_status
 * answer: connected means the host answered and proved the pinned key (the gate falls back to
 * "verifying" whenever the connection closes).
 * @param {any} s an options_status answer (or null)
 * @returns {{connection: [import("./glance.js").GlanceState, string, string], browser: [import("./glance.js").GlanceState, string, string]}}
 */
export function glanceOf(s) {
  if (!s || s.ok !== true) {
    return { connection: ["unknown", "Unknown", "the service worker did not answer"], browser: ["unknown", "Unknown", ""] };
  }
  const problem = problemParts(s.hostProblem);
  /** @type {[import("./glance.js").GlanceState, string, string]} */
  const connection = s.rolledBack ? ["bad", "Refusing everything", "the trust record was rolled back"]
    : s.gate === "compromised" ? ["bad", "Host key not proven", "every request is refused"]
      : problem !== null ? ["bad", "Not connected", s.hostProblem?.code === CODE.HOST_CANNOT_START
        ? "the host cannot start" : "the host is not installed for this browser"]
        : s.gate === "trusted" ? ["good", "Connected", "the host proved its key"]
          : s.gate === "verifying" ? ["warn", "Connecting…", "waiting for the host to answer"]
            : ["warn", "Not paired yet", "pair this browser below"];
  const mode = s.windowOnly === true ? "confirms in a window (no authenticator)" : "confirms with your authenticator";
  /** @type {[import("./glance.js").GlanceState, string, string]} */
  const browser = s.paired === true ? ["good", `Paired as ${String(s.browser ?? "")}`, mode]
    : ["warn", "Not paired", "run `tabwarden pair` in a terminal"];
  return { connection, browser };
}

/**
 * @param {{doc: Document, api: OptionsPageApi, onPaired?: () => void, version?: string}} deps
 *   onPaired: called after a successful pairing (options.js re-renders the Policy section);
 *   version: the manifest's, shown in #version
 * @returns {Promise<{pair: () => Promise<string>, refresh: () => Promise<void>}>}
 */
export async function runOptionsPage({ doc, api, onPaired = () => {}, version = "" }) {
  /** @param {string} id @param {string} text */
  const show = (id, text) => {
    const el = doc.getElementById(id);
    if (el) el.textContent = text;
  };
  show("version", versionText(version));
  const pairing = doc.getElementById("pairing");
  const button = /** @type {HTMLButtonElement} */ (doc.getElementById("pair"));
  const input = /** @type {HTMLInputElement} */ (doc.getElementById("code"));
  const windowOnlyBox = /** @type {HTMLInputElement | null} */ (doc.getElementById("window-only"));

  /** @type {boolean | null} whether the last render folded the pairing form */
  let wasFolded = null;

  /** @param {any} s an options_status answer */
  function render(s) {
    const alarm = doc.getElementById("host-key-alarm");
    const block = /** @type {HTMLDetailsElement | null} */ (doc.getElementById("pair-block"));
    const glance = glanceOf(s);
    setGlance(doc, "connection", ...glance.connection);
    setGlance(doc, "browser", ...glance.browser);
    if (!s || s.ok !== true) {
      show("pairing", "Status unavailable (is the service worker running?)");
      renderRollbackBanner(doc, null);
      if (alarm) alarm.hidden = true;
      return;
    }
    renderRollbackBanner(doc, s.rolledBack);
    const problem = doc.getElementById("host-problem");
    if (problem) problem.hidden = !showProblem(doc, problem, s.hostProblem);
    const compromised = s.gate === "compromised";
    pairing?.classList?.toggle("compromised", compromised);
    if (alarm) alarm.hidden = !compromised;
    // Paired and the host proved its key: the form folds away (open it to pair again). Only a
    // change of state moves it: a re-read never folds a form the person opened to type a code.
    const folded = s.paired === true && !compromised;
    if (block && folded !== wasFolded) block.open = !folded;
    wasFolded = folded;
    show("pair-summary", folded ? "Pair this browser again (after tabwarden pair --reset or pair --browser)" : "Pairing");
    if (compromised) {
      show("pairing", "COMPROMISED: the host could not prove it holds the key pinned at pairing. "
        + "Pair again: run `tabwarden pair` in a terminal and enter its code below.");
    } else if (s.paired) {
      const how = s.windowOnly === true ? " — no authenticator: confirmations are a click in a window (software confirmation)" : "";
      // The host key is in "Technical details" (#fingerprint), not in the sentence.
      show("pairing", `Paired with ${String(s.browser ?? "")}${how}.`);
    } else {
      show("pairing", "Not paired. Run `tabwarden pair` in a terminal and enter its code below.");
    }
    show("fingerprint", s.paired ? String(s.fingerprint ?? "") : "");
    show("gate", GATE_TEXT[/** @type {keyof typeof GATE_TEXT} */ (s.gate)] ?? String(s.gate ?? ""));
  }

  async function refresh() {
    let s = null;
    try {
      s = await api.sendMessage({ type: "options_status" });
    } catch {
      s = null;
    }
    render(s);
  }

  let busy = false;
  /** @returns {Promise<string>} the final status text */
  async function pair() {
    if (busy) return "busy";
    busy = true;
    button.disabled = true;
    /** @param {string} text */
    const done = (text) => {
      show("status", text);
      show("pair-hint", refusalHint(text));
      busy = false;
      button.disabled = false;
      return text;
    };
    try {
      show("status", "pairing: asking the host");
      const begun = await api.sendMessage({ type: "pair_begin", code: String(input?.value ?? "") });
      if (!begun || begun.ok !== true) return done(refusedText(begun?.code ?? CODE.INTERNAL_ERROR, begun?.reason));
      show("fingerprint", String(begun.fingerprint ?? ""));
      /** @param {unknown} o */
      const publicKey = (o) => {
        const opts = o && typeof o === "object" ? /** @type {any} */ (o) : {};
        return opts.publicKey ?? opts;
      };
      /** @type {Record<string, unknown>} */
      const message = { type: "pair_complete", challengeId: begun.challengeId };
      if (begun.approval) {
        // Another browser is enrolled: one of its credentials (e.g. the same security key) must
        // approve adding this one; the code alone is not enough.
        show("status", "pairing: another browser is enrolled — approve with its authenticator (e.g. your security key)");
        if (typeof api.getAssertion !== "function") return done(`refused: ${CODE.PRESENCE_REFUSED}`);
        try {
          const answer = await api.getAssertion(publicKey(begun.approval.options));
          message.approval = { challengeId: begun.approval.challengeId, response: answer };
        } catch {
          return done(`refused: ${CODE.PRESENCE_REFUSED} (no enrolled credential approved: touch the authenticator `
            + "another browser enrolled, with a new code from `tabwarden pair --browser LABEL`)");
        }
      }
      if (windowOnlyBox?.checked === true) {
        message.windowOnly = true;
      } else {
        show("status", "pairing: touch your authenticator");
        try {
          message.response = await api.createCredential(publicKey(begun.options));
        } catch {
          return done(`refused: ${CODE.PRESENCE_REFUSED} (no authenticator answered; to pair without one, tick `
            + "\"no authenticator\" and enter a new code from `tabwarden pair --browser LABEL`)");
        }
      }
      const finished = await api.sendMessage(message);
      if (!finished || finished.ok !== true) return done(refusedText(finished?.code ?? CODE.INTERNAL_ERROR, finished?.reason));
      if (input) input.value = "";
      await refresh();
      show("fingerprint", String(finished.fingerprint ?? ""));
      try {
        onPaired();
      } catch {
        // the Policy section is not pairing's concern
      }
      return done(finished.windowOnly === true
        ? `paired with ${String(finished.browser ?? "")}, no authenticator (software confirmation)`
        : `paired with ${String(finished.browser ?? "")}`);
    } catch {
      return done(`refused: ${CODE.INTERNAL_ERROR}`);
    }
  }

  button.addEventListener("click", () => {
    pair().catch(() => {});
  });
  await refresh();
  return { pair, refresh };
}
