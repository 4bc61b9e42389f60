import { test } from "node:test";
import assert from "node:assert/strict";
import { createPendingTable } from "../../extension/worker/pending.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { fakeTimers } from "./helpers/fakes.mjs";

function make(defaultTimeoutMs = 1000) {
  const timers = fakeTimers();
  return { timers, table: createPendingTable({ ...timers, defaultTimeoutMs }) };
}

test("an ok reply resolves its request by id and clears its timer", async () => {
  const { timers, table } = make();
  const a = table.add("a");
  const b = table.add("b");
  assert.equal(timers.pending(), 2);
  assert.equal(table.settle({ type: "reply", id: "b", ok: true, result: { n: 2 } }), true);
  assert.deepEqual(await b, { n: 2 });
  assert.equal(timers.pending(), 1);
  assert.equal(table.has("a"), true);
  assert.equal(table.settle({ type: "reply", id: "a", ok: true, result: { n: 1 } }), true);
  assert.deepEqual(await a, { n: 1 });
  assert.equal(table.size(), 0);
  assert.equal(timers.pending(), 0);
});

test("an error reply rejects with a BridgeError carrying the code", async () => {
  const { table } = make();
  const p = table.add("x");
  table.settle({ type: "reply", id: "x", ok: false, error: { code: "tab_not_found", message: "gone" } });
  await assert.rejects(p, (e) => e instanceof BridgeError && e.code === "tab_not_found" && e.message === "gone");
});

test("unknown, duplicate and malformed replies are not matched", async () => {
  const { table } = make();
  const p = table.add("x");
  assert.equal(table.settle({ type: "reply", id: "nope", ok: true, result: {} }), false);
  assert.equal(table.settle(null), false);
  assert.equal(table.settle({ id: 5 }), false);
  assert.equal(table.settle({ type: "reply", id: "x", ok: true, result: 1 }), true);
  assert.equal(table.settle({ type: "reply", id: "x", ok: true, result: 2 }), false);
  assert.equal(await p, 1);
});

test("duplicate ids are refused", () => {
  const { table } = make();
  table.add("x").catch(() => {});
  assert.throws(() => table.add("x"));
});

test("requests time out individually with the timeout code", async () => {
  const { timers, table } = make(1000);
  const fast = table.add("fast", 100);
  const slow = table.add("slow");
  timers.advance(99);
  assert.equal(table.size(), 2);
  timers.advance(1);
  await assert.rejects(fast, (e) => e.code === "timeout");
  assert.equal(table.has("slow"), true);
  timers.advance(900);
  await assert.rejects(slow, (e) => e.code === "timeout");
  assert.equal(table.size(), 0);
  // a late reply after a timeout does nothing
  assert.equal(table.settle({ type: "reply", id: "fast", ok: true, result: {} }), false);
});

test("rejectAll on disconnect rejects everything with extension_not_connected and clears timers", async () => {
  const { timers, table } = make();
  const ps = ["a", "b", "c"].map((id) => table.add(id));
  assert.equal(table.rejectAll(), 3);
  for (const p of ps) await assert.rejects(p, (e) => e instanceof BridgeError && e.code === "extension_not_connected");
  assert.equal(table.size(), 0);
  assert.equal(timers.pending(), 0);
  assert.equal(table.rejectAll(), 0);
});
