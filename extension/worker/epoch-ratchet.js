// epoch-ratchet.js — this browser's witness of the trust record's epoch (so a record put back
// from an older copy is caught): the highest
// epoch the host has stated for the pinned host key (docs/protocol.md "The epoch ratchet"), kept
// in chrome.storage.local under RATCHET_STORAGE_KEY, keyed by the key's fingerprint. A host that
// states an older epoch is serving a record older than one this browser has seen: every request
// is refused (trust_rolled_back) and the popup and options page say so until a record at least
// as new as the one seen comes back (the person confirms at the terminal, or pairs again: a new
// key starts a fresh ratchet). Pure: storage, the pinned fingerprint, the clock and the logger
// are injected. It must never lower a recorded epoch, never let a request through before the
// higher epoch it carries is persisted, and never serve a request whose epoch is missing,
// malformed or lower than the one recorded.

import { CODE } from "../shared/error-codes.js";
import { isPlainObject } from "../shared/wire.js";

/** chrome.storage.local key of the ratchet: {[fingerprint]: RatchetEntry}. */
export const RATCHET_STORAGE_KEY = "epochSeen";

/**
 * What is recorded for one pinned host key: the highest epoch seen, and, while the host states
 * an older one, that epoch and when it was first stated.
 * @typedef {{epoch: number, rolledBack?: {epoch: number, at: string}}} RatchetEntry
 */

/**
 * @typedef {{kind: "ok"} | {kind: "malformed"} | {kind: "rolled_back", epoch: number, seen: number}
 *   | {kind: "unrecorded"}} Witnessed
 */

/**
 * An epoch as the host states it: a safe integer ≥ 0, else null (missing, a string, a float…).
 * @param {unknown} value
 * @returns {number | null}
 */
export function parseEpoch(value) {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * The stored ratchet, keeping only well-formed entries (a malformed one records nothing).
 * @param {unknown} value
 * @returns {Map<string, RatchetEntry>}
 */
export function parseRatchet(value) {
  /** @type {Map<string, RatchetEntry>} */
  const entries = new Map();
  if (!isPlainObject(value)) return entries;
  for (const [fingerprint, raw] of Object.entries(value)) {
    if (fingerprint === "" || !isPlainObject(raw)) continue;
    const epoch = parseEpoch(raw.epoch);
    if (epoch === null) continue;
    /** @type {RatchetEntry} */
    const entry = { epoch };
    const back = raw.rolledBack;
    if (isPlainObject(back)) {
      const lower = parseEpoch(back.epoch);
      if (lower !== null && lower < epoch && typeof back.at === "string") entry.rolledBack = { epoch: lower, at: back.at };
    }
    entries.set(fingerprint, entry);
  }
  return entries;
}

/**
 * The message a refused request carries (the code's hint says the same in general terms).
 * @param {number} epoch stated by the host
 * @param {number} seen recorded here
 */
export function rolledBackMessage(epoch, seen) {
  return `the trust record was rolled back (epoch ${epoch}, this browser has seen ${seen}): run \`tabwarden unkill\` `
    + "at a terminal to confirm the record as it is, or `tabwarden pair --reset` and pair again";
}

/** The epoch a host states in its welcome while it refuses its own record (it then refuses
 * every request itself; trust/verify.py Effective.deny_all). */
export const REFUSED_RECORD_EPOCH = -1;

/** The message for a request without a valid epoch (a host that predates the ratchet). */
export const MALFORMED_EPOCH_MESSAGE = "the host stated no valid trust-record epoch with this request; "
  + "update tabwarden and the extension together";

/**
 * @typedef {object} Verdict null serves the request; otherwise its code and message
 * @property {string} code
 * @property {string} message
 */

/**
 * @typedef {object} EpochRatchet
 * @property {() => Promise<void>} loaded resolves once the stored ratchet was read (or failed to be)
 * @property {(epoch: unknown) => Promise<Verdict | null>} admit a request from the host stated
 *   `epoch`: null serves it (a higher epoch is persisted first), else refuse with the verdict
 * @property {(epoch: unknown) => Promise<void>} observe the host stated `epoch` outside a request
 *   (its welcome, once it proved the pinned key): raise, flag or clear as admit does
 * @property {() => number | null} seen the highest epoch recorded for the pinned key, if any
 * @property {() => {epoch: number, seen: number, at: string} | null} rolledBack while the host
 *   states an older record than this browser has seen
 */

/**
 * @param {{storageGet: (key: string) => Promise<unknown>, storageSet: (key: string, value: unknown) => Promise<void>,
 *   fingerprint: () => string | null, now: () => number, onChange?: () => void,
 *   log?: {warn: (...a: unknown[]) => void}}} deps fingerprint: the pinned host key's, null when
 *   nothing is pinned (then there is no ratchet: the host's key is not bound to anything yet)
 * @returns {EpochRatchet}
 */
export function createEpochRatchet({ storageGet, storageSet, fingerprint, now, onChange = () => {}, log = console }) {
  /** @type {Map<string, RatchetEntry>} */
  let entries = new Map();
  let unreadable = false;
  const ready = storageGet(RATCHET_STORAGE_KEY).then(
    (value) => {
      entries = parseRatchet(value);
    },
    (err) => {
      // Like the pinned record: a ratchet that cannot be read refuses, it never starts afresh.
      unreadable = true;
      log.warn("tabwarden: could not read the trust epoch ratchet; refusing requests", err);
    },
  );
  /** One witness at a time, in arrival order, so writes never race each other backwards. */
  /** @type {Promise<unknown>} */
  let queue = ready;

  function persist() {
    /** @type {Record<string, RatchetEntry>} */
    const value = {};
    for (const [fp, entry] of entries) value[fp] = entry;
    return storageSet(RATCHET_STORAGE_KEY, value);
  }

  function changed() {
    try {
      onChange();
    } catch {
      // display only
    }
  }

  /**
   * Compare `epoch` with what is recorded for the pinned key and record it; resolves once any
   * change is persisted (rejects when it could not be: the caller must then not act).
   * @param {number} epoch
   * @returns {Promise<Witnessed>}
   */
  async function witness(epoch) {
    const fp = fingerprint();
    if (fp === null) return { kind: "unrecorded" };
    if (unreadable) throw new Error("the stored ratchet could not be read");
    const entry = entries.get(fp);
    if (entry !== undefined && epoch < entry.epoch) {
      if (entry.rolledBack === undefined || entry.rolledBack.epoch !== epoch) {
        entries.set(fp, { epoch: entry.epoch, rolledBack: { epoch, at: new Date(now()).toISOString() } });
        changed();
        // Refusing is the action; remembering it for the banner across worker restarts is best effort.
        persist().catch((err) => log.warn("tabwarden: could not record the rolled-back trust record", err));
      }
      return { kind: "rolled_back", epoch, seen: entry.epoch };
    }
    if (entry === undefined || epoch > entry.epoch || entry.rolledBack !== undefined) {
      entries.set(fp, { epoch: Math.max(epoch, entry?.epoch ?? epoch) });
      changed();
      await persist();
    }
    return { kind: "ok" };
  }

  /**
   * @param {unknown} value
   * @returns {Promise<Witnessed>}
   */
  function enqueue(value) {
    const epoch = parseEpoch(value);
    if (epoch === null) return Promise.resolve({ kind: "malformed" });
    const result = queue.then(() => witness(epoch));
    queue = result.catch(() => {});
    return result;
  }

  return {
    loaded: () => ready,

    async admit(value) {
      let w;
      try {
        w = await enqueue(value);
      } catch (err) {
        log.warn("tabwarden: could not record the trust record's epoch; refusing the request", err);
        return { code: CODE.INTERNAL_ERROR, message: "this browser could not record the trust record's epoch" };
      }
      if (w.kind === "malformed") return { code: CODE.PROTOCOL_MISMATCH, message: MALFORMED_EPOCH_MESSAGE };
      if (w.kind === "rolled_back") {
        log.warn(`tabwarden: ${rolledBackMessage(w.epoch, w.seen)}`);
        return { code: CODE.TRUST_ROLLED_BACK, message: rolledBackMessage(w.epoch, w.seen) };
      }
      return null;
    },

    async observe(value) {
      if (value === REFUSED_RECORD_EPOCH) return; // the host refuses its own record: nothing to compare
      try {
        const w = await enqueue(value);
        if (w.kind === "malformed") log.warn("tabwarden: the host stated no valid trust-record epoch");
      } catch (err) {
        log.warn("tabwarden: could not record the trust record's epoch", err);
      }
    },

    seen() {
      const fp = fingerprint();
      return fp === null ? null : entries.get(fp)?.epoch ?? null;
    },

    rolledBack() {
      const fp = fingerprint();
      const entry = fp === null ? undefined : entries.get(fp);
      if (entry?.rolledBack === undefined) return null;
      return { epoch: entry.rolledBack.epoch, seen: entry.epoch, at: entry.rolledBack.at };
    },
  };
}
