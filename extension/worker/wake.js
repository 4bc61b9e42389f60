// wake.js — how the service worker wakes itself after Chrome stopped it (so the bridge comes
// back with no browser event): one named
// chrome.alarms alarm whose only job is to start the worker (every worker start connects the
// native port, background.js), created idempotently, and the bound the host records as "expected
// back within N s". Pure: the alarms API is injected (shared/chrome-api.js wraps the real one). It
// must never create a second wake alarm, never replace a healthy one (that would push its next
// firing out on every worker start), and never let an alarms failure throw out of a listener.
//
// Why an alarm: the host lives only while the worker holds the native port, so once the worker is
// stopped nothing outside the browser can start it again (docs/platform-facts-wake.md). An alarm
// is a lazy event: Chrome starts a stopped worker to deliver it. The figures below were measured
// on Debian's Chromium 156 (docs/platform-facts-wake.md, "Alarms").

/** The one alarm this extension creates. */
export const WAKE_ALARM = "tabwarden-wake";

/** Chrome 120+ refuses a period under 30 s for a packed (store-installed) extension. */
export const PACKED_PERIOD_MINUTES = 0.5;

/**
 * The period for an unpacked ("development") install: Chrome applies no minimum there; measured
 * here, a 1 s period fires about every second after a CDP stop too. We use 5 s: a wake soon
 * enough that an agent's next call finds the bridge, without starting the worker every second.
 */
export const UNPACKED_PERIOD_MINUTES = 5 / 60;

/** Slack on top of the period for starting the worker, the host and the hello/welcome. */
export const WAKE_SLACK_MS = 5_000;

/**
 * The alarm period for this install type (chrome.management.getSelf().installType).
 * @param {string | null | undefined} installType
 * @returns {number} minutes
 */
export function wakePeriodMinutes(installType) {
  return installType === "development" ? UNPACKED_PERIOD_MINUTES : PACKED_PERIOD_MINUTES;
}

/**
 * How long after the extension went away it is expected back: one alarm period plus slack. The
 * alarm brings a pending backoff reconnect forward (session.wake), so this holds whether the
 * worker was stopped or stayed alive waiting to reconnect.
 * @param {number} periodMinutes
 * @returns {number} milliseconds
 */
export function expectedBackMs(periodMinutes) {
  return Math.ceil(periodMinutes * 60_000 + WAKE_SLACK_MS);
}

/**
 * @typedef {{name: string, periodInMinutes?: number, scheduledTime?: number}} AlarmLike
 * @typedef {object} AlarmsApi
 * @property {(name: string) => Promise<AlarmLike | undefined>} getAlarm
 * @property {(name: string, info: {periodInMinutes: number, delayInMinutes: number}) => Promise<void>} createAlarm
 */

/**
 * Make sure exactly one wake alarm exists with `periodMinutes`. An existing one with that period
 * is left alone (re-creating it would restart its schedule); a missing one, or one with another
 * period (an update changed it), is created under the same name, which replaces it.
 * @param {AlarmsApi} alarms
 * @param {number} periodMinutes
 * @returns {Promise<"kept" | "created">}
 */
export async function ensureWakeAlarm(alarms, periodMinutes) {
  const existing = await alarms.getAlarm(WAKE_ALARM);
  if (existing && existing.periodInMinutes === periodMinutes) return "kept";
  await alarms.createAlarm(WAKE_ALARM, { periodInMinutes: periodMinutes, delayInMinutes: periodMinutes });
  return "created";
}

/**
 * Whether an onAlarm event is ours.
 * @param {unknown} alarm
 * @returns {boolean}
 */
export function isWakeAlarm(alarm) {
  return typeof alarm === "object" && alarm !== null && /** @type {AlarmLike} */ (alarm).name === WAKE_ALARM;
}
