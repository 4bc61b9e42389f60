// presence-confirm.js — the service worker's side of presence-confirm mode (policy
// presenceConfirm: true, docs/protocol.md "More tap-authorised actions"): the confirm window, in
// "presence" mode, asks for a tap instead of the Allow click. It answers the page's
// confirm_presence_begin (→ host presence_begin for the confirmation's own action and detail) and
// confirm_presence_complete (→ host presence_complete; the broker resolves "allow" only when the
// host answers {done: true}, anything else denies). Pure: the broker and host call are injected.
// The message router (worker/message-router.js) admits this extension's confirm page alone, for
// the confirmation its URL names. It must never take the action or detail from the page (only
// from the pending confirmation), and never allow a
// confirmation without the host's verdict on a fresh tap (every call taps; no grace). A refusal
// carries the host's reason code (shared/presence-reasons.js) back to that confirm page only, for the
// person; the broker's answer to the agent stays a bare deny.
//
// A terminal tap (handlers/terminal-tap.js) is the one exception to "the host verifies":
// the terminal (`tabwarden unkill`, `policy set`, …) minted the challenge and verifies the answer
// itself against the signed record, so the window's tap answers with the page's assertion, handed
// back to the terminal and to nothing else. Its confirmation's presence action is
// TERMINAL_PRESENCE and its detail the terminal's challenge id, the key the options were
// registered under (expectTerminal); the page gets exactly those options, never any from itself.

import { BridgeError } from "./bridge-error.js";
import { CODE } from "./error-codes.js";
import { isPlainObject } from "./wire.js";

/** The presence action of a confirmation that asks a tap for the terminal. */
export const TERMINAL_PRESENCE = "terminal";

/**
 * @param {{broker: import("../worker/confirm-broker.js").ConfirmBroker,
 *   hostCall: (action: string, args: object) => Promise<any>}} deps
 */
export function createPresenceConfirm({ broker, hostCall }) {
  /** Challenge begun per confirmation id (single use). @type {Map<string, string>} */
  const begun = new Map();
  /**
   * Terminal taps by the terminal's challenge id: its options, then the page's assertion.
   * @type {Map<string, {options: object, response: object | null}>}
   */
  const terminal = new Map();

  /** @param {unknown} err */
  const code = (err) => (err instanceof BridgeError ? err.code : CODE.INTERNAL_ERROR);

  /** Forget challenges of confirmations that are settled (timed out, closed, denied). */
  function prune() {
    for (const id of [...begun.keys()]) if (broker.details(id) === null) begun.delete(id);
  }

  /** The host's reason code for a refused tap, if it sent one. @param {unknown} err */
  const reasonOf = (err) => (err instanceof BridgeError && typeof err.reason === "string" ? { reason: err.reason } : {});

  /**
   * @param {string} id
   * @param {string} why
   * @param {{reason?: string}} [reason] for the confirm page's words, never for the agent
   */
  function deny(id, why, reason = {}) {
    begun.delete(id);
    broker.answer(id, "deny", { keepWindow: true }); // the window says why until the person closes it
    return { ok: false, code: why, ...reason };
  }

  /** @param {string} id */
  async function begin(id) {
    prune();
    const d = broker.details(id);
    if (d === null || d.presence === null) return { ok: false, code: CODE.BAD_REQUEST };
    if (begun.has(id)) return deny(id, CODE.BAD_REQUEST); // one tap per confirmation
    if (d.presence.action === TERMINAL_PRESENCE) {
      const t = terminal.get(d.presence.detail);
      if (t === undefined || t.response !== null) return deny(id, CODE.BAD_REQUEST);
      begun.set(id, d.presence.detail);
      return { ok: true, options: t.options };
    }
    begun.set(id, ""); // reserved while the host answers
    let r;
    try {
      r = await hostCall("presence_begin", { action: d.presence.action, detail: d.presence.detail });
    } catch (err) {
      return deny(id, code(err), reasonOf(err)); // e.g. presence_refused: no enrolled credential
    }
    if (!isPlainObject(r) || typeof r.challengeId !== "string" || r.challengeId === "" || !isPlainObject(r.options)) {
      return deny(id, CODE.INTERNAL_ERROR);
    }
    if (broker.details(id) === null) return deny(id, CODE.CONFIRM_DENIED); // settled meanwhile
    begun.set(id, r.challengeId);
    return { ok: true, options: r.options };
  }

  /**
   * @param {string} id
   * @param {unknown} response
   */
  async function complete(id, response) {
    const d = broker.details(id);
    const challengeId = begun.get(id);
    if (d === null || d.presence === null) {
      begun.delete(id);
      return { ok: false, code: CODE.BAD_REQUEST };
    }
    if (typeof challengeId !== "string" || challengeId === "" || !isPlainObject(response)) return deny(id, CODE.BAD_REQUEST);
    begun.delete(id); // single use, whatever the host says
    if (d.presence.action === TERMINAL_PRESENCE) {
      const t = terminal.get(d.presence.detail);
      if (t === undefined || challengeId !== d.presence.detail || t.response !== null) return deny(id, CODE.BAD_REQUEST);
      t.response = response; // the terminal verifies it; the window only carries it
      return broker.answer(id, "allow") ? { ok: true } : { ok: false, code: CODE.CONFIRM_DENIED };
    }
    let r;
    try {
      r = await hostCall("presence_complete", { challengeId, action: d.presence.action, detail: d.presence.detail, response });
    } catch (err) {
      return deny(id, code(err), reasonOf(err)); // e.g. counter_not_increased
    }
    if (!isPlainObject(r) || r.done !== true) return deny(id, CODE.INTERNAL_ERROR);
    return broker.answer(id, "allow") ? { ok: true } : { ok: false, code: CODE.CONFIRM_DENIED };
  }

  return {
    /**
     * The confirm window's tap messages, by type, for the message router
     * (worker/message-router.js), which admits only this extension's confirm page and only about
     * the confirmation its URL names (`msg.id`).
     * @type {ReadonlyMap<string, (msg: Record<string, unknown>) => Promise<object>>}
     */
    messages: new Map([
      ["confirm_presence_begin", (msg) => begin(/** @type {string} */ (msg.id))],
      ["confirm_presence_complete", (msg) => complete(/** @type {string} */ (msg.id), msg.response)],
    ]),
    /**
     * Register a terminal tap's options under its challenge id (before its confirmation opens).
     * @param {string} challengeId
     * @param {object} options
     */
    expectTerminal(challengeId, options) {
      terminal.set(challengeId, { options, response: null });
    },
    /**
     * The page's assertion for a terminal tap (null: none came), forgetting the tap.
     * @param {string} challengeId
     * @returns {object | null}
     */
    takeTerminal(challengeId) {
      const t = terminal.get(challengeId);
      terminal.delete(challengeId);
      return t === undefined ? null : t.response;
    },
    /** Challenges held (for tests and inspection). */
    size: () => begun.size,
  };
}
