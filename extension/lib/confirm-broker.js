// confirm-broker.js — the pending confirmations the person is asked about in the confirm
// window, by id. Pure: no chrome; timers and ids are injected. It must never resolve a
// confirmation twice (only the first answer counts), and must resolve every confirmation with
// "deny" when its window closes or the answer is anything but "allow", and with "timeout" when
// nobody answered in time (a refusal too, told apart so the agent and the audit can say so).

/** @typedef {"allow" | "deny" | "timeout"} Decision */
/** @typedef {"origin" | "action"} ConfirmKind */
/**
 * A presence-confirm request (docs/protocol.md "More tap-authorised actions"): the tap the host
 * must verify instead of the Allow click — `action` "confirm.eval" / "confirm.upload" (kind
 * action) or "policy.widen" (kind origin, an enrolled browser's new origin), `detail` the
 * canonical JSON the host signs the challenge for.
 * @typedef {{action: string, detail: string}} Presence
 */
/**
 * What the confirm page shows (and, for kind "origin", the permission pattern it requests; with
 * `presence`, the page asks for a tap instead of a click).
 * @typedef {{id: string, kind: ConfirmKind, tool: string, origin: string, detail: string,
 *   pattern: string | null, presence: Presence | null}} ConfirmDetails
 */

/**
 * @typedef {object} ConfirmBroker
 * @property {(req: {kind: ConfirmKind, tool: string, origin?: string, detail?: string,
 *   pattern?: string | null, presence?: Presence | null, timeoutMs: number}) =>
 *   {id: string, promise: Promise<Decision>}} open
 * @property {(id: string, decision: unknown) => boolean} answer first answer wins; unknown id,
 *   a settled id, or anything but "allow" for a pending id → false / "deny"
 * @property {(id: string, windowId: number) => void} attachWindow the window showing `id`
 * @property {(windowId: number) => number} closed a window closed: deny what it showed
 * @property {(id: string) => ConfirmDetails | null} details for the page; null once settled
 * @property {() => number} size
 */

/**
 * @param {import("./pending.js").Timers & {newId: () => string}} options
 * @returns {ConfirmBroker}
 */
export function createConfirmBroker({ setTimer, clearTimer, newId }) {
  /** @type {Map<string, {details: ConfirmDetails, resolve: (d: Decision) => void, timer: unknown, windowId: number | null}>} */
  const entries = new Map();

  /**
   * @param {string} id
   * @param {Decision} decision
   */
  function settle(id, decision) {
    const entry = entries.get(id);
    if (entry === undefined) return false;
    entries.delete(id);
    clearTimer(entry.timer);
    entry.resolve(decision);
    return true;
  }

  return {
    open({ kind, tool, origin = "", detail = "", pattern = null, presence = null, timeoutMs }) {
      if (kind !== "origin" && kind !== "action") throw new TypeError("confirm: kind must be origin or action");
      if (presence !== null && (typeof presence?.action !== "string" || typeof presence?.detail !== "string"
        || (kind === "origin" && presence.action !== "policy.widen"))) {
        throw new TypeError("confirm: presence needs a string action and detail (policy.widen for an origin)");
      }
      const tap = presence === null ? null : Object.freeze({ action: presence.action, detail: presence.detail });
      if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new RangeError("confirm: timeoutMs must be > 0");
      const id = String(newId());
      if (id === "" || entries.has(id)) throw new Error("confirm: id generator repeated itself");
      /** @type {Promise<Decision>} */
      const promise = new Promise((resolve) => {
        const timer = setTimer(() => settle(id, "timeout"), timeoutMs);
        entries.set(id, {
          details: { id, kind, tool: String(tool), origin: String(origin), detail: String(detail), pattern, presence: tap },
          resolve,
          timer,
          windowId: null,
        });
      });
      return { id, promise };
    },
    answer: (id, decision) => settle(id, decision === "allow" ? "allow" : "deny"),
    attachWindow(id, windowId) {
      const entry = entries.get(id);
      if (entry !== undefined) entry.windowId = windowId;
    },
    closed(windowId) {
      let n = 0;
      for (const [id, entry] of [...entries]) if (entry.windowId === windowId && settle(id, "deny")) n += 1;
      return n;
    },
    details: (id) => {
      const entry = typeof id === "string" ? entries.get(id) : undefined;
      return entry === undefined ? null : { ...entry.details };
    },
    size: () => entries.size,
  };
}
