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
  networkCapture: "Agents' tabs record network requests for page_network",
  provenance: "An address or typed value that came from another site's page",
  agentTabsAudible: "Agents' tabs may play sound (otherwise they are muted)",
  toolFamilies: "Tool families every agent's tool list shows beside the default tools",
});

/**
 * The refusals because a policy switch is off, by the key that allows them: the value that turns
 * it on (what `tabwarden policy set KEY=VALUE` takes), the options page's control that does it
 * (its button's words in options.html; absent: the terminal only), and what else a person can
 * do instead. The one table every such refusal's words come from (turnOnWords, teach); a test
 * runs every entry's command through the real CLI's parser and the policy's validation.
 * @type {Readonly<Record<string, Readonly<{value: unknown, control?: string, instead?: string}>>>}
 */
export const SWITCH_REFUSALS = Object.freeze({
  eval: Object.freeze({ value: true, control: "Allow page scripts (tap)" }),
  upload: Object.freeze({ value: true, control: "Allow file uploads (tap)" }),
  pageFetch: Object.freeze({ value: true, control: "Allow requests with the page's cookies (tap)" }),
  dialogArming: Object.freeze({ value: true, control: "Let the agent arm one answer to a page's next dialog; others are dismissed (tap)" }),
  consoleCapture: Object.freeze({ value: true, control: "Record agents' tabs' console errors for page_console (tap)" }),
  networkCapture: Object.freeze({ value: true, control: "Record agents' tabs' requests for page_network (tap)" }),
  passwordFill: Object.freeze({
    value: true,
    instead: "better, ask the person to sign in themselves: they type the password, and none of it reaches the agent",
  }),
});

/**
 * How a person turns on the policy switch `key`, for the end of a refusal: the exact terminal
 * command, the options page's control when it has one, and the alternative when there is one.
 * @param {string} key
 */
export function turnOnWords(key) {
  const entry = Object.hasOwn(SWITCH_REFUSALS, key) ? SWITCH_REFUSALS[key] : null;
  const command = `\`tabwarden policy set ${key}=${JSON.stringify(entry?.value ?? true)}\``;
  const label = Object.hasOwn(POLICY_WORDS, key) ? POLICY_WORDS[key] : key;
  const page = entry?.control === undefined ? ""
    : `, or the "${entry.control}" button for "${label}" on the extension's options page (their authenticator confirms it)`;
  const instead = entry?.instead === undefined ? "" : `; or, ${entry.instead}`;
  return `a person can turn it on with ${command} at a terminal${page}${instead}`;
}

/**
 * The policy key a refusal names as off (its stable words: "the policy's KEY is off", "policy
 * KEY is off", "(policy KEY)", "does not enable \"KEY\""), or null.
 * @param {string} message
 */
export function switchOf(message) {
  const m = /\bpolicy(?:'s)? ([A-Za-z]+) is off\b|\(policy ([A-Za-z]+)\)|does not enable "([A-Za-z]+)"/.exec(message);
  const key = m === null ? null : (m[1] ?? m[2] ?? m[3]);
  return key !== null && key !== undefined && Object.hasOwn(SWITCH_REFUSALS, key) ? key : null;
}

/**
 * A `policy_denied` message with how to allow it: a refusal because a switch is off ends with
 * turnOnWords (once: a message that already names the command is kept), within `max` characters
 * (the refusal's own words are cut, never the way out). Any other code or message is returned as
 * it is (a guard no setting turns off says its own next step).
 * @param {string} code
 * @param {string} message
 * @param {number} max
 */
export function teach(code, message, max) {
  const key = code === "policy_denied" ? switchOf(message) : null;
  if (key === null || message.includes(`tabwarden policy set ${key}=`)) return message.slice(0, max);
  const words = `; ${turnOnWords(key)}`;
  return message.slice(0, Math.max(0, max - words.length)) + words;
}
