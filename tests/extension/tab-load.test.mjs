import { test } from "node:test";
import assert from "node:assert/strict";
import { LOAD_TIMEOUT_MS, createLoadWatcher } from "../../extension/worker/tab-load.js";
import { fakeTimers } from "./helpers/fakes.mjs";

test("resolves on status complete for its tab only, and clears its timer", async () => {
  const timers = fakeTimers();
  const w = createLoadWatcher(timers);
  const a = w.watch(1);
  const b = w.watch(2);
  w.updated(1, { status: "loading" });
  w.updated(2, { title: "x" });
  w.updated(1, { status: "complete" });
  assert.equal(await a.promise, "complete");
  assert.equal(w.size(), 1);
  b.cancel();
  assert.equal(await b.promise, "timeout");
  assert.equal(timers.pending(), 0);
  assert.equal(w.size(), 0);
});

test("times out after 30 s by default", async () => {
  const timers = fakeTimers();
  const w = createLoadWatcher(timers);
  const a = w.watch(1);
  timers.advance(LOAD_TIMEOUT_MS - 1);
  assert.equal(w.size(), 1);
  timers.advance(1);
  assert.equal(await a.promise, "timeout");
  assert.equal(LOAD_TIMEOUT_MS, 30_000);
});

test("tab removal rejects with tab_not_found", async () => {
  const timers = fakeTimers();
  const w = createLoadWatcher(timers);
  const a = w.watch(4);
  w.removed(4);
  await assert.rejects(a.promise, (e) => e.code === "tab_not_found");
  w.updated(4, { status: "complete" });
  assert.equal(timers.pending(), 0);
});

test("skipBlank: a \"complete\" while the tab is at about:blank does not end that watch", async () => {
  const timers = fakeTimers();
  const w = createLoadWatcher(timers);
  const page = w.watch(1, undefined, { skipBlank: true });
  const any = w.watch(1);
  w.updated(1, { status: "complete" }, { id: 1, url: "about:blank" });
  assert.equal(await any.promise, "complete");
  assert.equal(w.size(), 1);
  w.updated(1, { status: "complete" }, { id: 1, url: "https://a.test/" });
  assert.equal(await page.promise, "complete");
  assert.equal(timers.pending(), 0);
});
