// policy-words.js — the policy keys in a person's words, and how a person turns a switch on: the
// options page shows them, and a refusal because a switch is off ends with them. Pure: no chrome.
// It must never suggest a way to widen the policy other than a person's own (the terminal's
// typed phrase, or the options page's authenticator tap).

/**
 * Plain words for the policy keys (trust/policy.py POLICY_KEYS) — words only: the keys shown are
 * the ones the host's policy has, and one without words here is shown by its name.
 * @type {Readonly<Record<string, string>>}
 */
export const POLICY_WORDS = Object.freeze({
  origins: "Sites the agent may use",
  confirm: "Actions that ask you first",
  eval: "Page scripts (page_eval)",
  upload: "File uploads",
  passwordFill: "Typing into password fields",
  clickGraceSeconds: "No new question on that tab and site after an allowed action for",
  confirmTimeoutSeconds: "Unanswered confirmations refused after",
  presenceConfirm: "Page scripts and uploads confirmed with a tap",
  closeTabsOnSessionEnd: "An ended agent's tabs are closed",
  maxAgentTabs: "Most tabs agents may keep open",
  dialogArming: "Agents may arm an answer to a page's next dialog",
  pageFetch: "Requests sent from a page with its cookies (page_fetch)",
  consoleCapture: "Agents' tabs record console errors for page_console",
  networkCapture: "Agents' tabs record network responses for page_network",
  provenance: "An address or typed value that came from another site's page",
});

/**
 * How a person turns on the policy switch `key`, for the end of a refusal.
 * @param {string} key
 */
export function turnOnWords(key) {
  const label = Object.hasOwn(POLICY_WORDS, key) ? POLICY_WORDS[key] : null;
  const page = label === null ? "" : `, or "${label}" on the extension's options page (their authenticator confirms it)`;
  return `a person can turn it on with \`tabwarden policy set ${key}=true\` at a terminal${page}`;
}
