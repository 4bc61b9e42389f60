// host-problem.js — why the native host cannot be reached, in a person's words, from what Chrome
// said when the port closed (runtime.lastError's text) and which browser this is. Pure: no
// chrome, no I/O. It must never claim to know the browser when its brands do not say (it then
// lists the labels that fit), and never name a command other than `tabwarden install`.
//
// Measured in Chromium 156 (Linux): no host manifest, or a manifest whose program is missing →
// "Specified native messaging host not found."; the program starts but its interpreter is
// missing → "Native host has exited." before the host said welcome.

import { CODE } from "./error-codes.js";

export const NOT_FOUND = "Specified native messaging host not found.";
export const FAILED_TO_START = "Failed to start native messaging host.";
export const FORBIDDEN = "Access to the specified native messaging host is forbidden.";
export const EXITED = "Native host has exited.";

/** User-agent brands → the `tabwarden install --browser` label (manifests/locations.json). */
const BRAND_LABELS = Object.freeze([
  ["Google Chrome", "chrome"],
  ["Microsoft Edge", "edge"],
  ["Brave", "brave"],
  ["Vivaldi", "vivaldi"],
]);
/** A browser whose brands say only "Chromium": Chromium itself, or one that does not brand itself. */
const UNBRANDED = Object.freeze(["chromium", "vivaldi"]);

/**
 * The install labels that fit this browser, most likely first: one when its brands name it.
 * @param {unknown} brands navigator.userAgentData.brands
 * @returns {string[]}
 */
export function browserLabels(brands) {
  const names = Array.isArray(brands) ? brands.map((b) => String(b?.brand ?? "")) : [];
  for (const [brand, label] of BRAND_LABELS) if (names.includes(brand)) return [label];
  return [...UNBRANDED];
}

/**
 * The command that registers the host for this browser (more than one label: each, for the
 * person to pick).
 * @param {string[]} labels
 */
export function installCommand(labels) {
  const [first, ...rest] = labels.length > 0 ? labels : UNBRANDED;
  const others = rest.map((l) => `\`tabwarden install --browser ${l}\``).join(", ");
  return `\`tabwarden install --browser ${first}\`${others === "" ? "" : ` (if this is not ${first}: ${others})`}`;
}

/**
 * @typedef {{code: string, cause: string, next: string, command: string}} HostProblem
 */

/**
 * Why the host is unreachable, or null when what Chrome said is not a registration problem (the
 * host was running and went away: the reconnect handles that).
 * @param {{reason: string | null, welcomed: boolean | null}} last the last disconnect
 * @param {string[]} labels browserLabels(...)
 * @returns {HostProblem | null}
 */
export function hostProblem(last, labels) {
  const command = installCommand(labels);
  const reason = typeof last.reason === "string" ? last.reason : "";
  if (reason === NOT_FOUND || reason === FORBIDDEN) {
    return {
      code: CODE.HOST_NOT_INSTALLED, command,
      cause: reason === NOT_FOUND
        ? "the tabwarden host is not registered for this browser (no host manifest, or the program it names is missing)"
        : "the host manifest registered for this browser does not allow this extension",
      next: `run ${command} in a terminal; this browser connects by itself within seconds`,
    };
  }
  if (reason === FAILED_TO_START || (reason === EXITED && last.welcomed === false)) {
    return {
      code: CODE.HOST_CANNOT_START, command,
      cause: reason === FAILED_TO_START
        ? "the host program the manifest names could not be started"
        : "the host exited before it answered (the Python it runs may be missing or cannot import tabwarden)",
      next: `run ${command} again in a terminal (\`tabwarden status\` shows what is wrong)`,
    };
  }
  return null;
}

/** @param {string} s */
const sentence = (s) => `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;

/**
 * The same, in two parts for a page that shows the code as small secondary text: the sentences
 * a person reads, and the bracketed code (what docs/troubleshooting.md is searched by); null
 * when there is no problem.
 * @param {any} p a popup_status / options_status hostProblem
 * @returns {{words: string, bracketed: string} | null}
 */
export function problemParts(p) {
  if (!p || typeof p.cause !== "string" || typeof p.next !== "string") return null;
  return { words: `${sentence(p.cause)} ${sentence(p.next)}`, bracketed: `[${String(p.code ?? "")}]` };
}

/**
 * Show a host problem in `el`: its sentences, then its code as small secondary text
 * (textContent only); the element is hidden when there is none. Returns whether one is shown.
 * @param {{createElement: (tag: string) => any}} doc
 * @param {any} el
 * @param {any} p
 */
export function showProblem(doc, el, p) {
  const parts = problemParts(p);
  if (!el) return parts !== null;
  if (parts === null) {
    el.textContent = "";
    return false;
  }
  const code = doc.createElement("small");
  code.className = "code";
  code.textContent = parts.bracketed;
  el.replaceChildren(`${parts.words} `, code);
  return true;
}

/**
 * What a page shows a person: the cause and the one command that fixes it, as sentences, then
 * the stable code in brackets (what docs/troubleshooting.md is searched by); "" when none.
 * @param {any} p a popup_status / options_status hostProblem (the worker's answer: checked)
 */
export function problemText(p) {
  if (!p || typeof p.cause !== "string" || typeof p.next !== "string") return "";
  return `${sentence(p.cause)} ${sentence(p.next)} [${String(p.code ?? "")}]`;
}
