import { test } from "node:test";
import assert from "node:assert/strict";
import { createOwnership } from "../../extension/lib/ownership.js";

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

test("endSession forgets its tabs and window, leaves others alone", () => {
  const o = createOwnership();
  o.claim("a", 1); o.claim("a", 2); o.claim("b", 3);
  o.setWindow("a", 10); o.setWindow("b", 11);
  assert.deepEqual(o.endSession("a").sort(), [1, 2]);
  assert.equal(o.owner(1), null);
  assert.equal(o.windowOf("a"), null);
  assert.equal(o.owner(3), "b");
  assert.equal(o.windowOf("b"), 11);
  assert.deepEqual(o.endSession("a"), []);
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
