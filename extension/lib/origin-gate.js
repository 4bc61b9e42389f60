// origin-gate.js — the check every page tool passes before it touches a page: the target's
// exact origin must be in the signed policy AND hold Chrome's host permission; otherwise the
// person is asked in the confirm window and the host records the grant. Pure: confirm,
// permission lookup, grant request and enrolment lookup are injected. It must never proceed on
// a non-http(s) origin, on a denied/timed-out/closed confirmation, or when the host did not
// record the grant. An enrolled browser (a WebAuthn credential for this host's label) is never
// downgraded to the click: its confirm window runs in presence mode for "policy.widen" with
// detail = canonical JSON of {origins: [...approved, origin]}, the host signs the widened policy
// on the verified tap (lib/presence-confirm.js), and no `grant` message is sent.

import { BridgeError } from "./bridge-error.js";
import { canonicalJson } from "./canonical-json.js";
import { confirmTimeoutMs } from "./confirm-window.js";
import { CODE } from "./error-codes.js";
import { isApproved, originOf, permissionPattern } from "./origin.js";
import { isPlainObject } from "./wire.js";

/**
 * @typedef {object} GateDeps
 * @property {import("./confirm-window.js").Confirm} confirm
 * @property {(pattern: string) => Promise<boolean>} permissionsContains
 * @property {(origin: string) => Promise<unknown>} requestGrant resolves when the host
 *   recorded the grant (grant_result ok), rejects otherwise (error, not_paired, timeout)
 * @property {() => Promise<{enrolled: boolean, origins?: unknown}>} [enrolment] whether this
 *   browser is enrolled, and the host's approved origins (host_call policy_get), asked at every
 *   prompt; when it fails the click flow runs and the host (which refuses window grants for an
 *   enrolled browser) stays the judge
 * @property {{warn: (...a: unknown[]) => void}} [log]
 */

/** @typedef {{session: string, policy: Record<string, unknown>}} Ctx */

/**
 * @param {GateDeps} deps
 * @returns {(url: unknown, ctx: Ctx, tool: string) => Promise<string>} resolves with the
 *   approved origin; rejects with BridgeError("origin_not_approved")
 */
export function createOriginGate({ confirm, permissionsContains, requestGrant, enrolment, log = console }) {
  /** Prompts in progress, by origin: concurrent calls for one origin share one window. */
  /** @type {Map<string, Promise<boolean>>} */
  const prompting = new Map();

  /**
   * @param {string} origin
   * @param {string} pattern
   * @param {Ctx} ctx
   * @param {string} tool
   */
  async function ask(origin, pattern, ctx, tool) {
    const origins = isPlainObject(ctx.policy) ? ctx.policy.origins : undefined;
    if (isApproved(origin, origins)) {
      // The signed policy already approves it (a tap or the terminal did): only Chrome's own grant
      // is missing. A click that requests it widens nothing of tabwarden's, so no tap and no grant.
      const decision = await confirm({
        kind: "origin", tool, origin, pattern,
        detail: `${origin} is approved in tabwarden's policy. Let Chrome give tabwarden's agent access to it?`,
        timeoutMs: confirmTimeoutMs(ctx.policy),
      });
      if (decision !== "allow") return false;
      return permissionsContains(pattern).catch(() => false);
    }
    const tap = await presenceFor(origin, ctx);
    if (tap !== null) {
      const decision = await confirm({
        kind: "origin", tool, origin, pattern,
        detail: `Allow tabwarden's agent on ${origin}? Confirm with your security key.`,
        presence: tap,
        timeoutMs: confirmTimeoutMs(ctx.policy),
      });
      // "allow" only on the host's {done: true} for a verified tap: the policy is already signed.
      if (decision !== "allow") return false;
      return permissionsContains(pattern).catch(() => false);
    }
    const decision = await confirm({
      kind: "origin", tool, origin, pattern,
      detail: `Allow tabwarden's agent on ${origin}?`,
      timeoutMs: confirmTimeoutMs(ctx.policy),
    });
    if (decision !== "allow") return false;
    try {
      await requestGrant(origin);
    } catch (err) {
      log.warn(`tabwarden: the host did not record the grant for ${origin}`, err);
      return false;
    }
    return permissionsContains(pattern).catch(() => false);
  }

  /**
   * The policy.widen tap for `origin` when this browser is enrolled, else null (click flow).
   * @param {string} origin
   * @param {Ctx} ctx
   * @returns {Promise<{action: string, detail: string} | null>}
   */
  async function presenceFor(origin, ctx) {
    if (typeof enrolment !== "function") return null;
    let info;
    try {
      info = await enrolment();
    } catch (err) {
      log.warn("tabwarden: could not learn whether this browser is enrolled; the host decides", err);
      return null;
    }
    if (!isPlainObject(info) || info.enrolled !== true) return null;
    const fromHost = Array.isArray(info.origins) ? info.origins : undefined;
    const fromCtx = isPlainObject(ctx.policy) && Array.isArray(ctx.policy.origins) ? ctx.policy.origins : [];
    const approved = (fromHost ?? fromCtx).filter((o) => typeof o === "string");
    const origins = approved.includes(origin) ? approved : [...approved, origin];
    return { action: "policy.widen", detail: canonicalJson({ origins }) };
  }

  return async function ensureOrigin(url, ctx, tool) {
    const origin = originOf(url);
    const pattern = permissionPattern(origin);
    if (origin === null || pattern === null) {
      throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "page tools work only on http and https pages");
    }
    const origins = isPlainObject(ctx.policy) ? ctx.policy.origins : undefined;
    if (isApproved(origin, origins) && (await permissionsContains(pattern).catch(() => false))) return origin;
    let pending = prompting.get(origin);
    if (pending === undefined) {
      pending = ask(origin, pattern, ctx, tool).finally(() => prompting.delete(origin));
      prompting.set(origin, pending);
    }
    if (!(await pending)) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, `${origin} is not approved`);
    return origin;
  };
}
