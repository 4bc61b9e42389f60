// pairing.js — the service worker's side of pairing this browser from the options page: answers
// options_status (with whether the trust record was rolled back, worker/epoch-ratchet.js),
// pair_begin and pair_complete runtime messages by calling the host (host_call),
// proves the new host key before pinning it, and stores the pinned record. Pure: the host call,
// storage, WebCrypto, randomness, clock and gate are injected; the message router
// (worker/message-router.js) admits this extension's options page alone. It must never pin a key
// the host has not just proven it holds, and never take the host key from the page (only from the
// host's own pair_begin answer).

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { PIN_STORAGE_KEY, proveHost } from "./pinning.js";
import { isPlainObject } from "../shared/wire.js";

/**
 * @typedef {object} PairingDeps
 * @property {(action: string, args: object) => Promise<any>} hostCall session.hostCall
 * @property {import("./pinning.js").PinGate} gate
 * @property {(key: string, value: unknown) => Promise<void>} storageSet chrome.storage.local
 * @property {SubtleCrypto} subtle
 * @property {(n: number) => Uint8Array} randomBytes
 * @property {() => number} nowMs wall clock, for pairedAt
 * @property {() => {epoch: number, seen: number} | null} [rolledBack] the ratchet's verdict for
 *   the pinned key (options_status shows it)
 * @property {() => import("../shared/host-problem.js").HostProblem | null} [hostProblem] why the
 *   host cannot be reached (not registered for this browser, cannot start), or null
 */

/**
 * @param {PairingDeps} deps
 */
export function createPairing({ hostCall, gate, storageSet, subtle, randomBytes, nowMs, rolledBack = () => null, hostProblem = () => null }) {
  /** The latest pair_begin's host answer; one pairing at a time. */
  /** @type {{challengeId: string, hostKey: string, fingerprint: string, browser: string, approvalId: string | null} | null} */
  let begun = null;

  /** @param {unknown} err */
  const refusal = (err) => (err instanceof BridgeError
    ? { ok: false, code: err.code, ...(err.reason === null ? {} : { reason: err.reason }) } // the reason: for this page only
    : { ok: false, code: CODE.INTERNAL_ERROR });

  function status() {
    const { state, pinned } = gate.snapshot();
    return {
      ok: true,
      gate: state,
      paired: pinned !== null,
      fingerprint: pinned?.fingerprint ?? null,
      browser: pinned?.browser ?? null,
      pairedAt: pinned?.pairedAt ?? null,
      windowOnly: pinned?.windowOnly === true,
      rolledBack: (() => {
        const back = rolledBack();
        return back === null ? null : { epoch: back.epoch, seen: back.seen };
      })(),
      hostProblem: hostProblem(),
    };
  }

  /** @param {unknown} code */
  async function begin(code) {
    if (typeof code !== "string" || code.trim() === "" || code.length > 200) return { ok: false, code: CODE.BAD_REQUEST };
    begun = null;
    try {
      const r = await hostCall("pair_begin", { code: code.trim() });
      if (!isPlainObject(r) || !isPlainObject(r.options)) return { ok: false, code: CODE.INTERNAL_ERROR };
      const [hostKey, fingerprint, browser, challengeId] = ["hostKey", "fingerprint", "browser", "challengeId"].map((k) => {
        const v = r[k];
        return typeof v === "string" && v !== "" ? v : null;
      });
      if (hostKey === null || fingerprint === null || browser === null || challengeId === null) {
        return { ok: false, code: CODE.INTERNAL_ERROR };
      }
      // Another browser is enrolled: the host wants an assertion from one of its credentials.
      let approval = null;
      if (r.approval !== null && r.approval !== undefined) {
        const a = r.approval;
        if (!isPlainObject(a) || typeof a.challengeId !== "string" || a.challengeId === "" || !isPlainObject(a.options)) {
          return { ok: false, code: CODE.INTERNAL_ERROR };
        }
        approval = { challengeId: a.challengeId, options: a.options };
      }
      begun = { challengeId, hostKey, fingerprint, browser, approvalId: approval ? approval.challengeId : null };
      return { ok: true, options: r.options, fingerprint, hostKey, browser, challengeId, approval };
    } catch (err) {
      return refusal(err);
    }
  }

  /**
   * @param {Record<string, unknown>} msg {challengeId, response | windowOnly: true, approval?}
   */
  async function complete(msg) {
    const { challengeId, response, approval } = msg;
    const windowOnly = msg.windowOnly === true;
    const b = begun;
    if (b === null || typeof challengeId !== "string" || challengeId !== b.challengeId) return { ok: false, code: CODE.BAD_REQUEST };
    if (windowOnly ? response !== undefined : !isPlainObject(response)) return { ok: false, code: CODE.BAD_REQUEST };
    // The approval must answer the approval this very pair_begin asked for (or be absent when none was).
    if (b.approvalId === null ? approval !== undefined && approval !== null
      : !isPlainObject(approval) || approval.challengeId !== b.approvalId || !isPlainObject(approval.response)) {
      return { ok: false, code: CODE.BAD_REQUEST };
    }
    begun = null;
    try {
      /** @type {Record<string, unknown>} */
      const args = windowOnly ? { challengeId, windowOnly: true } : { challengeId, response };
      if (b.approvalId !== null && isPlainObject(approval)) args.approval = { challengeId: b.approvalId, response: approval.response };
      const r = await hostCall("pair_complete", args);
      const credentialId = isPlainObject(r) && typeof r.credentialId === "string" && r.credentialId !== "" ? r.credentialId : null;
      const pairedWindowOnly = windowOnly && isPlainObject(r) && r.windowOnly === true;
      if (credentialId === null && !pairedWindowOnly) return { ok: false, code: CODE.INTERNAL_ERROR };
      // Pin only a key the host proves it holds right now.
      if (!(await proveHost({ spkiB64: b.hostKey, hostCall, subtle, randomBytes }))) return { ok: false, code: CODE.HOST_COMPROMISED };
      /** @type {import("./pinning.js").PinnedRecord} */
      const record = {
        hostKey: b.hostKey, fingerprint: b.fingerprint, browser: b.browser, credentialId,
        pairedAt: new Date(nowMs()).toISOString(),
      };
      if (pairedWindowOnly) record.windowOnly = true;
      gate.markPaired(record);
      await storageSet(PIN_STORAGE_KEY, record);
      return { ok: true, fingerprint: record.fingerprint, browser: record.browser, credentialId, windowOnly: pairedWindowOnly };
    } catch (err) {
      return refusal(err);
    }
  }

  return {
    /**
     * The pairing messages, by type, for the message router (worker/message-router.js), which
     * admits only this extension's options page.
     * @type {ReadonlyMap<string, (msg: Record<string, unknown>) => Promise<object>>}
     */
    messages: new Map(/** @type {Array<[string, (msg: Record<string, unknown>) => Promise<object>]>} */ ([
      ["options_status", async () => status()],
      ["pair_begin", (msg) => begin(msg.code)],
      ["pair_complete", complete],
    ])),
  };
}
