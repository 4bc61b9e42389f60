// dom-keep.js — replace a list's children only when what it shows changed.
// The options page and the popup re-read their sections on every change notice
// (shared/live-refresh.js), and the worker sends one after most answers it gives. Rebuilding an
// unchanged list would throw away the element a person is focused on (a keyboard user tabbing
// through "Pair" buttons lands back at the top of the page) and every node a screen reader or a
// test was holding. So a section names what its list shows (`key`, e.g. the JSON of the rows it
// renders — everything its nodes and their click handlers capture) and the nodes are rebuilt only
// when that changes. Every replacement of a kept list must go through here, or a stale key
// would skip a needed rebuild.

/** @type {WeakMap<object, string>} the key each kept list was last built from */
const shown = new WeakMap();

/**
 * @param {{replaceChildren: (...nodes: any[]) => void} | null | undefined} parent
 * @param {string} key what `build` would render, as a string (JSON of its inputs)
 * @param {() => any[]} build the new children; called only when `key` changed
 * @returns {boolean} whether the children were replaced
 */
export function replaceChildrenIfChanged(parent, key, build) {
  if (!parent) return false;
  if (shown.get(parent) === key) return false;
  parent.replaceChildren(...build());
  shown.set(parent, key);
  return true;
}
