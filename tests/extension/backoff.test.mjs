import { test } from "node:test";
import assert from "node:assert/strict";
import { createBackoff, equalJitter } from "../../extension/worker/backoff.js";

test("doubles from 250 ms and caps at 30 s by default", () => {
  const b = createBackoff();
  const got = Array.from({ length: 12 }, () => b.next());
  assert.deepEqual(got, [250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000, 30000]);
});

test("stays capped after very many attempts (no overflow to NaN)", () => {
  const b = createBackoff({ maxMs: 20_000 });
  let last;
  for (let i = 0; i < 5000; i++) last = b.next();
  assert.equal(last, 20_000);
});

test("reset goes back to the first delay", () => {
  const b = createBackoff();
  b.next(); b.next(); b.next();
  assert.equal(b.attempts(), 3);
  b.reset();
  assert.equal(b.attempts(), 0);
  assert.equal(b.next(), 250);
});

test("afterConnection resets only after a healthy connection", () => {
  const b = createBackoff({ healthyMs: 10_000 });
  assert.equal(b.afterConnection(5), 250);
  assert.equal(b.afterConnection(9_999), 500);
  assert.equal(b.afterConnection(0), 1000);
  assert.equal(b.afterConnection(10_000), 250);
  assert.equal(b.afterConnection(60_000), 250);
});

test("injected jitter is applied and clamped to [0, maxMs]", () => {
  const seen = [];
  const b = createBackoff({ maxMs: 1000, jitter: (ms) => { seen.push(ms); return ms * 3; } });
  assert.equal(b.next(), 750);
  assert.equal(b.next(), 1000); // 1500 clamped
  assert.deepEqual(seen, [250, 500]);
  const neg = createBackoff({ jitter: () => -5 });
  assert.equal(neg.next(), 0);
  const nan = createBackoff({ jitter: () => NaN });
  assert.equal(nan.next(), 250);
});

test("equalJitter spans [ms/2, ms)", () => {
  assert.equal(equalJitter(() => 0)(1000), 500);
  assert.equal(equalJitter(() => 0.5)(1000), 750);
  assert.ok(equalJitter(() => 0.999999)(1000) < 1000);
  const b = createBackoff({ jitter: equalJitter(() => 0) });
  assert.deepEqual([b.next(), b.next(), b.next()], [125, 250, 500]);
});

test("bad options are refused", () => {
  assert.throws(() => createBackoff({ initialMs: 0 }), RangeError);
  assert.throws(() => createBackoff({ initialMs: 100, maxMs: 50 }), RangeError);
  assert.throws(() => createBackoff({ factor: 0.5 }), RangeError);
});
