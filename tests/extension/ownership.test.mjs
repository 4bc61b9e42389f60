import { test } from "node:test";
import assert from "node:assert/strict";
import { createOwnership } from "../../extension/worker/ownership.js";

test("claim, owner and tabsOf per session", () => {
  const o = createOwnership();
  assert.equal(o.claim("a", 1), true);
  assert.equal(o.claim("a", 2), true);
  assert.equal(o.claim("b", 3), true);
  assert.equal(o.owner(1), "a");
  assert.equal(o.owner(3), "b");
  assert.equal(o.owner(99), null);
  assert.deepEqual(o.tabsOf("a").sort(), [1, 2]);
  assert.deepEqual(o.tabsOf("nobody"), []);
});

test("a tab owned by one session is never handed to another", () => {
  const o = createOwnership();
  o.claim("a", 1);
  assert.equal(o.claim("b", 1), false);
  assert.equal(o.owner(1), "a");
  assert.equal(o.claim("a", 1), true, "re-claim by the owner is a no-op");
  assert.deepEqual(o.tabsOf("b"), []);
});

test("release on tab removal: a reused tab id belongs to nobody", () => {
  const o = createOwnership();
  o.claim("a", 7);
  assert.equal(o.release(7), true);
  assert.equal(o.owner(7), null);
  assert.deepEqual(o.tabsOf("a"), []);
  assert.equal(o.release(7), false);
  // Chrome reuses id 7 for a tab the person opened: still nobody's
  assert.equal(o.owner(7), null);
  assert.equal(o.claim("b", 7), true, "only an explicit claim (tab_open) owns it");
});

test("endSession orphans its tabs (kept, driven by nobody) and forgets its window", () => {
  let t = 100;
  const o = createOwnership({ now: () => t });
  o.claim("a", 1); o.claim("a", 2); o.claim("b", 3);
  o.setWindow("a", 10); o.setWindow("b", 11);
  t = 200;
  assert.deepEqual(o.endSession("a").sort(), [1, 2]);
  assert.equal(o.owner(1), null, "an orphan is driven by nobody, not even its old session");
  assert.equal(o.isOrphan(1), true);
  assert.equal(o.claim("a", 1), false, "an orphan cannot be re-claimed");
  assert.deepEqual(o.tabsOf("a"), []);
  assert.equal(o.windowOf("a"), null);
  assert.equal(o.owner(3), "b");
  assert.equal(o.windowOf("b"), 11);
  assert.deepEqual(o.endSession("a"), []);
  assert.deepEqual(o.liveSessions(), ["b"]);
  assert.deepEqual(o.agentTabs().map((x) => [x.tabId, x.orphanedAt]), [[1, 200], [2, 200], [3, null]]);
});

test("evictable: orphans the person never looked at, oldest orphan first", () => {
  let t = 1;
  const o = createOwnership({ now: () => t++ });
  for (const id of [1, 2, 3, 4]) o.claim(id < 3 ? "a" : "b", id);
  o.endSession("b"); // tabs 3, 4 orphaned first
  o.endSession("a"); // then 1, 2
  assert.equal(o.markViewed(3), true);
  assert.equal(o.markViewed(3), false, "already viewed");
  assert.deepEqual(o.evictable(), [4, 1, 2]);
  assert.equal(o.markViewed(99), false, "not an agent tab");
});

test("the snapshot survives a worker restart; tabs that no longer exist are dropped", () => {
  /** @type {any[]} */
  const saved = [];
  const before = createOwnership({ save: (snap) => saved.push(JSON.parse(JSON.stringify(snap))), now: () => 5 });
  before.claim("s-1-a", 1); before.claim("s-1-a", 2); before.claim("s-2-b", 3);
  before.setWindow("s-1-a", 10); before.setWindow("s-2-b", 11);
  before.markViewed(2);
  before.endSession("s-2-b");
  const stored = saved.at(-1);
  // A new worker: tab 1 and 3 still exist, tab 2 was closed while the worker was away (and its
  // id may come back for a tab the person opens).
  const after = createOwnership();
  assert.equal(after.load(stored, [1, 3, 7]), 2);
  assert.equal(after.owner(1), "s-1-a");
  assert.equal(after.owner(2), null, "a vanished tab carries no ownership over");
  assert.equal(after.claim("s-9-z", 2), true, "its reused id is nobody's until claimed");
  assert.equal(after.isOrphan(3), true);
  assert.equal(after.owner(3), null);
  assert.equal(after.windowOf("s-1-a"), 10);
  assert.equal(after.windowOf("s-2-b"), null, "an ended session's window is not restored");
});

test("load ignores malformed snapshots and entries, and never overrides what is known", () => {
  const o = createOwnership();
  o.claim("live", 4);
  for (const bad of [undefined, null, 5, "x", { v: 2, tabs: [] }, { v: 1, tabs: "no" }]) assert.equal(o.load(bad, [1, 2, 3, 4]), 0);
  const entry = (over) => ({ tabId: 1, session: "s", openedAt: 1, orphanedAt: null, viewed: false, ...over });
  const n = o.load({ v: 1, tabs: [
    entry({ tabId: -1 }), entry({ session: "" }), entry({ openedAt: "1" }), entry({ viewed: 1 }),
    entry({ orphanedAt: -5 }), entry({ tabId: 4, session: "other" }), entry({ tabId: 2 }),
  ], windows: [["s", "x"], [5, 5]] }, [1, 2, 3, 4]);
  assert.equal(n, 1);
  assert.equal(o.owner(4), "live", "a tab claimed since the worker started keeps its owner");
  assert.equal(o.owner(2), "s");
  assert.equal(o.owner(1), null);
});

test("window bookkeeping: setWindow, windowOf, forgetWindow", () => {
  const o = createOwnership();
  assert.equal(o.windowOf("a"), null);
  o.setWindow("a", 5);
  assert.equal(o.windowOf("a"), 5);
  o.forgetWindow(6);
  assert.equal(o.windowOf("a"), 5);
  o.forgetWindow(5);
  assert.equal(o.windowOf("a"), null);
});

test("claim rejects bad arguments", () => {
  const o = createOwnership();
  for (const [s, t] of [["", 1], [null, 1], ["a", -1], ["a", 1.5], ["a", "1"]]) assert.throws(() => o.claim(s, t), TypeError);
});
