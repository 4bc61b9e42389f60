// error-report.js — the extension's own errors, forwarded to the host's log (host_call
// `extension_error`, host/extension_log.py): an uncaught error or unhandled rejection in the
// service worker, and a worker listener that threw (background.js `guarded`). Never a page's
// console output: only what the extension's own code threw reaches `report`.
// Each report is masked as any text leaving the extension is (mask.js maskText: credentials,
// tokens, secret-named values, cards), capped (MAX_MESSAGE, MAX_STACK), and rate-limited: at
// most BURST in WINDOW_MS, the rest counted and the count sent with the next one let through.
// A report that cannot be sent (no host) is dropped: the worker's console still has it.
// Pure: the host call, the clock and the masking are injected; `report` never throws.

import { maskText } from "./mask.js";

/** Most characters of a message, of a stack, and of where it was thrown, sent. */
export const MAX_MESSAGE = 500;
export const MAX_STACK = 1000;
export const MAX_WHERE = 40;
/** Most reports sent in one window of WINDOW_MS; the rest are counted (`dropped`). */
export const BURST = 10;
export const WINDOW_MS = 60_000;

/**
 * @typedef {object} ErrorReporter
 * @property {(kind: "error" | "rejection", where: string, err: unknown) => void} report
 * @property {() => {sent: number, dropped: number}} snapshot
 */

/**
 * An error's message and stack, whatever was thrown.
 * @param {unknown} err
 * @returns {{message: string, stack: string}}
 */
function describe(err) {
  if (err instanceof Error) {
    const stack = typeof err.stack === "string" ? err.stack : "";
    return { message: `${err.name}: ${err.message}`, stack: stack.split("\n").slice(1, 8).map((l) => l.trim()).join(" | ") };
  }
  try {
    return { message: typeof err === "string" ? err : JSON.stringify(err) ?? String(err), stack: "" };
  } catch {
    return { message: String(err), stack: "" };
  }
}

/**
 * @param {{hostCall: (action: string, args: Record<string, unknown>) => Promise<unknown>,
 *   now: () => number, mask?: (text: string) => string}} deps
 * @returns {ErrorReporter}
 */
export function createErrorReporter({ hostCall, now, mask = maskText }) {
  let windowStart = -Infinity;
  let inWindow = 0;
  let dropped = 0;
  let sent = 0;

  return {
    report(kind, where, err) {
      try {
        const t = now();
        if (t - windowStart >= WINDOW_MS) {
          windowStart = t;
          inWindow = 0;
        }
        if (inWindow >= BURST) {
          dropped += 1;
          return;
        }
        inWindow += 1;
        const { message, stack } = describe(err);
        /** @type {Record<string, unknown>} */
        const args = {
          kind,
          where: String(where).slice(0, MAX_WHERE),
          // Masked before cutting: a cut must not leave half a secret unrecognised.
          message: mask(message.slice(0, MAX_MESSAGE * 4)).slice(0, MAX_MESSAGE),
          stack: mask(stack.slice(0, MAX_STACK * 4)).slice(0, MAX_STACK),
        };
        if (dropped > 0) args.dropped = dropped;
        dropped = 0;
        sent += 1;
        hostCall("extension_error", args).catch(() => {}); // no host: the console still has it
      } catch {
        // reporting an error must never raise one
      }
    },
    snapshot: () => ({ sent, dropped }),
  };
}

/** Longest name of an error a page sends (`TypeError`), kept only when it looks like one. */
const NAME_RE = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;

/**
 * The worker's handler for `page_error` (worker/message-router.js admits it from the options
 * page, the popup and the confirm window only): the page's error, reported as the worker's own
 * are, under "page <name>". A malformed message reports nothing.
 * @param {ErrorReporter} reporter
 * @returns {Map<string, (msg: Record<string, unknown>) => Promise<{ok: boolean}>>}
 */
export function pageErrorMessages(reporter) {
  return new Map([["page_error", async (msg) => {
    const { page, kind, name, message, stack } = msg;
    if (!["options", "popup", "confirm"].includes(/** @type {string} */ (page))) return { ok: false };
    if (kind !== "error" && kind !== "rejection") return { ok: false };
    if (typeof message !== "string" || typeof stack !== "string") return { ok: false };
    const err = new Error(message.slice(0, MAX_MESSAGE * 4));
    err.name = typeof name === "string" && NAME_RE.test(name) ? name : "Error";
    // describe() drops the stack's first line (the message): keep the page's frames whole.
    err.stack = `${err.name}\n${stack.slice(0, MAX_STACK * 4)}`;
    reporter.report(kind, `page ${page}`, err);
    return { ok: true };
  }]]);
}
