// popup-page.js — the logic of popup.html (the toolbar popup): the state at a glance (a coloured
// #indicator with a word or two: connected, reconnecting, host not installed / cannot start (and
// the command that fixes it), killed, host key not proven, rolled back;
// the details in #state), the "Trust record rolled back" banner (#rollback,
// ui/rollback-banner.js) while it applies, a one-click kill switch (#kill, free) — or, while it
// is engaged, #kill-engaged saying how to release it — a link to the options page, and the last
// calls with their client, tool and outcome (#recent). Pure: the document and runtime messaging
// are injected (popup.js wires the real ones). It must never put worker- or host-supplied text
// into the DOM as HTML (textContent only) and never offer to release the kill switch (that needs
// a tap on the options page, or the terminal).

import { CODE } from "../shared/error-codes.js";
import { problemText, showProblem } from "../shared/host-problem.js";
import { replaceChildrenIfChanged } from "./dom-keep.js";
import { renderRollbackBanner } from "./rollback-banner.js";

const PHASE_TEXT = Object.freeze({
  ready: "connected",
  awaiting_welcome: "connecting",
  mismatch: "host protocol mismatch",
  reconnect_wait: "disconnected (reconnecting)",
  idle: "disconnected",
  stopped: "stopped",
});

/**
 * The extension's version as the popup and options page show it (#version): its manifest's
 * `version`, or nothing when it is not a plain version string.
 * @param {unknown} version
 */
export function versionText(version) {
  return typeof version === "string" && /^[0-9][0-9.]{0,30}$/.test(version) ? `v${version}` : "";
}

/**
 * One line of #state.
 * @param {any} s a popup_status answer
 */
export function stateText(s) {
  if (!s || s.ok !== true) return "Status unavailable (is the service worker running?)";
  // A phase this page has no words for is "state unknown", never its raw name.
  const phase = Object.hasOwn(PHASE_TEXT, String(s.phase)) ? PHASE_TEXT[/** @type {keyof typeof PHASE_TEXT} */ (s.phase)] : "state unknown";
  const gate = s.gate === "compromised" ? "host key NOT proven: every request refused"
    : s.gate === "trusted" ? "host key proven" : s.gate === "verifying" ? "checking host key"
      : "not paired: run `tabwarden pair` in a terminal, then enter its code on the options page";
  const kill = s.killed === true ? "KILL SWITCH ENGAGED" : s.killed === false ? "kill switch off" : "kill switch unknown";
  const back = s.rolledBack ? " · TRUST RECORD ROLLED BACK: every request refused" : "";
  // The host cannot start: that, and its command, is all there is to say (no reconnecting,
  // no host key, no kill state: nothing is connected to know them from).
  const missing = problemText(s.hostProblem);
  if (missing !== "" && s.phase !== "ready") return missing;
  return `${phase}${seenText(s)} · ${gate} · ${kill}${back}`;
}


/**
 * The indicator's state and word, most alarming first: a rolled-back record or an unproven host
 * key refuses everything whatever else holds; then the kill switch; then the connection.
 * @param {any} s a popup_status answer
 * @returns {{state: "rolledback" | "unproven" | "killed" | "connected" | "unpaired" | "reconnecting" | "mismatch" | "missing" | "unknown", word: string}}
 */
export function indicatorOf(s) {
  if (!s || s.ok !== true) return { state: "unknown", word: "Status unavailable" };
  if (s.rolledBack) return { state: "rolledback", word: "Trust record rolled back" };
  if (s.gate === "compromised") return { state: "unproven", word: "Host key not proven" };
  if (s.killed === true) return { state: "killed", word: "Kill switch engaged" };
  // Connected to a host this browser has not paired with: nothing an agent asks can work yet.
  if (s.phase === "ready" && s.gate === "unpinned") return { state: "unpaired", word: "Connected, not paired yet" };
  if (s.phase === "ready") return { state: "connected", word: "Connected" };
  if (s.phase === "mismatch") return { state: "mismatch", word: "Host version mismatch" };
  if (s.phase === "stopped") return { state: "unknown", word: "Stopped" };
  if (s.hostProblem?.code === CODE.HOST_NOT_INSTALLED) return { state: "missing", word: "Host not installed for this browser" };
  if (s.hostProblem?.code === CODE.HOST_CANNOT_START) return { state: "missing", word: "Host cannot start" };
  return { state: "reconnecting", word: "Reconnecting" };
}

/**
 * One line of #recent: "17:42:10 claude-code · page_click — ok".
 * @param {any} c a recent call
 */
export function callText(c) {
  const at = typeof c?.at === "number" ? new Date(c.at).toLocaleTimeString() : "";
  const who = typeof c?.client === "string" && c.client !== "" ? `${c.client} · ` : "";
  const outcome = c?.ok === true ? "ok" : `error: ${String(c?.code ?? CODE.INTERNAL_ERROR)}`;
  return `${at} ${who}${String(c?.action ?? "?")} — ${outcome}`.trim();
}

/** @param {unknown} ms */
const clock = (ms) => (typeof ms === "number" && Number.isFinite(ms) ? new Date(ms).toLocaleTimeString() : null);

/**
 * Connected since / reconnecting in N s / last disconnect and its reason (worker/session.js).
 * @param {any} s a popup_status answer
 */
export function seenText(s) {
  const parts = [];
  const since = clock(s.connectedSince);
  if (s.phase === "ready" && since !== null) parts.push(`since ${since}`);
  if (s.phase !== "ready" && typeof s.reconnectInMs === "number") parts.push(`next try in ${Math.ceil(s.reconnectInMs / 1000)} s`);
  const at = clock(s.lastDisconnectAt);
  if (typeof s.lastDisconnectReason === "string") {
    parts.push(`last disconnect${at === null ? "" : ` ${at}`}: ${s.lastDisconnectReason.slice(0, 120)}`);
  }
  const started = clock(s.workerStartedAt);
  if (started !== null) parts.push(`worker started ${started}`);
  return parts.length === 0 ? "" : ` (${parts.join("; ")})`;
}

/**
 * @param {{doc: Document, api: {sendMessage: (msg: object) => Promise<any>, openOptionsPage?: () => Promise<void>},
 *   now?: () => number, version?: string}} deps version: the manifest's (#version)
 * @returns {Promise<{refresh: () => Promise<void>, kill: () => Promise<string>}>}
 */
export async function runPopupPage({ doc, api, version = "" }) {
  /** @param {string} id @param {string} text */
  const show = (id, text) => {
    const el = doc.getElementById(id);
    if (el) el.textContent = text;
  };
  show("version", versionText(version));
  const killButton = /** @type {HTMLButtonElement} */ (doc.getElementById("kill"));

  /** @param {any} s */
  function render(s) {
    // A named cause (host not installed, cannot start): its sentences, its code as small
    // secondary text, nothing about reconnecting after it.
    const named = s?.ok === true && s.phase !== "ready" && problemText(s.hostProblem) !== "";
    if (!named || !showProblem(doc, doc.getElementById("state"), s.hostProblem)) show("state", stateText(s));
    const { state, word } = indicatorOf(s);
    show("state-word", word);
    doc.getElementById("indicator")?.setAttribute?.("data-state", state);
    const rolledBack = renderRollbackBanner(doc, s?.ok === true ? s.rolledBack : null);
    doc.getElementById("state")?.classList?.toggle("alarm", s?.killed === true || s?.gate === "compromised" || rolledBack);
    // Engaged: no "Engage" offer, but what it means and how to release it.
    const engaged = s?.ok === true && s.killed === true;
    killButton.hidden = engaged;
    const note = doc.getElementById("kill-engaged");
    if (note) note.hidden = !engaged;
    const list = doc.getElementById("recent");
    /** @type {Array<{at?: unknown, ok?: unknown, code?: unknown, action?: unknown} | null>} */
    const calls = s && s.ok === true && Array.isArray(s.recent) ? s.recent.slice(-20).reverse() : [];
    const items = calls.map((c) => {
      const li = doc.createElement("li");
      li.textContent = callText(c);
      li.className = c?.ok === true ? "ok" : "error";
      return li;
    });
    if (items.length === 0) {
      const li = doc.createElement("li");
      li.textContent = "no calls yet";
      items.push(li);
    }
    replaceChildrenIfChanged(list, JSON.stringify(calls), () => items);
  }

  async function refresh() {
    let s = null;
    try {
      s = await api.sendMessage({ type: "popup_status" });
    } catch {
      s = null;
    }
    render(s);
  }

  async function kill() {
    killButton.disabled = true;
    let r = null;
    try {
      r = await api.sendMessage({ type: "popup_kill" });
    } catch {
      r = null;
    }
    const text = r && r.ok === true ? "done: kill" : `refused: ${String(r?.code ?? CODE.INTERNAL_ERROR)}`;
    await refresh();
    show("popup-status", text);
    killButton.disabled = false;
    return text;
  }

  killButton.addEventListener("click", () => {
    kill().catch(() => {});
  });
  // The options page through Chrome's own call: it focuses an open one instead of a second tab.
  for (const id of ["open-options", "release-options"]) {
    doc.getElementById(id)?.addEventListener("click", (/** @type {Event} */ e) => {
      if (typeof api.openOptionsPage !== "function") return; // the plain link then
      e?.preventDefault?.();
      api.openOptionsPage().catch(() => {});
    });
  }
  await refresh();
  return { refresh, kill };
}
