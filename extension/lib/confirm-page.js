// confirm-page.js — the logic of the confirm window's page: fetch this confirmation's details
// from the service worker, show them, and send the person's answer. Pure: the document and the
// runtime/permission calls are injected (confirm.js wires the real ones). It must never put
// page-controlled text into the DOM as HTML (textContent only), never answer "allow" for an
// origin unless Chrome granted its host permission, and must call permissions.request first
// thing in the click handler (the click is the user gesture Chrome requires).

/**
 * @typedef {object} ConfirmPageApi
 * @property {(msg: object) => Promise<any>} sendMessage chrome.runtime.sendMessage
 * @property {(pattern: string) => Promise<boolean>} requestPermission chrome.permissions.request
 */

/**
 * @param {{doc: Document, search: string, api: ConfirmPageApi}} deps
 * @returns {Promise<"shown" | "expired">}
 */
export async function runConfirmPage({ doc, search, api }) {
  const id = new URLSearchParams(search).get("id") ?? "";
  const allow = /** @type {HTMLButtonElement} */ (doc.getElementById("allow"));
  const deny = /** @type {HTMLButtonElement} */ (doc.getElementById("deny"));
  /** @param {string} elementId @param {string} text */
  const show = (elementId, text) => {
    const el = doc.getElementById(elementId);
    if (el) el.textContent = text;
  };
  const setEnabled = (on) => {
    allow.disabled = !on;
    deny.disabled = !on;
  };
  setEnabled(false);

  let res = null;
  try {
    res = await api.sendMessage({ type: "confirm_details", id });
  } catch {
    res = null;
  }
  const d = res && res.ok === true && res.details && typeof res.details === "object" ? res.details : null;
  if (d === null) {
    show("status", "This request has expired or was already answered. You can close this window.");
    return "expired";
  }
  const isOrigin = d.kind === "origin";
  show("heading", isOrigin ? "Allow a new site?" : "Confirm an action");
  show("tool", String(d.tool ?? ""));
  show("origin", String(d.origin ?? ""));
  show("detail", String(d.detail ?? ""));

  let answered = false;
  /** @param {"allow" | "deny"} decision */
  const answer = (decision) => {
    if (answered) return;
    answered = true;
    setEnabled(false);
    show("status", decision === "allow" ? "Allowed." : "Denied.");
    api.sendMessage({ type: "confirm_answer", id, decision }).catch(() => {});
  };

  allow.addEventListener("click", () => {
    if (answered || allow.disabled) return;
    if (!isOrigin) {
      answer("allow");
      return;
    }
    let request;
    try {
      request = api.requestPermission(String(d.pattern ?? "")); // first: inside the gesture
    } catch {
      answer("deny");
      return;
    }
    setEnabled(false);
    Promise.resolve(request).then(
      (granted) => answer(granted === true ? "allow" : "deny"),
      () => answer("deny"),
    );
  });
  deny.addEventListener("click", () => answer("deny"));
  setEnabled(true);
  deny.focus(); // Enter on an unread window denies
  return "shown";
}
