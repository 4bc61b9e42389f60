// popup-relay.js — the service worker's side of the toolbar popup: popup_status (connection phase,
// host-key gate, kill switch from the host's policy_get, whether the trust record was rolled back
// (worker/epoch-ratchet.js), and the recent calls) and popup_kill
// (host_call kill: narrowing, free, no tap). Pure: the host call, snapshots and recent-call list
// are injected; the message router (worker/message-router.js) admits this extension's popup alone.
// It must never offer anything that widens (unkill and every widening need a tap on the options
// page).

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { isPlainObject } from "../shared/wire.js";

/**
 * @param {{hostCall: (action: string, args: object) => Promise<any>,
 *   sessionSnapshot: () => {phase: string, browser?: string | null, connectedSince?: number | null,
 *     lastDisconnectAt?: number | null, lastDisconnectReason?: string | null,
 *     reconnectInMs?: number | null},
 *   gateSnapshot: () => {state: string},
 *   rolledBack?: () => {epoch: number, seen: number} | null,
 *   recent: () => Promise<unknown[]>, workerStartedAt?: number | null,
 *   hostProblem?: () => import("../shared/host-problem.js").HostProblem | null}} deps
 *   hostProblem: why the host cannot be reached (not registered, cannot start), or null; workerStartedAt: when
 *   this service worker started (wall-clock ms): a worker Chrome stopped and the wake alarm
 *   restarted (worker/wake.js) shows a recent start and no disconnect of its own
 */
export function createPopupRelay({ hostCall, sessionSnapshot, gateSnapshot, rolledBack = () => null, recent, workerStartedAt = null, hostProblem = () => null }) {
  /** @param {unknown} err */
  const code = (err) => (err instanceof BridgeError ? err.code : CODE.INTERNAL_ERROR);

  async function status() {
    const snap = sessionSnapshot();
    const { phase, browser = null } = snap;
    // How the connection was last seen (worker/session.js), shown beside the phase.
    const seen = {
      connectedSince: snap.connectedSince ?? null,
      lastDisconnectAt: snap.lastDisconnectAt ?? null,
      lastDisconnectReason: snap.lastDisconnectReason ?? null,
      reconnectInMs: snap.reconnectInMs ?? null,
      workerStartedAt,
    };
    const { state: gate } = gateSnapshot();
    /** @type {boolean | null} */
    let killed = null;
    if (phase === "ready") {
      try {
        const r = await hostCall("policy_get", {});
        if (isPlainObject(r) && typeof r.killed === "boolean") killed = r.killed;
      } catch {
        killed = null; // unknown
      }
    }
    /** @type {unknown} */
    let calls = [];
    try {
      calls = await recent();
    } catch {
      calls = [];
    }
    const back = rolledBack();
    return {
      ok: true, phase, browser, gate, killed, ...seen, hostProblem: phase === "ready" ? null : hostProblem(),
      rolledBack: back === null ? null : { epoch: back.epoch, seen: back.seen },
      recent: Array.isArray(calls) ? calls : [],
    };
  }

  async function kill() {
    try {
      await hostCall("kill", {});
      return { ok: true };
    } catch (err) {
      return { ok: false, code: code(err) };
    }
  }

  return {
    /**
     * The popup's messages, by type, for the message router (worker/message-router.js), which
     * admits only this extension's popup.
     * @type {ReadonlyMap<string, (msg: Record<string, unknown>) => Promise<object>>}
     */
    messages: new Map(/** @type {Array<[string, () => Promise<object>]>} */ ([["popup_status", status], ["popup_kill", kill]])),
  };
}
