import { test } from "node:test";
import assert from "node:assert/strict";
import { createGrace, graceable } from "../../extension/worker/grace.js";
import { ACTION_FAMILIES, EVERY_CALL_ACTIONS, GRACE_ACTIONS } from "../../extension/worker/catalogue.js";

const A = "https://a.test";
const B = "https://b.test";

test("an allowed action opens a window on that tab and origin: every graceable action there is covered until it expires", () => {
  const g = createGrace();
  assert.equal(g.covered(1, A, "page_select", 0), false);
  assert.equal(g.allow(1, A, "page_select", 1000, 30), true);
  for (const tool of GRACE_ACTIONS) assert.equal(g.covered(1, A, tool, 1000), true, tool);
  assert.equal(g.covered(1, A, "page_keys", 30_999), true);
  assert.equal(g.covered(1, A, "page_keys", 31_000), false, "expired");
  assert.equal(g.covered(1, A, "page_select", 31_000), false, "expired");
});

test("another tab is asked; another origin on the same tab is asked and ends the window", () => {
  const g = createGrace();
  g.allow(1, A, "page_select", 0, 30);
  g.allow(2, A, "page_click", 0, 30);
  assert.equal(g.covered(3, A, "page_select", 1), false, "another tab");
  assert.equal(g.covered(1, B, "page_select", 1), false, "another origin");
  assert.equal(g.covered(1, A, "page_select", 2), false, "seen on another origin: the window is over, even back on A");
  assert.equal(g.covered(2, A, "page_select", 2), true, "tab 2 keeps its own");
});

test("a navigation to another origin ends the window; one within the origin keeps it", () => {
  const g = createGrace();
  g.allow(1, A, "page_keys", 0, 30);
  g.navigated(1, `${A}/next?x=1`);
  assert.equal(g.covered(1, A, "page_select", 1), true);
  g.navigated(1, `${B}/`);
  g.navigated(1, `${A}/`);
  assert.equal(g.covered(1, A, "page_select", 2), false, "it went to B: over");
  g.allow(1, A, "page_keys", 3, 30);
  g.navigated(1, "about:blank");
  assert.equal(g.covered(1, A, "page_select", 4), false, "not a web origin: over");
});

test("what is asked every call is never recorded nor covered, whatever the window", () => {
  const g = createGrace();
  g.allow(1, A, "page_select", 0, 30);
  for (const tool of [...EVERY_CALL_ACTIONS, "eval", "upload", "submit", "link_click", "tab_open", "page_navigate", "page_fill", "__proto__", ""]) {
    assert.equal(graceable(tool), false, tool);
    assert.equal(g.covered(1, A, tool, 1), false, tool);
    assert.equal(g.allow(2, A, tool, 0, 30), false, tool);
  }
  assert.equal(g.size(), 1);
  for (const tool of ["page_eval", "page_upload", "page_fetch", "page_dialog", "tab_close"]) assert.ok(EVERY_CALL_ACTIONS.includes(tool), tool);
});

test("the graceable and every-call actions are the catalogue's relayed actions, apart", () => {
  const actions = new Set(ACTION_FAMILIES.map(([a]) => a));
  for (const tool of [...GRACE_ACTIONS, ...EVERY_CALL_ACTIONS]) assert.ok(actions.has(tool), tool);
  assert.deepEqual(GRACE_ACTIONS.filter((t) => EVERY_CALL_ACTIONS.includes(t)), []);
  for (const tool of ["page_click", "page_press", "page_select", "page_mouse", "page_keys"]) assert.ok(GRACE_ACTIONS.includes(tool), tool);
  assert.ok(Object.isFrozen(GRACE_ACTIONS) && Object.isFrozen(EVERY_CALL_ACTIONS));
});

test("no origin, zero or unreadable durations record nothing; release forgets the tab", () => {
  const g = createGrace();
  for (const o of ["", "null", null, undefined]) assert.equal(g.allow(1, /** @type {any} */ (o), "page_select", 0, 30), false, String(o));
  for (const s of [0, -5, NaN, Infinity, "30", null, undefined]) assert.equal(g.allow(1, A, "page_select", 0, s), false, String(s));
  assert.equal(g.size(), 0);
  g.allow(1, A, "page_select", 0, 30);
  g.allow(2, B, "page_select", 0, 30);
  g.release(1);
  assert.equal(g.covered(1, A, "page_select", 1), false);
  assert.equal(g.covered(2, B, "page_select", 1), true);
  assert.equal(g.size(), 1);
});

test("durations are capped at 600 s", () => {
  const g = createGrace();
  g.allow(1, A, "page_click", 0, 10_000);
  assert.equal(g.covered(1, A, "page_click", 599_999), true);
  assert.equal(g.covered(1, A, "page_click", 600_000), false);
});
