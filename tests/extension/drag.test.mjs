import { test } from "node:test";
import assert from "node:assert/strict";
import { DRAG_STEPS } from "../../extension/handlers/input.js";
import { parsePolicy } from "../../extension/worker/policy.js";
import { ORIGIN, inputHarness, mouseEvents, pointAnswer } from "./helpers/input-harness.mjs";

const POLICY = { origins: [ORIGIN], confirm: ["link_click", "submit"], clickGraceSeconds: 0, confirmTimeoutSeconds: 30 };
const S1 = { session: "s1", policy: parsePolicy(POLICY), deadline: Date.now() + 60_000 };

/** page_drag over the input harness (the end is located first, then the start). */
const harness = (options = {}) => {
  const h = inputHarness(options);
  return { ...h, call: (args, ctx = S1) => h.call("page_drag", args, ctx) };
};
const at = (over = {}) => pointAnswer({ desc: 'listitem "Alpha"', hitTarget: 'listitem "Alpha"', ...over });
const END = at({ x: 50, y: 80, desc: 'listitem "Gamma"', hitTarget: 'listitem "Gamma"', hitRef: "@e5" });

test("page_drag: moves to the start, presses, moves in steps with the button held, releases at the end", async () => {
  const h = harness({ points: [END, at()] });
  const r = await h.call({ tabId: 1, text: "Alpha", to: { text: "Gamma" }, steps: 4 });
  assert.deepEqual(r, {
    dragged: true, navigated: false, url: `${ORIGIN}/a`,
    start: { x: 50, y: 20, covered: false, hitTarget: 'listitem "Alpha"', hitRef: "@e3", element: 'listitem "Alpha"', frame: 0 },
    end: { x: 50, y: 80, covered: false, hitTarget: 'listitem "Gamma"', hitRef: "@e5", element: 'listitem "Gamma"', frame: 0 },
  });
  assert.deepEqual(mouseEvents(h).map((e) => [e.type, e.x, e.y, e.buttons]), [
    ["mouseMoved", 50, 20, 0], ["mousePressed", 50, 20, 1],
    ["mouseMoved", 50, 35, 1], ["mouseMoved", 50, 50, 1], ["mouseMoved", 50, 65, 1], ["mouseMoved", 50, 80, 1],
    ["mouseReleased", 50, 80, 0],
  ]);
  assert.deepEqual(h.calls.confirm, []);
  const plain = harness({ points: [END, at()] });
  await plain.call({ tabId: 1, x: 50, y: 20, to: { x: 50, y: 80 } });
  assert.equal(mouseEvents(plain).length, DRAG_STEPS + 3);
});

test("page_drag: a covered end, or an end over an embedded frame, presses nothing", async () => {
  const covered = harness({ points: [END, at({ covered: true, hitTarget: 'div "veil"' })] });
  await assert.rejects(covered.call({ tabId: 1, text: "Alpha", to: { text: "Gamma" } }),
    (e) => e.code === "element_covered" && /start listitem "Alpha" is covered by div "veil"/.test(e.message));
  assert.deepEqual(covered.calls.sent, []);
  const overFrame = harness({ points: [END], tags: ["iframe"] });
  await assert.rejects(overFrame.call({ tabId: 1, text: "Alpha", to: { x: 300, y: 300 } }),
    (e) => e.code === "bad_request" && /to\.frame/.test(e.message));
  assert.deepEqual(overFrame.calls.sent, []);
});

test("page_drag: a submit at either end asks, naming both ends; denied, nothing is pressed", async () => {
  const h = harness({ points: [at({ kind: "submit", desc: 'button "Send"', x: 90, y: 90 }), at()], decision: "deny" });
  await assert.rejects(h.call({ tabId: 1, text: "Alpha", to: { selector: "#send" } }), (e) => e.code === "confirm_denied");
  assert.equal(h.calls.confirm.length, 1);
  assert.match(h.calls.confirm[0].detail, /^Drag listitem "Alpha" on http:\/\/127\.0\.0\.1:8000 to button "Send"\? A submit button/);
  assert.equal(h.calls.confirm[0].tool, "page_drag");
  assert.deepEqual(h.calls.sent, []);
  // The page moves an end while the person looks: refused, nothing pressed.
  const moved = harness({ points: [at({ kind: "link", desc: 'link "Ad"' }), at(), at({ kind: "link", x: 400 }), at()] });
  await assert.rejects(moved.call({ tabId: 1, text: "Alpha", to: { text: "Ad" } }), (e) => e.code === "policy_denied");
  assert.deepEqual(moved.calls.sent, []);
});

test("page_drag: a move that fails still releases the button, and its error is the answer", async () => {
  const h = harness({ points: [END, at()], failMove: true });
  await assert.rejects(h.call({ tabId: 1, text: "Alpha", to: { text: "Gamma" } }), (e) => e.code === "timeout");
  assert.deepEqual(mouseEvents(h).map((e) => e.type), ["mouseMoved", "mousePressed", "mouseMoved", "mouseReleased"]);
});

test("page_drag: ownership and the origin gate first; bad arguments refused before the page", async () => {
  const h = harness({ points: [at()] });
  h.addTab(2, `${ORIGIN}/b`, "s2");
  h.addTab(3, "http://evil.test/", "s1");
  await assert.rejects(h.call({ tabId: 2, text: "A", to: { text: "B" } }), (e) => e.code === "tab_not_owned");
  await assert.rejects(h.call({ tabId: 3, text: "A", to: { text: "B" } }), (e) => e.code === "origin_not_approved");
  for (const args of [{ text: "A" }, { text: "A", to: {} }, { text: "A", to: { x: 1 } }, { text: "A", to: { text: "B", x: 1, y: 2 } },
    { text: "A", to: { text: "B", selector: "#b" } }, { text: "A", to: { text: "B" }, steps: 0 }, { text: "A", to: { text: "B" }, steps: 51 },
    { text: "A", to: { text: "B", frame: -1 } }, { text: "A", to: { text: "B", force: true } }, { to: { text: "B" } }, { text: "A", to: "B" }]) {
    await assert.rejects(h.call({ tabId: 1, ...args }), (e) => e.code === "bad_request", JSON.stringify(args));
  }
  assert.deepEqual(h.calls.ops, []);
  assert.deepEqual(h.calls.sent, []);
});
