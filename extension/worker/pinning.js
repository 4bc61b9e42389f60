// pinning.js — host-key pinning (docs/protocol.md "Browser pairing and host-key pinning"): checks
// the host's proof that it holds the pinned P-256 key, and the gate that decides whether host
// requests may be served. Pure: WebCrypto, randomness, timers and the host call are injected.
// It must never serve a request while the host is compromised, never count anything but a valid
// signature over a fresh nonce as proof, and never leave "compromised" except by pairing again
// (or the pinned record being removed).

import { CODE } from "../shared/error-codes.js";
import { isPlainObject } from "../shared/wire.js";

/** Domain-separation prefix the host signs before the nonce. */
export const PROOF_LABEL = "tabwarden/host-proof/v1\n";
/** Bytes of the fresh nonce sent in every host_proof. */
export const NONCE_BYTES = 32;
/** How long a request waits for a running verification before it is refused. */
export const GATE_WAIT_MS = 5_000;
/** chrome.storage.local key of the pinned record. */
export const PIN_STORAGE_KEY = "pinnedHost";

/** @param {Uint8Array} bytes */
export function toBase64(bytes) {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/**
 * Strict base64 → bytes; throws on anything that is not base64.
 * @param {unknown} text
 */
export function fromBase64(text) {
  if (typeof text !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
    throw new TypeError("not base64");
  }
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

/**
 * Whether `signatureB64` is the pinned key's ECDSA P-256/SHA-256 signature (raw r‖s, 64 bytes)
 * over PROOF_LABEL ‖ nonce. Any malformed input is false, never a throw.
 * @param {{spkiB64: unknown, nonce: Uint8Array, signatureB64: unknown, subtle: SubtleCrypto}} args
 * @returns {Promise<boolean>}
 */
export async function verifyHostProof({ spkiB64, nonce, signatureB64, subtle }) {
  try {
    if (!(nonce instanceof Uint8Array) || nonce.length !== NONCE_BYTES) return false;
    const signature = fromBase64(signatureB64);
    if (signature.length !== 64) return false;
    const key = await subtle.importKey("spki", fromBase64(spkiB64), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
    const label = new TextEncoder().encode(PROOF_LABEL);
    const data = new Uint8Array(label.length + nonce.length);
    data.set(label, 0);
    data.set(nonce, label.length);
    return (await subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, signature, data)) === true;
  } catch {
    return false;
  }
}

/**
 * @typedef {{hostKey: string, fingerprint: string, browser: string, credentialId: string | null,
 *   pairedAt: string, windowOnly?: true, compromisedAt?: string}} PinnedRecord credentialId is
 *   null exactly when the browser paired window-only (no authenticator)
 */

/**
 * The stored record, or null when absent or malformed (a malformed record pins nothing).
 * @param {unknown} value
 * @returns {PinnedRecord | null}
 */
export function parsePinnedRecord(value) {
  if (!isPlainObject(value)) return null;
  for (const k of ["hostKey", "fingerprint", "browser", "pairedAt"]) {
    if (typeof value[k] !== "string" || value[k] === "") return null;
  }
  const windowOnly = value.windowOnly === true;
  if (windowOnly ? value.credentialId !== null : typeof value.credentialId !== "string" || value.credentialId === "") return null;
  const rec = /** @type {PinnedRecord} */ ({
    hostKey: value.hostKey, fingerprint: value.fingerprint, browser: value.browser,
    credentialId: windowOnly ? null : value.credentialId, pairedAt: value.pairedAt,
  });
  if (windowOnly) rec.windowOnly = true;
  if (typeof value.compromisedAt === "string") rec.compromisedAt = value.compromisedAt;
  return rec;
}

/**
 * Ask the host to sign a fresh nonce and check it against `spkiB64`.
 * @param {{spkiB64: string, hostCall: (action: string, args: object) => Promise<any>,
 *   subtle: SubtleCrypto, randomBytes: (n: number) => Uint8Array}} deps
 * @returns {Promise<boolean>} false on a bad signature, an error or a timeout
 */
export async function proveHost({ spkiB64, hostCall, subtle, randomBytes }) {
  try {
    const nonce = randomBytes(NONCE_BYTES);
    const result = await hostCall("host_proof", { nonce: toBase64(nonce) });
    const signatureB64 = isPlainObject(result) ? result.signature : undefined;
    return await verifyHostProof({ spkiB64, nonce, signatureB64, subtle });
  } catch {
    return false;
  }
}

/** @typedef {"unpinned" | "verifying" | "trusted" | "compromised"} GateState */

/**
 * @typedef {object} PinGate
 * @property {(record: unknown) => void} setPinned the stored record changed (or was first read)
 * @property {(record: PinnedRecord) => void} markPaired pairing just succeeded with this record
 * @property {() => void} onWelcome a connection became ready: prove the pinned key again
 * @property {() => void} onClosed the connection ended: trust must be proven afresh
 * @property {() => Promise<string | null>} admit null to serve a request, else "host_compromised"
 * @property {() => {state: GateState, loaded: boolean, pinned: PinnedRecord | null}} snapshot
 */

/**
 * The gate. Requests while "verifying" (or before the stored record is read) wait up to waitMs
 * for the outcome, then are served if trusted/unpinned and refused host_compromised otherwise.
 * @param {{hostCall: (action: string, args: object) => Promise<any>, subtle: SubtleCrypto,
 *   randomBytes: (n: number) => Uint8Array, timers: import("./pending.js").Timers,
 *   onCompromised?: (record: PinnedRecord) => void, onChange?: (state: GateState) => void,
 *   waitMs?: number, log?: {warn: (...a: unknown[]) => void}}} deps
 * @returns {PinGate}
 */
export function createPinGate({ hostCall, subtle, randomBytes, timers, onCompromised = () => {}, onChange = () => {}, waitMs = GATE_WAIT_MS, log = console }) {
  /** @type {GateState} */
  let state = "verifying";
  let loaded = false;
  let connected = false;
  let generation = 0;
  /** @type {PinnedRecord | null} */
  let pinned = null;
  /** @type {Set<() => void>} */
  const waiters = new Set();

  const decided = () => loaded && state !== "verifying";

  /** @param {GateState} next */
  function set(next) {
    const changed = next !== state;
    state = next;
    if (decided()) for (const wake of [...waiters]) wake();
    if (changed) {
      try {
        onChange(state);
      } catch {
        // display only
      }
    }
  }

  async function verify() {
    const gen = ++generation;
    const rec = pinned;
    if (rec === null) return;
    set("verifying");
    const ok = await proveHost({ spkiB64: rec.hostKey, hostCall, subtle, randomBytes });
    if (gen !== generation || pinned !== rec) return; // superseded by a newer connection or record
    if (ok) {
      set("trusted");
      return;
    }
    log.warn("tabwarden: the host could not prove it holds the pinned key; refusing every request until paired again");
    set("compromised");
    try {
      onCompromised(rec);
    } catch {
      // persisting is best effort; the state here is already compromised
    }
  }

  return {
    setPinned(value) {
      const rec = parsePinnedRecord(value);
      const prev = pinned;
      pinned = rec;
      loaded = true;
      if (rec === null) {
        generation += 1;
        set("unpinned");
        return;
      }
      if (rec.compromisedAt !== undefined) {
        generation += 1;
        set("compromised");
        return;
      }
      const same = prev !== null && prev.hostKey === rec.hostKey && prev.pairedAt === rec.pairedAt;
      if (same && state !== "unpinned") return; // our own write echoing back: keep the outcome
      generation += 1;
      set("verifying");
      if (connected) verify();
    },

    markPaired(record) {
      pinned = parsePinnedRecord(record);
      loaded = true;
      generation += 1;
      set(pinned === null ? "unpinned" : "trusted");
    },

    onWelcome() {
      connected = true;
      if (loaded && pinned !== null && state !== "compromised") verify();
    },

    onClosed() {
      connected = false;
      generation += 1;
      if (state === "trusted") set("verifying");
    },

    admit() {
      const verdict = () => (state === "unpinned" || state === "trusted" ? null : CODE.HOST_COMPROMISED);
      if (decided()) return Promise.resolve(verdict());
      return new Promise((resolve) => {
        const wake = () => {
          waiters.delete(wake);
          timers.clearTimer(timer);
          resolve(verdict());
        };
        const timer = timers.setTimer(wake, waitMs);
        waiters.add(wake);
      });
    },

    snapshot: () => ({ state, loaded, pinned }),
  };
}
