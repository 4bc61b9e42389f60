// presence-reasons.js — the words a person reads when a tap (or a pairing) was refused, on their
// own options page or in the confirm window (extension pages only the person sees): one
// sentence per stable reason code the host sends with presence_refused (trust/presence.py
// REASON_CODES; a test holds the two sets equal), plus "no_answer" for an authenticator that
// never answered in the page. Pure. It must never be used for anything an agent sees (tool
// results carry the code only), and never show the code's raw text as anything but text.

/** A reason code as the host spells it (anything else is dropped on the way in). */
export const REASON_RE = /^[a-z_]{1,40}$/;

/** @type {Readonly<Record<string, string>>} */
export const REASON_TEXT = Object.freeze({
  unspecified: "the host refused this tap",
  challenge_stale: "this request expired or was already answered: try again",
  wrong_request: "the authenticator's answer was made for a different request",
  wrong_origin: "the answer was not made for this extension's page",
  malformed: "the authenticator's answer was not well formed",
  not_enrolled: "this authenticator is not the one enrolled for this browser",
  no_presence: "the authenticator did not report a touch",
  not_verified: "your PIN or fingerprint is required by this authenticator, and was not given",
  signature_invalid: "the signature does not match the key enrolled for this browser",
  counter_not_increased: "this authenticator's sign counter did not increase (a cloned key?): "
    + "if you did not copy it, revoke it (tabwarden revoke browser) and enrol a new one",
  stored_key_unusable: "the key enrolled for this browser cannot be used: enrol it again",
  attestation_refused: "this authenticator's attestation is not accepted",
  unsupported_key: "this authenticator's key type is not supported",
  already_enrolled: "this authenticator is enrolled already",
  code_refused: "the pairing code is wrong, used, expired or for another browser: check it is typed as printed, or get a new one with `tabwarden pair --browser LABEL` (LABEL: this browser, e.g. chromium)",
  approval_needed: "another browser is enrolled: approve with its authenticator",
  downgrade_refused: "a browser with an enrolled authenticator cannot be paired without one",
  no_answer: "no authenticator answered (cancelled, timed out, or none present)",
});

/**
 * The sentence for a reason code, or "" when there is none (or it is unknown).
 * @param {unknown} reason
 */
export function reasonText(reason) {
  return typeof reason === "string" && Object.hasOwn(REASON_TEXT, reason) ? REASON_TEXT[reason] : "";
}

/**
 * "refused: <code>" with the reason's sentence after it when there is one:
 * "refused: presence_refused — this authenticator's sign counter did not increase …".
 * @param {unknown} code @param {unknown} reason
 */
export function refusedText(code, reason) {
  const why = reasonText(reason);
  return `refused: ${String(code)}${why === "" ? "" : ` — ${why}`}`;
}
