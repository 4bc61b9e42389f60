import { test } from "node:test";
import assert from "node:assert/strict";
import { createTabQueue, serialiseByTab } from "../../extension/worker/tab-queue.js";
import { deferred, flush } from "./helpers/fakes.mjs";

test("calls on one tab run one at a time, in order; other tabs run concurrently", async () => {
  const q = createTabQueue();
  const log = [];
  const gates = { a1: deferred(), a2: deferred(), b1: deferred() };
  const work = (name) => async () => {
    log.push(`start ${name}`);
    await gates[name].promise;
    log.push(`end ${name}`);
    return name;
  };
  const a1 = q.run(1, work("a1"));
  const a2 = q.run(1, work("a2"));
  const b1 = q.run(2, work("b1"));
  await flush();
  assert.deepEqual(log, ["start a1", "start b1"]); // a2 waits for a1; b1 runs alongside
  gates.b1.resolve();
  await flush();
  assert.equal(await b1, "b1");
  assert.ok(!log.includes("start a2"));
  gates.a1.resolve();
  await flush();
  assert.deepEqual(log.slice(-2), ["end a1", "start a2"]);
  gates.a2.resolve();
  assert.deepEqual(await Promise.all([a1, a2]), ["a1", "a2"]);
  await flush();
  assert.equal(q.size(), 0); // idle tabs keep no chain
});

test("a failing call rejects its caller but does not stall the tab", async () => {
  const q = createTabQueue();
  const first = q.run(1, async () => { throw new Error("boom"); });
  const sync = q.run(1, () => { throw new Error("sync boom"); });
  const second = q.run(1, async () => "ok");
  await assert.rejects(first, /boom/);
  await assert.rejects(sync, /sync boom/);
  assert.equal(await second, "ok");
});

test("serialiseByTab queues calls that carry an integer tabId, others run at once", async () => {
  const q = createTabQueue();
  const gate = deferred();
  const log = [];
  const entries = serialiseByTab([
    ["slow", async (args) => { log.push(`slow ${args.tabId}`); await gate.promise; return { done: args.tabId }; }],
    ["fast", async (args, ctx) => { log.push(`fast ${args.tabId} ${ctx.session}`); return {}; }],
  ], q);
  const routes = new Map(entries);
  const p1 = routes.get("slow")({ tabId: 1 }, { session: "s" });
  const p2 = routes.get("fast")({ tabId: 1 }, { session: "s" });
  const p3 = routes.get("fast")({ tabId: 2 }, { session: "s" });
  const p4 = routes.get("fast")({}, { session: "s" });
  await flush();
  assert.deepEqual([...log].sort(), ["fast 2 s", "fast undefined s", "slow 1"]); // not "fast 1"
  gate.resolve();
  assert.deepEqual(await p1, { done: 1 });
  await Promise.all([p2, p3, p4]);
  assert.deepEqual(log.at(-1), "fast 1 s");
});
