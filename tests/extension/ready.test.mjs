// handlers/ready.js (the wait before an element action) and page/actions.js actionable (one look).
import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { argReadyMs, ready } from "../../extension/handlers/ready.js";
import { FakeDocument, runIn } from "./helpers/fake-dom.mjs";
import { callPageOp } from "./helpers/page-code.mjs";

const URL_A = "http://127.0.0.1:8000/a";
const ORIGIN = "http://127.0.0.1:8000";
const look = (doc, a) => runIn(doc, callPageOp, ["actionable", { origin: ORIGIN, ...a }]);

/** A fake clock: each look takes `lookMs`, each sleep its ms. */
function clock(lookMs = 0) {
  let t = 1000;
  return {
    now: () => t,
    sleep: async (ms) => { t += ms; },
    /** `answers` in turn (the last one repeats); each takes lookMs. */
    looks(answers) {
      let i = 0;
      const calls = [];
      const fn = async () => {
        calls.push(t);
        const a = answers[Math.min(i++, answers.length - 1)];
        t += lookMs;
        if (a instanceof Error) throw a;
        return a;
      };
      return { fn, calls };
    },
  };
}

test("ready: an element actionable at once waited 0 ms (the look that proves it still is not waiting)", async () => {
  const c = clock(200);
  const { fn, calls } = c.looks([{ ok: true }]);
  assert.deepEqual(await ready({ look: fn, timeoutMs: 5000, now: c.now, sleep: c.sleep }), { waitedMs: 0 });
  assert.equal(calls.length, 1);
});

test("ready: waits through not-found and disabled looks, then says how long it waited", async () => {
  const c = clock(10);
  const missing = new BridgeError("element_not_found", "no element matches");
  const { fn, calls } = c.looks([missing, missing, { fail: "element_disabled" }, { ok: true }]);
  const { waitedMs } = await ready({ look: fn, timeoutMs: 5000, now: c.now, sleep: c.sleep });
  assert.ok(waitedMs > 0);
  assert.equal(waitedMs, calls[3] - calls[0]);
});

test("ready: a miss answers the code of the condition that failed last, after timeoutMs", async () => {
  for (const [fail, code] of [["element_not_visible", "element_not_visible"], ["element_not_stable", "element_not_stable"],
    ["element_disabled", "element_disabled"], ["element_covered", "element_covered"]]) {
    const c = clock(100);
    const { fn } = c.looks([{ fail, desc: "button \"Go\"", hitTarget: "div \"Banner\"" }]);
    await assert.rejects(ready({ look: fn, timeoutMs: 1000, now: c.now, sleep: c.sleep }), (err) => {
      assert.equal(err.code, code);
      assert.match(err.message, /button "Go"/);
      assert.match(err.message, /nothing was done/);
      return true;
    });
    assert.ok(c.now() - 1000 >= 1000, "it looked until timeoutMs");
  }
  const c = clock(100);
  const { fn } = c.looks([new BridgeError("element_not_found", "no element matches")]);
  await assert.rejects(ready({ look: fn, timeoutMs: 500, now: c.now, sleep: c.sleep }), { code: "element_not_found" });
});

test("ready: a look under way at the deadline finishes and counts; no look starts after it", async () => {
  const c = clock(300);
  // Moving until the deadline, then still: the look that began before the deadline proves it.
  const { fn, calls } = c.looks([{ fail: "element_not_stable" }, { fail: "element_not_stable" }, { fail: "element_not_stable" }, { ok: true }]);
  const r = await ready({ look: fn, timeoutMs: 1000, now: c.now, sleep: c.sleep });
  assert.equal(calls.length, 4);
  assert.ok(calls[3] - calls[0] < 1000, "the last look began before the deadline");
  assert.ok(r.waitedMs > 0);
  const late = clock(300);
  const never = late.looks([{ fail: "element_not_stable" }]);
  await assert.rejects(ready({ look: never.fn, timeoutMs: 1000, now: late.now, sleep: late.sleep }), { code: "element_not_stable" });
  assert.ok(never.calls.every((t) => t - never.calls[0] < 1000), "no look began after the deadline");
});

test("ready: a stale ref or any other error answers at once, without waiting", async () => {
  const c = clock(10);
  const { fn, calls } = c.looks([new BridgeError("bad_ref", "from an earlier page")]);
  await assert.rejects(ready({ look: fn, timeoutMs: 5000, now: c.now, sleep: c.sleep }), { code: "bad_ref" });
  assert.equal(calls.length, 1);
});

test("ready: timeoutMs defaults to 5000 and is capped at 10000", () => {
  assert.equal(argReadyMs({}), 5000);
  assert.equal(argReadyMs({ timeoutMs: 0 }), 0);
  assert.equal(argReadyMs({ timeoutMs: 7000 }), 7000);
  assert.equal(argReadyMs({ timeoutMs: 60_000 }), 10_000);
});

function page() {
  const doc = new FakeDocument(URL_A, "Ready");
  doc.body.append(
    doc.h("button", { id: "go" }, "Go"),
    doc.h("button", { id: "off", disabled: "" }, "Off"),
    doc.h("button", { id: "aria", "aria-disabled": "true" }, "Aria off"),
    doc.h("button", { id: "gone", _hidden: true }, "Hidden"),
    doc.h("button", { id: "slide" }, "Slide"),
  );
  doc.querySelectorAll("#slide")[0].moves = true;
  return doc;
}

test("actionable: says which condition fails: visible, enabled, stable, covered; ok when all hold", async () => {
  const doc = page();
  assert.deepEqual(await look(doc, { target: { selector: "#go" }, enabled: true, hit: true }), { ok: true });
  assert.equal((await look(doc, { target: { selector: "#gone" }, enabled: true })).fail, "element_not_visible");
  assert.equal((await look(doc, { target: { selector: "#off" }, enabled: true })).fail, "element_disabled");
  assert.equal((await look(doc, { target: { selector: "#aria" }, enabled: true })).fail, "element_disabled");
  assert.deepEqual(await look(doc, { target: { selector: "#off" } }), { ok: true }, "enabled is only checked when asked");
  assert.equal((await look(doc, { target: { selector: "#slide" }, enabled: true })).fail, "element_not_stable");
  assert.equal((await look(doc, { target: { selector: "#nope" } })).error.code, "element_not_found");
  const banner = doc.h("div", { id: "banner" }, "Cookie banner");
  doc.body.append(banner);
  doc.cover = banner;
  const covered = await look(doc, { target: { selector: "#go" }, hit: true });
  assert.equal(covered.fail, "element_covered");
  assert.match(covered.hitTarget, /Cookie banner/);
  assert.deepEqual(await look(doc, { target: { selector: "#go" } }), { ok: true }, "the hit test is only made when asked");
});

test("actionable: in a document that draws no animation frames, a still element is stable and a moving one is not", async () => {
  const doc = page();
  doc.noFrames = true;
  assert.deepEqual(await look(doc, { target: { selector: "#go" }, enabled: true, hit: true }), { ok: true });
  assert.equal((await look(doc, { target: { selector: "#slide" } })).fail, "element_not_stable");
});

test("actionable: on a machine too busy to draw on time, an element that moves at each frame is not judged still", async () => {
  // The stillness looks race each frame with a timer; three looks that all saw only the timer
  // saw no frame, so nothing could have moved yet: at least one real frame must be seen.
  const doc = page();
  doc.frameMs = 400;
  doc.querySelectorAll("#slide")[0].movesAtFrames = true;
  assert.equal((await look(doc, { target: { selector: "#slide" } })).fail, "element_not_stable");
  assert.deepEqual(await look(doc, { target: { selector: "#go" } }), { ok: true }, "a still one is still, late frames or not");
});

/** A running animation of `props` (each keyframe as getKeyframes gives it), over time unless `timeline`. */
const animation = (props, more = {}) => ({
  playState: "running",
  playbackRate: 1,
  timeline: {},
  effect: { getKeyframes: () => [{ offset: 0, easing: "linear", composite: "auto", ...props }, { offset: 1, computedOffset: 1, ...props }] },
  ...more,
});

test("actionable: an element an animation moves is not judged still on frames it never got", async () => {
  // A starved renderer draws no frame for a second: a still box then proves nothing for an
  // element whose transform is being animated (on it, or on what holds it).
  const doc = page();
  doc.noFrames = true;
  const go = doc.querySelectorAll("#go")[0];
  go.getAnimations = () => [animation({ transform: "translateX(300px)" })];
  assert.equal((await look(doc, { target: { selector: "#go" } })).fail, "element_not_stable");
  go.getAnimations = () => [];
  doc.body.getAnimations = () => [animation({ left: "40px" })];
  assert.equal((await look(doc, { target: { selector: "#go" } })).fail, "element_not_stable", "an ancestor's animation moves it too");
  doc.body.getAnimations = () => [animation({ "--slide": "1" })];
  assert.equal((await look(doc, { target: { selector: "#go" } })).fail, "element_not_stable", "a custom property a transform may read");
  doc.body.getAnimations = () => [animation({}, { effect: { getKeyframes: () => { throw new Error("cross-origin sheet"); } } })];
  assert.equal((await look(doc, { target: { selector: "#go" } })).fail, "element_not_stable", "keyframes it cannot read count as moving");
  // What moves nothing leaves the throttled-frame rule as it was: a still box is still.
  doc.body.getAnimations = () => [
    animation({ backgroundColor: "red", opacity: "0.5", boxShadow: "none" }),
    animation({ transform: "scale(2)" }, { playState: "paused" }),
    animation({ transform: "scale(2)" }, { playState: "finished" }),
    animation({ transform: "scale(2)" }, { playbackRate: 0 }),
  ];
  assert.deepEqual(await look(doc, { target: { selector: "#go" } }), { ok: true });
});

test("actionable: an animated element that holds still over two real frames is still, late frames or not", async () => {
  // A carousel between slides: its animation runs, its box does not change.
  const doc = page();
  doc.frameMs = 400;
  doc.querySelectorAll("#go")[0].getAnimations = () => [animation({ transform: "translateX(0)" })];
  assert.deepEqual(await look(doc, { target: { selector: "#go" }, hit: true }), { ok: true });
  assert.ok(doc.framesDrawn >= 2, `two real frames were waited for, saw ${doc.framesDrawn}`);
});
