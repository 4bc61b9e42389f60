// origin-gate.js — the check every page tool passes before it touches a page: the target's
// exact origin must be in the signed policy AND hold Chrome's host permission; otherwise the
// person is asked in the confirm window and the host records the grant. Pure: confirm,
// permission lookup and grant request are injected. It must never proceed on a non-http(s)
// origin, on a denied/timed-out/closed confirmation, or when the host did not record the grant.

import { BridgeError } from "./bridge-error.js";
import { confirmTimeoutMs } from "./confirm-window.js";
import { isApproved, originOf, permissionPattern } from "./origin.js";
import { isPlainObject } from "./wire.js";

/**
 * @typedef {object} GateDeps
 * @property {(req: {kind: "origin", tool: string, origin: string, detail: string,
 *   pattern: string, timeoutMs: number}) => Promise<"allow" | "deny">} confirm
 * @property {(pattern: string) => Promise<boolean>} permissionsContains
 * @property {(origin: string) => Promise<unknown>} requestGrant resolves when the host
 *   recorded the grant (grant_result ok), rejects otherwise (error, not_paired, timeout)
 * @property {{warn: (...a: unknown[]) => void}} [log]
 */

/** @typedef {{session: string, policy: Record<string, unknown>}} Ctx */

/**
 * @param {GateDeps} deps
 * @returns {(url: unknown, ctx: Ctx, tool: string) => Promise<string>} resolves with the
 *   approved origin; rejects with BridgeError("origin_not_approved")
 */
export function createOriginGate({ confirm, permissionsContains, requestGrant, log = console }) {
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

  return async function ensureOrigin(url, ctx, tool) {
    const origin = originOf(url);
    const pattern = permissionPattern(origin);
    if (origin === null || pattern === null) {
      throw new BridgeError("origin_not_approved", "page tools work only on http and https pages");
    }
    const origins = isPlainObject(ctx.policy) ? ctx.policy.origins : undefined;
    if (isApproved(origin, origins) && (await permissionsContains(pattern).catch(() => false))) return origin;
    let pending = prompting.get(origin);
    if (pending === undefined) {
      pending = ask(origin, pattern, ctx, tool).finally(() => prompting.delete(origin));
      prompting.set(origin, pending);
    }
    if (!(await pending)) throw new BridgeError("origin_not_approved", `${origin} is not approved`);
    return origin;
  };
}
