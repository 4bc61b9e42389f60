// policy.js — the signed policy a request carries, read once into a deeply frozen object that
// answers the questions handlers ask (`approves(origin)`, `confirms(action)`, `allows(flag)`, the
// timeouts, the caps). Pure: no chrome, no I/O. The raw JSON is read here and nowhere else
// (tests/extension/policy.test.mjs holds the rest of the extension to that). It must never widen
// what a malformed field says: a missing, mistyped or unreadable value answers the narrowest
// value its reader had before this module (no origin approved, every flag off, every action
// confirmed, default timeouts and caps), and it must never read an inherited property (a key
// counts only when it is the object's own, so a polluted prototype adds nothing).
//
// Theory: dispatch.js parses the request's policy at the door and hands handlers `ctx.policy` as
// a Policy; the host's change notice (background.js) is parsed the same way. The answers mirror
// trust/policy.py's ranges and defaults where the extension applies them.

import { isApproved, normaliseOrigin } from "../shared/origin.js";
import { isPlainObject } from "../shared/wire.js";

/**
 * policy.confirmTimeoutSeconds: default and bounds (trust/policy.py: 5..600, default 40 — below
 * the 60 s request timeout common MCP clients use, so the agent hears `confirm_timeout` rather
 * than giving up on its own).
 */
export const DEFAULT_CONFIRM_TIMEOUT_S = 40;
const MIN_CONFIRM_TIMEOUT_S = 5;
const MAX_CONFIRM_TIMEOUT_S = 600;
/** policy.clickGraceSeconds: longest grace (trust/policy.py 0..600; worker/grace.js caps too). */
const MAX_CLICK_GRACE_S = 600;
/** The agent-tab cap when the policy does not say (an older host): the policy's own default. */
export const DEFAULT_MAX_AGENT_TABS = 20;
const MAX_AGENT_TABS_BOUNDS = Object.freeze([1, 200]);

/** The policy's on/off keys: each is on only when its value is exactly `true`. */
export const POLICY_FLAGS = Object.freeze(/** @type {const} */ ([
  "eval", "upload", "passwordFill", "presenceConfirm", "closeTabsOnSessionEnd", "dialogArming",
  "pageFetch", "consoleCapture", "networkCapture", "agentTabsAudible",
]));

/** @typedef {typeof POLICY_FLAGS[number]} PolicyFlag */
/** @typedef {"strict" | "confirm" | "off"} ProvenanceMode */

/**
 * The parsed policy. Every field is read-only and the object, its lists and its functions are
 * frozen.
 * @typedef {Readonly<{
 *   approvedOrigins: readonly string[],
 *   approves: (origin: string | null) => boolean,
 *   confirmList: readonly string[] | null,
 *   confirms: (action: string) => boolean,
 *   allows: (flag: string) => boolean,
 *   confirmTimeoutMs: number,
 *   clickGraceSeconds: number,
 *   provenance: ProvenanceMode,
 *   maxAgentTabs: number,
 * }>} Policy
 *   approvedOrigins: the exact origins approved, normalised (invalid entries dropped; the
 *   navigation rules are built from it); approves: shared/origin.js isApproved over them;
 *   confirmList: the actions the person confirms, null when the list is unreadable (then every
 *   action is confirmed); allows: a POLICY_FLAGS key that is exactly true (any other name: false)
 */

/**
 * The value of an own property of `raw` (undefined when absent or inherited).
 * @param {Record<string, unknown>} raw
 * @param {string} key
 */
const own = (raw, key) => (Object.hasOwn(raw, key) ? raw[key] : undefined);

/**
 * policy.confirmTimeoutSeconds in ms: any finite number clamped to 5..600 s; else 40 s.
 * @param {unknown} s
 */
function confirmTimeoutMsOf(s) {
  const n = typeof s === "number" && Number.isFinite(s) ? s : DEFAULT_CONFIRM_TIMEOUT_S;
  return Math.min(MAX_CONFIRM_TIMEOUT_S, Math.max(MIN_CONFIRM_TIMEOUT_S, n)) * 1000;
}

/**
 * policy.clickGraceSeconds: a finite positive number (at most 600); anything else is no grace.
 * @param {unknown} s
 */
function clickGraceOf(s) {
  return typeof s === "number" && Number.isFinite(s) && s > 0 ? Math.min(s, MAX_CLICK_GRACE_S) : 0;
}

/**
 * policy.maxAgentTabs: an integer 1..200; anything else is the default.
 * @param {unknown} v
 */
function maxAgentTabsOf(v) {
  const [lo, hi] = MAX_AGENT_TABS_BOUNDS;
  return Number.isInteger(v) && /** @type {number} */ (v) >= lo && /** @type {number} */ (v) <= hi
    ? /** @type {number} */ (v) : DEFAULT_MAX_AGENT_TABS;
}

/**
 * policy.provenance: "strict" or "off" as written; anything else asks ("confirm").
 * @param {unknown} v
 * @returns {ProvenanceMode}
 */
function provenanceOf(v) {
  return v === "strict" || v === "off" ? v : "confirm";
}

/**
 * The approved origins, normalised, without duplicates; a list that is not an array approves none.
 * @param {unknown} list
 * @returns {readonly string[]}
 */
function originsOf(list) {
  if (!Array.isArray(list)) return Object.freeze([]);
  /** @type {Set<string>} */
  const out = new Set();
  for (let i = 0; i < list.length; i += 1) {
    const o = normaliseOrigin(list[i]);
    if (o !== null) out.add(o);
  }
  return Object.freeze([...out]);
}

/**
 * The confirm list's string entries; null (confirm everything) when it is not an array.
 * @param {unknown} list
 * @returns {readonly string[] | null}
 */
function confirmListOf(list) {
  if (!Array.isArray(list)) return null;
  /** @type {Set<string>} */
  const out = new Set();
  for (let i = 0; i < list.length; i += 1) {
    const a = list[i];
    if (typeof a === "string") out.add(a);
  }
  return Object.freeze([...out]);
}

/**
 * Read a raw policy once. Never throws: anything that is not a plain object reads as `{}` (the
 * narrowest policy), and each field is judged on its own.
 * @param {unknown} raw
 * @returns {Policy}
 */
export function parsePolicy(raw) {
  const p = isPlainObject(raw) ? raw : {};
  const approvedOrigins = originsOf(own(p, "origins"));
  const confirmList = confirmListOf(own(p, "confirm"));
  const confirmSet = confirmList === null ? null : new Set(confirmList);
  /** @type {Set<string>} */
  const on = new Set(POLICY_FLAGS.filter((flag) => own(p, flag) === true));
  return Object.freeze({
    approvedOrigins,
    approves: Object.freeze((/** @type {string | null} */ origin) => isApproved(origin, approvedOrigins)),
    confirmList,
    // Fail closed: a policy whose confirm list is unreadable confirms everything.
    confirms: Object.freeze((/** @type {string} */ action) => confirmSet === null || confirmSet.has(action)),
    allows: Object.freeze((/** @type {string} */ flag) => on.has(flag)),
    confirmTimeoutMs: confirmTimeoutMsOf(own(p, "confirmTimeoutSeconds")),
    clickGraceSeconds: clickGraceOf(own(p, "clickGraceSeconds")),
    provenance: provenanceOf(own(p, "provenance")),
    maxAgentTabs: maxAgentTabsOf(own(p, "maxAgentTabs")),
  });
}

/** The narrowest policy: what work outside any call (and a missing policy) runs under. */
export const NO_POLICY = parsePolicy({});
