// journal.js — the command journal: each command id the MCP server mints runs at most once per
// session, across transport failures (a host killed, a bridge socket dropped) and service-worker
// restarts. Pure: storage (chrome.storage.session through chrome-api.js: survives a worker
// restart, not a browser restart) and the logger are injected. It must never run a command
// twice, never answer one session with another session's recorded reply, and never hold more
// than its count and byte bounds.
//
// Theory of operation. A command is journaled under `session + "\n" + id`:
//   unseen            → a write records `started` in storage *before* it runs, then runs;
//   in flight here    → a retry waits for the same outcome (the same promise);
//   done              → the recorded reply is replayed;
//   started, not here → the worker that ran it died mid-call: `command_lost`;
//   evicted           → `result_evicted` (a tombstone remembers the id, not the reply);
//   unseen, but the server says an earlier attempt reached the browser (`retry`) → `command_lost`
//                       (the journal that saw it is gone: a browser restart, or the tombstone
//                       fell out of its bound).
// Read-only commands are never written to storage (nothing to protect; it spares the request
// path a storage write): a retry joins one in flight in this worker, else runs again.

import { CODE } from "../shared/error-codes.js";
import { utf8Length } from "./chunking.js";
import { isPlainObject } from "../shared/wire.js";

/** Storage keys of journal entries start with this (the rest: session, "\n", command id). */
export const JOURNAL_PREFIX = "journal:";
/** Most finished or started entries kept (in flight ones are never evicted). */
export const MAX_ENTRIES = 256;
/** Most bytes of recorded replies kept (chrome.storage.session holds 10 MB in all). */
export const MAX_BYTES = 4 * 1024 * 1024;
/** Most evicted ids remembered (a few dozen bytes each). */
export const MAX_TOMBSTONES = 2048;
/** A command id: what the MCP server mints (mcp_server/bridge_client.py `new_command_id`). */
export const COMMAND_ID_RE = /^[A-Za-z0-9_-]{8,64}$/;

/**
 * How a request names its command (docs/protocol.md "The command journal").
 * @typedef {{id: string, retry: boolean, readOnly: boolean}} Command
 */
/** @typedef {{ok: true, result: Record<string, unknown>} | {ok: false, error: {code: string, message: string}}} Outcome */
/**
 * One stored entry. `bytes` counts the recorded reply.
 * @typedef {{state: "started" | "done" | "evicted", seq: number, bytes: number, reply?: Outcome}} Entry
 */
/**
 * @typedef {object} JournalStorage
 * @property {() => Promise<Record<string, unknown>>} getAll every item of the area
 * @property {(items: Record<string, unknown>) => Promise<void>} set
 * @property {(keys: string[]) => Promise<void>} remove
 */
/**
 * @typedef {object} Journal
 * @property {() => Promise<void>} loaded settles once the stored journal is read (never rejects)
 * @property {(session: string, command: Command, execute: () => Promise<Outcome>) => Promise<Outcome>} run
 * @property {() => Promise<void>} settled settles once every outcome recorded so far is stored
 * @property {() => {entries: number, bytes: number, tombstones: number, inFlight: number}} snapshot
 */

/**
 * Check a request's `command` field: a Command, null when absent, or a message saying why not.
 * @param {unknown} raw
 * @returns {{ok: true, command: Command | null} | {ok: false, message: string}}
 */
export function parseCommand(raw) {
  if (raw === undefined) return { ok: true, command: null };
  if (!isPlainObject(raw) || typeof raw.id !== "string" || !COMMAND_ID_RE.test(raw.id)) {
    return { ok: false, message: "command.id must be 8-64 of A-Z, a-z, 0-9, '_' or '-'" };
  }
  if (typeof raw.retry !== "boolean" || typeof raw.readOnly !== "boolean") {
    return { ok: false, message: "command.retry and command.readOnly must be booleans" };
  }
  return { ok: true, command: { id: raw.id, retry: raw.retry, readOnly: raw.readOnly } };
}

/** @param {string} code @param {string} message @returns {Outcome} */
const failed = (code, message) => ({ ok: false, error: { code, message } });

/**
 * @param {unknown} v
 * @returns {v is Entry}
 */
function isEntry(v) {
  return isPlainObject(v) && (v.state === "started" || v.state === "done" || v.state === "evicted")
    && typeof v.seq === "number" && typeof v.bytes === "number"
    && (v.state !== "done" || (isPlainObject(v.reply) && typeof v.reply.ok === "boolean"));
}

/**
 * @param {{storage: JournalStorage, log?: {warn: (...a: unknown[]) => void}, maxEntries?: number,
 *   maxBytes?: number, maxTombstones?: number}} deps
 * @returns {Journal}
 */
export function createJournal({ storage, log = console, maxEntries = MAX_ENTRIES, maxBytes = MAX_BYTES, maxTombstones = MAX_TOMBSTONES }) {
  /** @type {Map<string, Entry>} entries and tombstones, by key */
  const entries = new Map();
  /** @type {Map<string, Promise<Outcome>>} commands running in this worker */
  const inFlight = new Map();
  let seq = 0;
  let bytes = 0;
  let kept = 0; // started + done entries
  let tombstones = 0;
  /** The outcome writes, one after another. */
  let writes = Promise.resolve();

  const loading = storage.getAll().then((items) => {
    for (const [key, value] of Object.entries(isPlainObject(items) ? items : {})) {
      if (!key.startsWith(JOURNAL_PREFIX) || !isEntry(value)) continue;
      add(key.slice(JOURNAL_PREFIX.length), value);
      seq = Math.max(seq, value.seq);
    }
  }).catch((err) => {
    // Without the stored journal a retry cannot be told from a first attempt: retries answer
    // command_lost (the `retry` rule), first attempts run; nothing runs twice.
    log.warn("tabwarden: could not read the command journal", err);
  });

  /** @param {string} key @param {Entry} entry */
  function add(key, entry) {
    forget(key);
    entries.set(key, entry);
    if (entry.state === "evicted") tombstones += 1;
    else {
      kept += 1;
      bytes += entry.bytes;
    }
  }

  /** @param {string} key */
  function forget(key) {
    const old = entries.get(key);
    if (old === undefined) return;
    entries.delete(key);
    if (old.state === "evicted") tombstones -= 1;
    else {
      kept -= 1;
      bytes -= old.bytes;
    }
  }

  /**
   * Evict the oldest entries not in flight (bar `finished`, just done) until the bounds hold;
   * returns what storage must do.
   * @param {string} finished
   * @returns {{set: Record<string, Entry>, remove: string[]}}
   */
  function enforceBounds(finished) {
    /** @type {Record<string, Entry>} */
    const set = {};
    /** @type {string[]} */
    const remove = [];
    if (kept > maxEntries || bytes > maxBytes) {
      const oldest = [...entries].filter(([k, e]) => e.state !== "evicted" && (k === finished || !inFlight.has(k)))
        .sort((a, b) => a[1].seq - b[1].seq);
      for (const [key, entry] of oldest) {
        if (kept <= maxEntries && bytes <= maxBytes) break;
        if (entry.state === "done") {
          const tomb = /** @type {Entry} */ ({ state: "evicted", seq: entry.seq, bytes: 0 });
          add(key, tomb);
          set[JOURNAL_PREFIX + key] = tomb;
        } else {
          // A lost start outlived its bound: a retry now meets the `retry` rule (command_lost).
          forget(key);
          remove.push(JOURNAL_PREFIX + key);
        }
      }
    }
    if (tombstones > maxTombstones) {
      const oldest = [...entries].filter(([, e]) => e.state === "evicted").sort((a, b) => a[1].seq - b[1].seq);
      for (const [key] of oldest) {
        if (tombstones <= maxTombstones) break;
        forget(key);
        delete set[JOURNAL_PREFIX + key];
        remove.push(JOURNAL_PREFIX + key);
      }
    }
    return { set, remove };
  }

  /**
   * Run a write: record `started`, run it, record the outcome.
   * @param {string} key
   * @param {() => Promise<Outcome>} execute
   * @returns {Promise<Outcome>}
   */
  async function runWrite(key, execute) {
    seq += 1;
    const started = /** @type {Entry} */ ({ state: "started", seq, bytes: 0 });
    try {
      await storage.set({ [JOURNAL_PREFIX + key]: started });
    } catch (err) {
      log.warn("tabwarden: could not journal a command; not running it", err);
      return failed(CODE.INTERNAL_ERROR, "the command could not be journaled, so it did not run");
    }
    add(key, started);
    const outcome = await runSafely(execute);
    const size = utf8Length(JSON.stringify(outcome));
    const done = /** @type {Entry} */ ({ state: "done", seq: started.seq, bytes: size, reply: outcome });
    add(key, done);
    const { set, remove } = enforceBounds(key);
    const record = entries.get(key);
    set[JOURNAL_PREFIX + key] = record ?? done;
    // Not awaited: the reply goes out at once, and this worker answers retries from memory. A
    // worker that dies before the write lands leaves `started`: a retry then hears command_lost.
    persist(set, remove);
    return outcome;
  }

  /**
   * Record outcomes and evictions, in order, after the reply went out; never rejects.
   * @param {Record<string, Entry>} set
   * @param {string[]} remove
   */
  function persist(set, remove) {
    writes = writes.then(async () => {
      await storage.set(set);
      if (remove.length > 0) await storage.remove(remove);
    }).catch((err) => log.warn("tabwarden: could not record a command's outcome", err));
  }

  /** @param {() => Promise<Outcome>} execute @returns {Promise<Outcome>} */
  async function runSafely(execute) {
    try {
      return await execute();
    } catch (err) {
      log.warn("tabwarden: a journaled command failed unexpectedly", err);
      return failed(CODE.INTERNAL_ERROR, "the command failed inside the extension");
    }
  }

  return {
    loaded: () => loading,

    async run(session, command, execute) {
      await loading;
      const key = `${session}\n${command.id}`;
      const running = inFlight.get(key);
      if (running !== undefined) return running;
      let promise;
      if (command.readOnly) {
        promise = runSafely(execute);
      } else {
        const entry = entries.get(key);
        if (entry?.state === "done" && entry.reply !== undefined) return entry.reply;
        if (entry?.state === "evicted") {
          return failed(CODE.RESULT_EVICTED, "this command ran, but its recorded result was dropped to make room");
        }
        if (entry?.state === "started") {
          return failed(CODE.COMMAND_LOST, "the browser stopped this command mid-call; the outcome is unknown: check the page before repeating a write");
        }
        if (command.retry) {
          return failed(CODE.COMMAND_LOST, "an earlier attempt may have reached a browser that has since restarted; the outcome is unknown: check the page before repeating a write");
        }
        promise = runWrite(key, execute);
      }
      inFlight.set(key, promise);
      try {
        return await promise;
      } finally {
        inFlight.delete(key);
      }
    },

    settled: () => writes,

    snapshot: () => ({ entries: kept, bytes, tombstones, inFlight: inFlight.size }),
  };
}
