import { test } from "node:test";
import assert from "node:assert/strict";
import { GRACE_KINDS, createGrace } from "../../extension/worker/grace.js";

test("a recorded click kind covers that tab and kind until it expires", () => {
  const g = createGrace();
  assert.equal(g.covered(1, "submit", 0), false);
  assert.equal(g.allow(1, "submit", 1000, 30), true);
  assert.equal(g.covered(1, "submit", 1000), true);
  assert.equal(g.covered(1, "submit", 30_999), true);
  assert.equal(g.covered(1, "submit", 31_000), false);
  assert.equal(g.covered(1, "link_click", 2000), false); // other kind
  assert.equal(g.covered(2, "submit", 2000), false); // other tab
});

test("release forgets the tab", () => {
  const g = createGrace();
  g.allow(1, "submit", 0, 30);
  g.allow(1, "link_click", 0, 30);
  g.allow(2, "submit", 0, 30);
  assert.equal(g.size(), 2);
  g.release(1);
  assert.equal(g.covered(1, "submit", 1), false);
  assert.equal(g.covered(1, "link_click", 1), false);
  assert.equal(g.covered(2, "submit", 1), true);
  assert.equal(g.size(), 1);
});

test("never records eval, upload or any other kind; zero or unreadable durations record nothing", () => {
  const g = createGrace();
  for (const kind of ["eval", "upload", "page_eval", "page_upload", "press", "select", "tab_close", "__proto__", ""]) {
    assert.equal(g.allow(1, kind, 0, 30), false, kind);
    assert.equal(g.covered(1, kind, 1), false, kind);
  }
  for (const s of [0, -5, NaN, Infinity, "30", null, undefined]) assert.equal(g.allow(1, "submit", 0, s), false, String(s));
  assert.equal(g.size(), 0);
  assert.deepEqual([...GRACE_KINDS], ["submit", "link_click"]);
  assert.ok(Object.isFrozen(GRACE_KINDS));
});

test("durations are capped at 600 s", () => {
  const g = createGrace();
  g.allow(1, "submit", 0, 10_000);
  assert.equal(g.covered(1, "submit", 599_999), true);
  assert.equal(g.covered(1, "submit", 600_000), false);
});
