// backoff.js — reconnect delay schedule for the native port: initialMs doubling to maxMs, with
// optional injected jitter, reset after a connection that stayed up long enough to count healthy.
// Pure: no chrome, no timers, no clock, no randomness of its own (jitter/random are injected).

/**
 * @typedef {object} BackoffOptions
 * @property {number} [initialMs=250] first delay
 * @property {number} [maxMs=30000] cap on any delay (jitter included)
 * @property {number} [factor=2] growth per failed attempt
 * @property {number} [healthyMs=10000] a connection up at least this long resets the schedule
 * @property {(ms: number) => number} [jitter] maps the base delay to the delay used
 */

/**
 * @typedef {object} Backoff
 * @property {() => number} next delay before the next attempt; advances the schedule
 * @property {() => void} reset back to initialMs
 * @property {(uptimeMs: number) => number} afterConnection a connection ended after
 *   `uptimeMs`; resets first if it was healthy, then returns next()
 * @property {() => number} attempts delays handed out since the last reset
 */

/**
 * @param {BackoffOptions} [options]
 * @returns {Backoff}
 */
export function createBackoff(options = {}) {
  const { initialMs = 250, maxMs = 30_000, factor = 2, healthyMs = 10_000, jitter } = options;
  if (!(initialMs > 0 && maxMs >= initialMs && factor >= 1 && healthyMs >= 0)) {
    throw new RangeError("backoff: need 0 < initialMs <= maxMs, factor >= 1, healthyMs >= 0");
  }
  let attempts = 0;

  function next() {
    const base = Math.min(maxMs, initialMs * factor ** Math.min(attempts, 64));
    attempts += 1;
    const raw = jitter ? jitter(base) : base;
    const ms = Number.isFinite(raw) ? raw : base;
    return Math.round(Math.min(maxMs, Math.max(0, ms)));
  }

  function reset() {
    attempts = 0;
  }

  /** @param {number} uptimeMs */
  function afterConnection(uptimeMs) {
    if (uptimeMs >= healthyMs) reset();
    return next();
  }

  return { next, reset, afterConnection, attempts: () => attempts };
}

/**
 * "Equal jitter": half the delay fixed, half random, so retries from many workers spread out.
 * @param {() => number} random returns [0, 1), e.g. Math.random
 * @returns {(ms: number) => number}
 */
export function equalJitter(random) {
  return (ms) => ms / 2 + random() * (ms / 2);
}
