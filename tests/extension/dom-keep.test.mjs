import { test } from "node:test";
import assert from "node:assert/strict";
import { replaceChildrenIfChanged } from "../../extension/ui/dom-keep.js";

const list = () => ({ children: [], replaced: 0, replaceChildren(...n) { this.children = n; this.replaced += 1; } });

test("replaceChildrenIfChanged: builds on first use and on a new key, never for the same key", () => {
  const ul = list();
  let built = 0;
  const build = () => { built += 1; return [{ n: built }]; };
  assert.equal(replaceChildrenIfChanged(ul, "[1]", build), true);
  const first = ul.children[0];
  assert.equal(replaceChildrenIfChanged(ul, "[1]", build), false);
  assert.equal(built, 1, "an unchanged key does not even build the nodes");
  assert.equal(ul.children[0], first, "the same node objects stay (focus and references survive)");
  assert.equal(replaceChildrenIfChanged(ul, "[2]", build), true);
  assert.notEqual(ul.children[0], first);
  assert.equal(ul.replaced, 2);
});

test("replaceChildrenIfChanged: keys are per list, and a missing list is nothing to do", () => {
  const a = list();
  const b = list();
  replaceChildrenIfChanged(a, "k", () => [1]);
  assert.equal(replaceChildrenIfChanged(b, "k", () => [2]), true, "another list's key is not this one's");
  assert.deepEqual(b.children, [2]);
  assert.equal(replaceChildrenIfChanged(null, "k", () => { throw new Error("never built"); }), false);
});
