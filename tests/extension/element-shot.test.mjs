// page_screenshot of one element: the clip its measured box asks for (shared/screenshot.js), the
// box the page measured taken only with an area (handlers/element-shot.js), and an element never
// together with a region or fullPage (handlers/read.js screenshotOptions).
import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { captureClip } from "../../extension/shared/screenshot.js";
import { measuredBox } from "../../extension/handlers/element-shot.js";
import { screenshotOptions } from "../../extension/handlers/read.js";
import { argsRefusal } from "../../extension/worker/dispatch.js";

const METRICS = {
  cssVisualViewport: { pageX: 0, pageY: 300, clientWidth: 800, clientHeight: 600 },
  visualViewport: { clientWidth: 1600, clientHeight: 1200 },
};

test("element shot: the box in the viewport is clipped in page coordinates, inside the viewport when it fits", () => {
  assert.deepEqual(captureClip(METRICS, { fullPage: false, element: { x: 10, y: 20.5, width: 100.4, height: 30 } }),
    { clip: { x: 10, y: 320.5, width: 101, height: 30, scale: 1 }, beyondViewport: false });
  // Scaled to maxWidth in device pixels (twice the CSS pixels here).
  assert.equal(captureClip(METRICS, { fullPage: false, element: { x: 0, y: 0, width: 400, height: 10 }, maxWidth: 200 }).clip.scale, 0.25);
});

test("element shot: a box taller than the viewport is captured beyond it; what lies above the page is cut", () => {
  assert.deepEqual(captureClip(METRICS, { fullPage: false, element: { x: 0, y: -50, width: 800, height: 2000 } }),
    { clip: { x: 0, y: 250, width: 800, height: 2000, scale: 1 }, beyondViewport: true });
  const top = { ...METRICS, cssVisualViewport: { ...METRICS.cssVisualViewport, pageY: 0 } };
  assert.deepEqual(captureClip(top, { fullPage: false, element: { x: -20, y: -40, width: 100, height: 100 } }),
    { clip: { x: 0, y: 0, width: 80, height: 60, scale: 1 }, beyondViewport: true });
});

test("element shot: only a measured box with an area is taken", () => {
  assert.deepEqual(measuredBox({ x: 1, y: 2, width: 3, height: 4 }), { x: 1, y: 2, width: 3, height: 4 });
  for (const bad of [null, "1,2,3,4", { x: 1, y: 2, width: 0, height: 4 }, { x: 1, y: 2, width: 3, height: 0.5 },
    { x: Number.NaN, y: 2, width: 3, height: 4 }, { x: 1, y: 2, width: 3 }]) {
    assert.equal(measuredBox(bad), null, JSON.stringify(bad));
  }
});

test("element shot: an element goes with neither a region nor fullPage; alone it is taken", () => {
  assert.deepEqual(screenshotOptions({ ref: "@e3" }), { fullPage: false, format: "png" });
  assert.equal(argsRefusal("page_screenshot", { tabId: 1, ref: "@e3", frame: 2, index: 0 }), null);
  for (const bad of [{ ref: "@e3", fullPage: true }, { selector: "#a", region: { x: 0, y: 0, width: 5, height: 5 } }]) {
    assert.throws(() => screenshotOptions(bad), (e) => e instanceof BridgeError && e.code === "bad_request", JSON.stringify(bad));
  }
  // The wire schema holds the ref's shape, as for every element tool.
  assert.notEqual(argsRefusal("page_screenshot", { tabId: 1, ref: "e3" }), null);
});
