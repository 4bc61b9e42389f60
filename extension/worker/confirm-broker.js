// confirm-broker.js — the pending confirmations the person is asked about in the confirm
// window, by id. Pure: no chrome; timers and ids are injected. It must never resolve a
// confirmation twice (only the first answer counts), and must resolve every confirmation with
// "deny" when its window closes or the answer is anything but "allow", and with "timeout" when
// nobody answered in time (a refusal too, told apart so the agent and the audit can say so).
// A deny may ask to keep its window open (a refused tap: the window says why until the person
// closes it); an allow never does.

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
 * `presence`, the page asks for a tap instead of a click). Display only, never consulted for a
 * decision: `client` the asking client's paired label, `fields` a submit's field names (never a
 * value) and method, `source` where an address or value came from ("a page on https://…", the
 * provenance gate's words), `expiresAt` when it times out (wall-clock ms; the page counts down),
 * `grace` the seconds an allow covers further graceable actions on this tab and origin without
 * asking (worker/grace.js; 0: none — the page then says nothing about it).
 * @typedef {{id: string, kind: ConfirmKind, tool: string, origin: string, detail: string,
 *   pattern: string | null, presence: Presence | null, client: string | null,
 *   fields: Fields | null, source: string | null, expiresAt: number | null, grace: number}} ConfirmDetails
 */
/** `method`: how the form is sent ("get" puts the values into the address), when known. @typedef {{names: string[], more: number, method?: "get" | "post"}} Fields */

/** Most field names shown, and their longest (the page already bounds both; this is the worker's own check). */
const MAX_FIELDS = 20;
const MAX_FIELD_NAME = 80;
/** Longest `source` shown. */
const MAX_SOURCE = 300;
/** Longest grace (trust/policy.py clickGraceSeconds: 0..600). */
const MAX_GRACE = 600;

/** @param {unknown} s seconds as the asker gave them; anything but a positive number is 0 */
const graceOf = (s) => (typeof s === "number" && Number.isFinite(s) && s > 0 ? Math.min(Math.floor(s), MAX_GRACE) : 0);

/**
 * `fields` as the page sent them, reduced to strings and a count; null for anything else.
 * @param {unknown} f
 * @returns {Fields | null}
 */
function checkedFields(f) {
  if (f === null || typeof f !== "object" || !Array.isArray(/** @type {any} */ (f).names)) return null;
  const { names, more, method } = /** @type {{names: unknown[], more: unknown, method: unknown}} */ (f);
  const kept = names.filter((n) => typeof n === "string").map((n) => String(n).slice(0, MAX_FIELD_NAME));
  const extra = (Number.isSafeInteger(more) && /** @type {number} */ (more) > 0 ? /** @type {number} */ (more) : 0)
    + Math.max(0, kept.length - MAX_FIELDS);
  /** @type {Fields} */
  const out = { names: kept.slice(0, MAX_FIELDS), more: extra };
  if (method === "get" || method === "post") out.method = method;
  return out;
}

/**
 * @typedef {object} ConfirmBroker
 * @property {(req: {kind: ConfirmKind, tool: string, origin?: string, detail?: string,
 *   pattern?: string | null, presence?: Presence | null, timeoutMs: number,
 *   client?: string | null, fields?: unknown, source?: string | null, expiresAt?: number | null,
 *   grace?: unknown}) =>
 *   {id: string, promise: Promise<Decision>}} open
 * @property {(id: string, decision: unknown, opts?: {keepWindow?: boolean}) => boolean} answer
 *   first answer wins; unknown id, a settled id, or anything but "allow" for a pending id →
 *   false / "deny". keepWindow (a deny only): its window stays open, showing why
 * @property {(id: string) => boolean} keepsWindow whether `id` settled asking to keep its window
 *   open (asked once, by the confirmer, when it settles; forgotten then)
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
  /** Settled ids whose window stays open, until the confirmer asks. @type {Set<string>} */
  const kept = new Set();

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
    open({ kind, tool, origin = "", detail = "", pattern = null, presence = null, timeoutMs, client = null, fields = null, source = null, expiresAt = null, grace = 0 }) {
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
          details: {
            id, kind, tool: String(tool), origin: String(origin), detail: String(detail), pattern, presence: tap,
            client: typeof client === "string" && client !== "" ? client.slice(0, 64) : null,
            fields: checkedFields(fields),
            source: typeof source === "string" && source !== "" ? source.slice(0, MAX_SOURCE) : null,
            expiresAt: typeof expiresAt === "number" && Number.isFinite(expiresAt) ? expiresAt : null,
            grace: kind === "action" && presence === null ? graceOf(grace) : 0,
          },
          resolve,
          timer,
          windowId: null,
        });
      });
      return { id, promise };
    },
    answer(id, decision, { keepWindow = false } = {}) {
      const allow = decision === "allow";
      if (keepWindow === true && !allow && entries.has(id)) kept.add(id); // before settle wakes the confirmer
      return settle(id, allow ? "allow" : "deny");
    },
    keepsWindow: (id) => kept.delete(id),
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
      return entry === undefined ? null
        : { ...entry.details, fields: entry.details.fields === null ? null : { ...entry.details.fields, names: [...entry.details.fields.names] } };
    },
    size: () => entries.size,
  };
}
