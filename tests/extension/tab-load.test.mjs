import { test } from "node:test";
import assert from "node:assert/strict";
import { ABORT_SETTLE_MS, LOAD_TIMEOUT_MS, createLoadWatcher } from "../../extension/worker/tab-load.js";
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

const top = (tabId, extra = {}) => ({ tabId, frameId: 0, url: "https://a.test/file", ...extra });

test("a top-frame navigation that ends without a document (a download) ends the tab's waits", async () => {
  const timers = fakeTimers();
  const w = createLoadWatcher(timers);
  const a = w.watch(1);
  const other = w.watch(2);
  w.started(top(1));
  w.failed(top(1, { error: "net::ERR_ABORTED" }));
  timers.advance(ABORT_SETTLE_MS - 1);
  assert.equal(w.size(), 2);
  timers.advance(1);
  assert.equal(await a.promise, "aborted");
  assert.equal(w.size(), 1);
  other.cancel();
  assert.equal(await other.promise, "timeout");
  assert.equal(timers.pending(), 0);
});

test("an abort followed by the navigation that replaced it waits for that one", async () => {
  const timers = fakeTimers();
  const w = createLoadWatcher(timers);
  const a = w.watch(1);
  w.failed(top(1, { error: "net::ERR_ABORTED" }));
  w.started(top(1, { url: "https://a.test/next" }));
  timers.advance(ABORT_SETTLE_MS * 4);
  assert.equal(w.size(), 1);
  w.updated(1, { status: "complete" }, { id: 1, url: "https://a.test/next" });
  assert.equal(await a.promise, "complete");
  assert.equal(timers.pending(), 0);
});

test("only the top frame's abort of the shown page counts, and only net::ERR_ABORTED", async () => {
  const timers = fakeTimers();
  const w = createLoadWatcher(timers);
  const a = w.watch(1);
  w.failed(top(1, { frameId: 3, error: "net::ERR_ABORTED" }));
  w.failed(top(1, { error: "net::ERR_ABORTED", documentLifecycle: "prerender" }));
  w.failed(top(1, { error: "net::ERR_NAME_NOT_RESOLVED" })); // an error page loads and completes
  w.failed(top(2, { error: "net::ERR_ABORTED" }));
  for (const junk of [null, "x", { frameId: 0 }, { tabId: "1", frameId: 0, error: "net::ERR_ABORTED" }]) w.failed(junk);
  w.started(null);
  assert.equal(timers.pending(), 1); // a's own timeout, nothing else
  timers.advance(ABORT_SETTLE_MS);
  assert.equal(w.size(), 1);
  a.cancel();
  assert.equal(await a.promise, "timeout");
  assert.equal(timers.pending(), 0);
});

test("an abort ends only the waits armed before it", async () => {
  const timers = fakeTimers();
  const w = createLoadWatcher(timers);
  const before = w.watch(1);
  w.failed(top(1, { error: "net::ERR_ABORTED" }));
  const after = w.watch(1);
  timers.advance(ABORT_SETTLE_MS);
  assert.equal(await before.promise, "aborted");
  assert.equal(w.size(), 1);
  w.updated(1, { status: "complete" });
  assert.equal(await after.promise, "complete");
  assert.equal(timers.pending(), 0);
});

test("a wait that ends before the abort settles leaves no timer behind", async () => {
  const timers = fakeTimers();
  const w = createLoadWatcher(timers);
  const a = w.watch(1);
  w.failed(top(1, { error: "net::ERR_ABORTED" }));
  w.updated(1, { status: "complete" });
  assert.equal(await a.promise, "complete");
  assert.equal(timers.pending(), 0);
});
