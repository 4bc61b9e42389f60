// origin-gate.js — the check every page tool passes before it touches a page: the target's
// exact origin must be in the signed policy AND hold Chrome's host permission; otherwise the
// person is asked, in the way the host decides (host_call origin_decide — the one place that
// decision is made): a click in the confirm window after which the host records the grant, or,
// for an enrolled browser, a tap over exactly the policy.widen detail the host returned (the host
// signs it on the verified tap, shared/presence-confirm.js; no `grant` message). Pure: confirm,
// permission lookup, grant request and the host's decision are injected. It must never proceed
// on a non-http(s) origin, on a denied/timed-out/closed confirmation, when the host's decision
// cannot be had (fail closed), or when the host did not record the grant; and it never composes
// a policy change itself.
//
// Under a subdomain approval (`https://*.example.com`, docs/adr/0019) the host permission asked
// for is the approval's own pattern (`https://*.example.com/*`), so one Chrome grant covers every
// origin the signed policy approves with it and the confirm window names the approval in plain
// words; an origin the approval does not cover (a sibling, a lookalike) is asked as an exact one.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { describeApproval, wildcardPattern } from "../shared/approval.js";
import { originOf, permissionPattern } from "../shared/origin.js";
import { isPlainObject } from "../shared/wire.js";

/**
 * @typedef {object} GateDeps
 * @property {import("../shared/confirm-window.js").Confirm} confirm
 * @property {(pattern: string) => Promise<boolean>} permissionsContains
 * @property {(origin: string) => Promise<unknown>} requestGrant resolves when the host
 *   recorded the grant (grant_result ok), rejects otherwise (error, not_paired, timeout)
 * @property {(origin: string) => Promise<unknown>} decide the host's decision for `origin`
 *   (host_call origin_decide), asked at every prompt: `{ask: "none"}` (the signed policy approves
 *   it: only Chrome's grant is missing), `{ask: "click"}`, or `{ask: "tap", action:
 *   "policy.widen", detail}`; a failure or any other answer refuses
 * @property {{warn: (...a: unknown[]) => void}} [log]
 */

/** @typedef {{session: string, client?: string | null, policy: import("./policy.js").Policy}} Ctx */
/** @typedef {{ask: "none" | "click"} | {ask: "tap", action: string, detail: string}} Decision */

/**
 * @param {GateDeps} deps
 * @returns {(url: unknown, ctx: Ctx, tool: string) => Promise<string>} resolves with the
 *   approved origin; rejects with BridgeError("origin_not_approved")
 */
export function createOriginGate({ confirm, permissionsContains, requestGrant, decide, log = console }) {
  /**
   * Prompts in progress, by origin: concurrent calls for one origin share one window. Each
   * settles with true (approved), false (refused) or "timeout" (nobody answered in time).
   */
  /** @type {Map<string, Promise<boolean | "timeout">>} */
  const prompting = new Map();

  /**
   * @param {string} origin
   * @param {string} pattern
   * @param {Ctx} ctx
   * @param {string} tool
   * @returns {Promise<boolean | "timeout">}
   */
  async function ask(origin, pattern, ctx, tool) {
    /** @type {Decision | null} */
    const how = ctx.policy.approves(origin) ? { ask: "none" } : await decision(origin);
    if (how === null) return false;
    if (how.ask === "none") {
      // The signed policy already approves it (a tap or the terminal did): only Chrome's own grant
      // is missing. A click that requests it widens nothing of tabwarden's, so no tap and no grant.
      const approval = ctx.policy.approvalFor(origin);
      const words = approval !== null && approval.kind === "wildcard" ? describeApproval(approval) : null;
      const answer = await confirm({
        kind: "origin", tool, origin, pattern, client: ctx.client ?? null,
        detail: words === null
          ? `${origin} is approved in tabwarden's policy. Let Chrome give tabwarden's agent access to it?`
          : `${origin} is approved in tabwarden's policy as part of ${words}. Let Chrome give tabwarden's agent access to ${words}?`,
        timeoutMs: ctx.policy.confirmTimeoutMs,
      });
      if (answer !== "allow") return answer === "timeout" ? "timeout" : false;
      return permissionsContains(pattern).catch(() => false);
    }
    if (how.ask === "tap") {
      const answer = await confirm({
        kind: "origin", tool, origin, pattern, client: ctx.client ?? null,
        detail: `Allow tabwarden's agent on ${origin}? Confirm with your security key.`,
        presence: { action: how.action, detail: how.detail },
        timeoutMs: ctx.policy.confirmTimeoutMs,
      });
      // "allow" only on the host's {done: true} for a verified tap: the policy is already signed.
      if (answer !== "allow") return answer === "timeout" ? "timeout" : false;
      return permissionsContains(pattern).catch(() => false);
    }
    const answer = await confirm({
      kind: "origin", tool, origin, pattern, client: ctx.client ?? null,
      detail: `Allow tabwarden's agent on ${origin}?`,
      timeoutMs: ctx.policy.confirmTimeoutMs,
    });
    if (answer !== "allow") return answer === "timeout" ? "timeout" : false;
    try {
      await requestGrant(origin);
    } catch (err) {
      log.warn(`tabwarden: the host did not record the grant for ${origin}`, err);
      return false;
    }
    return permissionsContains(pattern).catch(() => false);
  }

  /**
   * The host's decision for `origin`, checked for shape; null (refuse) when it cannot be had.
   * @param {string} origin
   * @returns {Promise<Decision | null>}
   */
  async function decision(origin) {
    let answer;
    try {
      answer = await decide(origin);
    } catch (err) {
      log.warn(`tabwarden: the host gave no decision for ${origin}; refusing`, err);
      return null;
    }
    if (!isPlainObject(answer) || answer.origin !== origin) return null;
    if (answer.ask === "none" || answer.ask === "click") return { ask: answer.ask };
    if (answer.ask === "tap" && answer.action === "policy.widen" && typeof answer.detail === "string") {
      return { ask: "tap", action: answer.action, detail: answer.detail };
    }
    return null;
  }

  return async function ensureOrigin(url, ctx, tool) {
    const origin = originOf(url);
    const exactPattern = permissionPattern(origin);
    if (origin === null || exactPattern === null) {
      throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "page tools work only on http and https pages");
    }
    const pattern = wildcardPattern(ctx.policy.approvalFor(origin)) ?? exactPattern;
    if (ctx.policy.approves(origin)) {
      const has = (/** @type {string} */ p) => permissionsContains(p).catch(() => false);
      if ((await has(pattern)) || (pattern !== exactPattern && (await has(exactPattern)))) return origin;
    }
    let pending = prompting.get(origin);
    if (pending === undefined) {
      pending = ask(origin, pattern, ctx, tool).finally(() => prompting.delete(origin));
      prompting.set(origin, pending);
    }
    const approved = await pending;
    if (approved === "timeout") {
      throw new BridgeError(CODE.CONFIRM_TIMEOUT, `nobody answered whether to approve ${origin} in time`);
    }
    if (!approved) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, `${origin} is not approved`);
    return origin;
  };
}
