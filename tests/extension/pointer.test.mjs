// handlers/pointer.js clickAt and dragBetween in a frame: the button is pressed only once the
// frame's document has the pointer (Chrome routes input into an out-of-process frame only after it has placed it; a
// click sent before lands on the enclosing page). Never arriving presses nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { POINTER_REACH_MS, createPointer } from "../../extension/handlers/pointer.js";

const FRAME = "http://localhost:8000";

/** A pointer over fakes: `inside` answers the frame's pointerHere looks in order (then true). */
function pointer(inside) {
  const sent = [];
  const ops = [];
  let slept = 0;
  const p = createPointer({
    cdp: { send: async (_ctx, _tab, method, params) => { sent.push([method, params.type]); return {}; } },
    sleep: async (ms) => { slept += ms; },
    page: async (_ctx, _tab, op, a) => {
      ops.push([op, a]);
      return { inside: inside.length > 0 ? inside.shift() : true };
    },
    docTokens: new Map(),
    remember: () => {},
  });
  return { p, sent, ops, slept: () => slept };
}

const types = (sent) => sent.map(([, type]) => type);

test("a click in a frame waits for the pointer to reach the frame, then presses once", async () => {
  const { p, sent, ops } = pointer([false, false, true]);
  await p.clickAt({}, 1, { x: 10, y: 20, inFrame: FRAME });
  assert.deepEqual(ops.map(([op, a]) => [op, a.origin]), Array(3).fill(["pointerHere", FRAME]));
  // The move, sent again while waiting, then one press and one release.
  assert.deepEqual(types(sent), ["mouseMoved", "mouseMoved", "mousePressed", "mouseReleased"]);
});

test("a pointer that never reaches the frame presses nothing and answers timeout", async () => {
  const { p, sent, slept } = pointer(Array(10_000).fill(false));
  await assert.rejects(p.clickAt({}, 1, { x: 10, y: 20, inFrame: FRAME }), (err) => {
    assert.equal(err.code, "timeout");
    assert.match(err.message, /nothing was pressed/);
    return true;
  });
  assert.ok(!types(sent).includes("mousePressed") && !types(sent).includes("mouseReleased"));
  assert.ok(slept() >= POINTER_REACH_MS && slept() < POINTER_REACH_MS + 1000, slept());
});

test("a click in the top document does not look for the pointer", async () => {
  const { p, sent, ops } = pointer([false]);
  await p.clickAt({}, 1, { x: 10, y: 20 });
  assert.deepEqual(ops, []);
  assert.deepEqual(types(sent), ["mouseMoved", "mousePressed", "mouseReleased"]);
});

test("a drag that starts in a frame presses only once the pointer reached the frame", async () => {
  const { p, sent, ops } = pointer([false, true]);
  await p.dragBetween({}, 1, { from: { x: 10, y: 20, inFrame: FRAME }, to: { x: 50, y: 20 }, steps: 2 });
  assert.deepEqual(ops.map(([op, a]) => [op, a.origin]), Array(2).fill(["pointerHere", FRAME]));
  // The move, sent again while waiting, then the press, the held moves and the release.
  assert.deepEqual(types(sent), ["mouseMoved", "mouseMoved", "mousePressed", "mouseMoved", "mouseMoved", "mouseReleased"]);
});

test("a drag whose start never has the pointer presses nothing and answers timeout", async () => {
  const { p, sent } = pointer(Array(10_000).fill(false));
  await assert.rejects(p.dragBetween({}, 1, { from: { x: 10, y: 20, inFrame: FRAME }, to: { x: 50, y: 20 }, steps: 2 }), (err) => {
    assert.equal(err.code, "timeout");
    return true;
  });
  assert.ok(!types(sent).includes("mousePressed") && !types(sent).includes("mouseReleased"));
});

test("a drag on the top document does not look for the pointer", async () => {
  const { p, sent, ops } = pointer([false]);
  await p.dragBetween({}, 1, { from: { x: 10, y: 20 }, to: { x: 50, y: 20 }, steps: 1 });
  assert.deepEqual(ops, []);
  assert.deepEqual(types(sent), ["mouseMoved", "mousePressed", "mouseMoved", "mouseReleased"]);
});
