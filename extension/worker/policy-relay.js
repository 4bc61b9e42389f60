// policy-relay.js — the service worker's side of the options page's Policy section: relays
// policy_get, presence_begin, presence_complete, policy_restrict, kill, (MCP clients section)
// clients_recent and (Audit log section) audit_tail runtime messages to the
// host (host_call) and hands back its answer. Pure: the host call is injected; the message router
// (worker/message-router.js) admits this extension's options page alone. It must never decide
// policy itself (the host verifies every tap and signs every change), and never complete a tap
// for a different action or detail than the one its challenge was begun for.

import { BridgeError } from "../shared/bridge-error.js";
import { canonicalJson } from "../shared/canonical-json.js";
import { CODE } from "../shared/error-codes.js";
import { isPlainObject } from "../shared/wire.js";

/** A client label, as the host writes them (trust record rules). */
const CLIENT_LABEL = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/**
 * Actions the options page may have tapped (docs/protocol.md "What a tap authorises" and "More
 * tap-authorised actions"). confirm.eval / confirm.upload / confirm.provenance are not here: only the confirm window
 * taps for those (shared/presence-confirm.js), for a call the worker itself is holding.
 */
export const TAP_ACTIONS = Object.freeze(["policy.widen", "unkill", "pair_client"]);
const MAX_CLIENTS = 200;
const MAX_DETAIL = 64 * 1024;
const MAX_KEY = 64;
/** audit_tail: the host's bound on `limit` (host/pairing.py AUDIT_TAIL_MAX). */
export const MAX_AUDIT_LIMIT = 1000;

/**
 * Whether `detail` is a valid detail for `action`: "" for unkill; for policy.widen, the canonical
 * JSON of a non-empty object of changes.
 * @param {unknown} action
 * @param {unknown} detail
 */
export function validDetail(action, detail) {
  if (typeof detail !== "string") return false;
  if (action === "unkill") return detail === "";
  if ((action !== "policy.widen" && action !== "pair_client") || detail === "" || detail.length > MAX_DETAIL) return false;
  try {
    const changes = JSON.parse(detail);
    if (action === "pair_client") {
      return isPlainObject(changes) && Object.keys(changes).sort().join(",") === "exe,label,sha256"
        && Object.values(changes).every((v) => typeof v === "string" && v !== "") && canonicalJson(changes) === detail;
    }
    return isPlainObject(changes) && Object.keys(changes).length > 0 && canonicalJson(changes) === detail;
  } catch {
    return false;
  }
}

/**
 * @param {{hostCall: (action: string, args: object) => Promise<any>}} deps session.hostCall
 */
export function createPolicyRelay({ hostCall }) {
  /** The latest presence_begin; one tap at a time. */
  /** @type {{challengeId: string, action: string, detail: string} | null} */
  let begun = null;

  const bad = () => ({ ok: false, code: CODE.BAD_REQUEST });
  /** @param {unknown} err */
  const refusal = (err) => (err instanceof BridgeError
    ? { ok: false, code: err.code, ...(err.reason === null ? {} : { reason: err.reason }) } // the reason: for this page only
    : { ok: false, code: CODE.INTERNAL_ERROR });

  /**
   * @param {string} action
   * @param {object} args
   * @param {(r: Record<string, unknown>) => object | null} shape the reply, or null when malformed
   */
  async function call(action, args, shape) {
    try {
      const r = await hostCall(action, args);
      const out = isPlainObject(r) ? shape(r) : null;
      return out === null ? { ok: false, code: CODE.INTERNAL_ERROR } : { ...out, ok: true };
    } catch (err) {
      return refusal(err);
    }
  }

  /** @param {Record<string, unknown>} msg */
  function policyGet(msg) {
    void msg;
    return call("policy_get", {}, (r) => (isPlainObject(r.policy) && typeof r.killed === "boolean"
      ? {
        policy: r.policy, killed: r.killed, epoch: r.epoch ?? null, enrolled: r.enrolled === true,
        windowOnly: r.windowOnly === true,
        browsers: Array.isArray(r.browsers) ? r.browsers.filter((b) => typeof b === "string") : [],
        credentials: Array.isArray(r.credentials)
          ? r.credentials.filter((c) => isPlainObject(c) && typeof c.credentialId === "string").map((c) => ({
            credentialId: c.credentialId, enrolledAt: typeof c.enrolledAt === "number" ? c.enrolledAt : null, uv: c.uv === true,
          }))
          : [],
      }
      : null));
  }

  /** @param {Record<string, unknown>} msg */
  async function begin(msg) {
    const { action, detail } = msg;
    if (typeof action !== "string" || !TAP_ACTIONS.includes(action) || !validDetail(action, detail)) return bad();
    begun = null;
    const answer = await call("presence_begin", { action, detail }, (r) => (typeof r.challengeId === "string" && r.challengeId !== "" && isPlainObject(r.options)
      ? { challengeId: r.challengeId, options: r.options }
      : null));
    if (answer.ok) begun = { challengeId: /** @type {any} */ (answer).challengeId, action, detail: /** @type {string} */ (detail) };
    return answer;
  }

  /** @param {Record<string, unknown>} msg */
  function complete(msg) {
    const { challengeId, action, detail, response } = msg;
    const b = begun;
    if (b === null || challengeId !== b.challengeId || action !== b.action || detail !== b.detail || !isPlainObject(response)) {
      return Promise.resolve(bad());
    }
    begun = null; // single use, whatever the host says
    return call("presence_complete", { challengeId: b.challengeId, action: b.action, detail: b.detail, response },
      (r) => (r.done === true ? { done: true, epoch: r.epoch ?? null } : null));
  }

  /** @param {Record<string, unknown>} msg */
  function restrict(msg) {
    const { key, value } = msg;
    if (typeof key !== "string" || key === "" || key.length > MAX_KEY || value === undefined) return Promise.resolve(bad());
    try {
      canonicalJson(value); // plain JSON only
    } catch {
      return Promise.resolve(bad());
    }
    return call("policy_restrict", { key, value }, (r) => ({ ...r }));
  }

  /** @param {Record<string, unknown>} msg */
  function kill(msg) {
    void msg;
    return call("kill", {}, (r) => ({ ...r }));
  }

  /** @param {Record<string, unknown>} msg */
  function clientsRecent(msg) {
    void msg;
    /** @param {unknown} list @param {string[]} keys */
    const rows = (list, keys) => (Array.isArray(list) ? list : []).filter(isPlainObject).slice(0, MAX_CLIENTS)
      .map((row) => Object.fromEntries(keys.map((k) => [k, typeof row[k] === "string" || typeof row[k] === "number" ? row[k] : null])));
    return call("clients_recent", {}, (r) => ({
      clients: rows(r.clients, ["label", "exe", "sha256", "pairedAt"]),
      recent: rows(r.recent, ["path", "sha256", "firstSeen", "lastSeen"]),
    }));
  }

  /** @param {Record<string, unknown>} msg narrowing, free: forget one paired MCP client */
  function clientRevoke(msg) {
    const { label } = msg;
    if (typeof label !== "string" || !CLIENT_LABEL.test(label)) return Promise.resolve(bad());
    return call("client_revoke", { label }, (r) => (r.done === true ? { done: true, epoch: r.epoch ?? null } : null));
  }

  /** @param {Record<string, unknown>} msg */
  function auditTail(msg) {
    const { limit } = msg;
    if (limit !== undefined && (!Number.isInteger(limit) || /** @type {number} */ (limit) < 1 || /** @type {number} */ (limit) > MAX_AUDIT_LIMIT)) {
      return Promise.resolve(bad());
    }
    return call("audit_tail", limit === undefined ? {} : { limit }, (r) => (Array.isArray(r.entries)
      ? { entries: r.entries.filter(isPlainObject).slice(-MAX_AUDIT_LIMIT), truncated: r.truncated === true }
      : null));
  }

  const HANDLERS = { audit_tail: auditTail, clients_recent: clientsRecent, client_revoke: clientRevoke, policy_get: policyGet, presence_begin: begin, presence_complete: complete, policy_restrict: restrict, kill };

  return {
    /**
     * The options page's messages, by type, for the message router (worker/message-router.js),
     * which admits only this extension's options page.
     * @type {ReadonlyMap<string, (msg: Record<string, unknown>) => Promise<object>>}
     */
    messages: new Map(Object.entries(HANDLERS)),
  };
}
