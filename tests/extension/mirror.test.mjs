import { test } from "node:test";
import assert from "node:assert/strict";
import { MIRROR_INTERVAL_MS, createMirror } from "../../extension/worker/mirror.js";
import { fakeLog, fakeTimers } from "./helpers/fakes.mjs";

test("a burst of changes is one write of the latest state, started within the interval; writes never overlap", async () => {
  const timers = fakeTimers();
  let state = 0;
  const written = [];
  let inFlight = 0;
  let release = () => {};
  const mirror = createMirror({
    write: async () => {
      inFlight += 1;
      assert.equal(inFlight, 1, "one write at a time");
      const value = state;
      await new Promise((resolve) => { release = resolve; });
      written.push(value);
      inFlight -= 1;
    },
    setTimer: timers.setTimer,
  });
  for (state = 1; state <= 5; state += 1) mirror.changed();
  state = 5;
  assert.deepEqual(timers.delays(), [MIRROR_INTERVAL_MS]);
  timers.advance(MIRROR_INTERVAL_MS);
  await Promise.resolve();
  state = 6;
  mirror.changed(); // while the first write runs: the next one waits for it
  timers.advance(MIRROR_INTERVAL_MS);
  release();
  await new Promise((resolve) => setImmediate(resolve));
  release();
  await mirror.settled();
  assert.deepEqual(written, [5, 6]);
});

test("a failed write is logged, and the next change is written again", async () => {
  const timers = fakeTimers();
  const log = fakeLog();
  let fail = true;
  let writes = 0;
  const mirror = createMirror({
    write: async () => { writes += 1; if (fail) throw new Error("quota"); },
    setTimer: timers.setTimer, log, what: "recent calls",
  });
  mirror.changed();
  timers.advance(MIRROR_INTERVAL_MS);
  await mirror.settled(); // never rejects
  fail = false;
  mirror.changed();
  timers.advance(MIRROR_INTERVAL_MS);
  await mirror.settled();
  assert.equal(writes, 2);
  assert.ok(log.warnings.some((w) => String(w).includes("could not store the recent calls")), JSON.stringify(log.warnings));
});
