// handlers/ready.js — actionability: before an element action acts, wait (bounded by the call's
// `timeoutMs`) until its element exists, is visible, is stable (the same box over two animation
// frame intervals), is enabled and, for a click, would receive the event at its point. Each look
// is one page call (page/actions.js `actionable`), which says which condition fails; this loop
// looks again until every one holds or the time is up, then answers the code of the condition
// that failed last. Pure over `look`, `now` and `sleep` (tests/extension/ready.test.mjs). It must
// never report a look that is still running at the deadline as a miss (a look is never cut
// short: a stability proof under way finishes), never wait on a ref from another document
// (bad_ref answers at once), and never count the look that proves an unchanged box as waiting.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";

/** The longest an action may wait for its element (the catalogue's ElementArgs.timeoutMs). */
export const MAX_READY_MS = 10_000;
/** The default wait (the catalogue's). */
export const DEFAULT_READY_MS = 5000;
/** Pauses between failed looks: quick at first, then every 100 ms. */
export const POLL_MS = Object.freeze([0, 20, 50, 100]);

/** The page's answer for each failed condition, and what the error says. */
const FAILURES = Object.freeze({
  element_not_visible: [CODE.ELEMENT_NOT_VISIBLE, "is not visible"],
  element_not_stable: [CODE.ELEMENT_NOT_STABLE, "kept moving"],
  element_disabled: [CODE.ELEMENT_DISABLED, "stayed disabled"],
  element_covered: [CODE.ELEMENT_COVERED, "stayed covered by another element where it would be clicked"],
  element_not_found: [CODE.ELEMENT_NOT_FOUND, "never appeared"],
});

/**
 * The call's `timeoutMs` for the wait (its range is the wire schema's; here only the default).
 * @param {Record<string, unknown>} args
 */
export function argReadyMs(args) {
  const v = args.timeoutMs;
  return Number.isSafeInteger(v) && /** @type {number} */ (v) >= 0 ? Math.min(MAX_READY_MS, /** @type {number} */ (v)) : DEFAULT_READY_MS;
}

/**
 * Wait until `look()` answers `{ok: true}`, looking again after each failure until `timeoutMs`
 * has passed since the start; a look in flight at the deadline is let finish. `look` answers
 * `{ok: true}` or `{fail: <one of FAILURES' keys>, desc?, hitTarget?}`, or throws a BridgeError
 * (element_not_found is waited on; any other is answered at once).
 * @param {{look: () => Promise<Record<string, any>>, timeoutMs: number, now?: () => number,
 *   sleep?: (ms: number) => Promise<void>}} o
 * @returns {Promise<{waitedMs: number}>} how long it waited before the look that succeeded
 */
export async function ready({ look, timeoutMs, now = () => Date.now(), sleep = (ms) => new Promise((r) => setTimeout(r, ms)) }) {
  const start = now();
  /** @type {Record<string, any>} */
  let last = { fail: "element_not_found" };
  let slept = 0;
  for (let n = 0; ; n++) {
    const began = now();
    /** @type {Record<string, any>} */
    let r;
    try {
      r = await look();
    } catch (err) {
      if (!(err instanceof BridgeError) || err.code !== CODE.ELEMENT_NOT_FOUND) throw err;
      r = { fail: "element_not_found", message: err.message };
    }
    if (r.ok === true) return { waitedMs: Math.max(0, Math.round(began - start)) };
    last = typeof r.fail === "string" && Object.hasOwn(FAILURES, r.fail) ? r : { fail: "element_not_found" };
    // The pauses count too: a clock that does not move (a test's) still reaches the deadline.
    const spent = () => Math.max(now() - start, slept);
    if (spent() >= timeoutMs) break;
    const pause = Math.max(1, Math.min(POLL_MS[Math.min(n, POLL_MS.length - 1)], timeoutMs - spent()));
    await sleep(pause);
    slept += pause;
  }
  const [code, said] = FAILURES[/** @type {keyof typeof FAILURES} */ (last.fail)];
  const what = typeof last.desc === "string" && last.desc !== "" ? last.desc : "the element";
  const by = last.fail === "element_covered" && typeof last.hitTarget === "string" ? ` (${last.hitTarget} is there)` : "";
  const detail = last.fail === "element_not_found" && typeof last.message === "string" ? `: ${last.message}` : "";
  throw new BridgeError(code, `${what} ${said}${by} for ${timeoutMs} ms${detail}; nothing was done`);
}
