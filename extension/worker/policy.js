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

import { approvesOrigin, readApproval } from "../shared/approval.js";
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
/** @typedef {import("../shared/approval.js").Approval} Approval */
/** @typedef {"strict" | "confirm" | "off"} ProvenanceMode */

/**
 * The parsed policy. Every field is read-only and the object, its lists and its functions are
 * frozen.
 * @typedef {Readonly<{
 *   approvedOrigins: readonly string[],
 *   approvals: readonly import("../shared/approval.js").Approval[],
 *   refusedApprovals: readonly import("../shared/approval.js").Approval[],
 *   approves: (origin: string | null) => boolean,
 *   approvalFor: (origin: string | null) => import("../shared/approval.js").Approval | null,
 *   confirmList: readonly string[] | null,
 *   confirms: (action: string) => boolean,
 *   allows: (flag: string) => boolean,
 *   confirmTimeoutMs: number,
 *   clickGraceSeconds: number,
 *   provenance: ProvenanceMode,
 *   maxAgentTabs: number,
 * }>} Policy
 *   approvedOrigins: the approvals, normalised: exact origins and subdomain approvals
 *   (`https://*.example.com`, shared/approval.js); invalid and refused entries dropped; the
 *   navigation rules are built from it); approvals: the same, read; refusedApprovals: wildcard
 *   entries refused although signed (over a public suffix: they approve nothing, the options
 *   page says so); approves: an exact origin one of them approves; approvalFor: the first
 *   approval that approves `origin` (a wildcard before an exact one), or null;
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
 * The approvals read, without duplicates; a list that is not an array approves none. Entries that
 * are neither form are dropped; a subdomain approval over a public suffix is kept apart as refused.
 * @param {unknown} list
 * @returns {{approvals: readonly Approval[], refused: readonly Approval[]}}
 */
function approvalsOf(list) {
  /** @type {Map<string, Approval>} */
  const good = new Map();
  /** @type {Map<string, Approval>} */
  const bad = new Map();
  if (Array.isArray(list)) {
    for (let i = 0; i < list.length; i += 1) {
      const a = readApproval(list[i]);
      if (a === null) continue;
      (a.kind === "refused" ? bad : good).set(a.entry, Object.freeze(a));
    }
  }
  return { approvals: Object.freeze([...good.values()]), refused: Object.freeze([...bad.values()]) };
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
  const { approvals, refused } = approvalsOf(own(p, "origins"));
  const approvedOrigins = Object.freeze(approvals.map((a) => a.entry));
  // A wildcard first: the host permission it asks for covers every origin it approves.
  const ordered = [...approvals.filter((a) => a.kind === "wildcard"), ...approvals.filter((a) => a.kind !== "wildcard")];
  const confirmList = confirmListOf(own(p, "confirm"));
  const confirmSet = confirmList === null ? null : new Set(confirmList);
  /** @type {Set<string>} */
  const on = new Set(POLICY_FLAGS.filter((flag) => own(p, flag) === true));
  return Object.freeze({
    approvedOrigins,
    approvals,
    refusedApprovals: refused,
    approves: Object.freeze((/** @type {string | null} */ origin) => approvesOrigin(origin, approvals)),
    approvalFor: Object.freeze((/** @type {string | null} */ origin) => ordered.find((a) => approvesOrigin(origin, [a])) ?? null),
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
