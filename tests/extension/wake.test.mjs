import { test } from "node:test";
import assert from "node:assert/strict";
import {
  PACKED_PERIOD_MINUTES, UNPACKED_PERIOD_MINUTES, WAKE_ALARM, WAKE_SLACK_MS,
  ensureWakeAlarm, expectedBackMs, isWakeAlarm, wakePeriodMinutes,
} from "../../extension/worker/wake.js";
import { createSession } from "../../extension/worker/session.js";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { createBackoff } from "../../extension/worker/backoff.js";
import { fakeLog, fakePort, fakeTimers } from "./helpers/fakes.mjs";

/** chrome.alarms as Chrome keeps it: one alarm per name, create replaces. */
function fakeAlarms() {
  const alarms = new Map();
  let creates = 0;
  return {
    getAlarm: async (name) => alarms.get(name),
    createAlarm: async (name, info) => {
      creates += 1;
      alarms.set(name, { name, periodInMinutes: info.periodInMinutes, scheduledTime: creates });
    },
    all: () => [...alarms.values()],
    creates: () => creates,
  };
}

test("the period: unpacked installs wake sooner; anything else gets Chrome's 30 s floor", () => {
  assert.equal(wakePeriodMinutes("development"), UNPACKED_PERIOD_MINUTES);
  for (const other of ["normal", "admin", "sideload", "other", null, undefined]) {
    assert.equal(wakePeriodMinutes(other), PACKED_PERIOD_MINUTES);
  }
  assert.ok(PACKED_PERIOD_MINUTES >= 0.5, "Chrome 120+ refuses shorter periods for packed extensions");
  assert.equal(expectedBackMs(UNPACKED_PERIOD_MINUTES), UNPACKED_PERIOD_MINUTES * 60_000 + WAKE_SLACK_MS);
});

test("repeated worker starts keep one alarm and never restart its schedule", async () => {
  const alarms = fakeAlarms();
  assert.equal(await ensureWakeAlarm(alarms, UNPACKED_PERIOD_MINUTES), "created");
  for (let i = 0; i < 5; i++) assert.equal(await ensureWakeAlarm(alarms, UNPACKED_PERIOD_MINUTES), "kept");
  assert.equal(alarms.creates(), 1);
  assert.deepEqual(alarms.all().map((a) => a.name), [WAKE_ALARM]);
});

test("a changed period (an update) replaces the alarm under the same name", async () => {
  const alarms = fakeAlarms();
  await ensureWakeAlarm(alarms, PACKED_PERIOD_MINUTES);
  assert.equal(await ensureWakeAlarm(alarms, UNPACKED_PERIOD_MINUTES), "created");
  assert.deepEqual(alarms.all().map((a) => [a.name, a.periodInMinutes]), [[WAKE_ALARM, UNPACKED_PERIOD_MINUTES]]);
});

test("only our alarm counts as a wake", () => {
  assert.equal(isWakeAlarm({ name: WAKE_ALARM }), true);
  for (const other of [{ name: "other" }, null, undefined, "tabwarden-wake", {}]) assert.equal(isWakeAlarm(other), false);
});

function harness() {
  const timers = fakeTimers();
  const ports = [];
  let wall = 1_000_000;
  const session = createSession({
    connect: () => { const p = fakePort(); ports.push(p); return p; },
    dispatcher: createDispatcher([], { log: fakeLog() }),
    backoff: createBackoff({ initialMs: 250, maxMs: 20_000 }),
    timers, now: timers.now, wallNow: () => wall, extensionVersion: "0.1.0", log: fakeLog(),
  });
  return { session, timers, ports, port: () => ports.at(-1), setWall: (ms) => { wall = ms; } };
}

const WELCOME = { type: "welcome", protocol: 1, hostVersion: "0.1.0", browser: "chromium" };

test("wake brings a grown backoff forward, never opens a second port, and respects stop", () => {
  const h = harness();
  h.session.start();
  for (let i = 0; i < 7; i++) { // the host keeps failing: the backoff grows to its cap
    h.port().drop("Native host has exited.");
    h.timers.advance(h.timers.delays()[0]);
  }
  h.port().drop("Native host has exited.");
  assert.ok(h.session.snapshot().reconnectInMs >= 10_000);
  const before = h.ports.length;
  h.session.wake();
  assert.equal(h.ports.length, before + 1, "the alarm connects at once");
  assert.equal(h.timers.pending(), 0, "the backoff timer is cancelled, not left to open a second port");
  h.session.wake(); // connected (awaiting welcome): nothing more
  h.port().deliver(WELCOME);
  h.session.wake();
  assert.equal(h.ports.length, before + 1);
  h.session.stop();
  h.session.wake();
  assert.equal(h.ports.length, before + 1, "an explicit stop is not undone by the alarm");
});

test("the snapshot says connected since, and the last disconnect with its reason", () => {
  const h = harness();
  h.session.start();
  assert.equal(h.session.snapshot().connectedSince, null);
  h.setWall(2_000_000);
  h.port().deliver(WELCOME);
  assert.equal(h.session.snapshot().connectedSince, 2_000_000);
  h.setWall(3_000_000);
  h.port().drop("Native host has exited.");
  const snap = h.session.snapshot();
  assert.equal(snap.connectedSince, null);
  assert.equal(snap.lastDisconnectAt, 3_000_000);
  assert.equal(snap.lastDisconnectReason, "Native host has exited.");
});
