// elements.js — the worker's side of the element tools' page code: which files make up the page
// side (extension/page/, injected in this order with executeScript({files}) into the tab's
// isolated world) and the one tiny function then run there with the call's arguments, which
// hands them to the installed entry point (page/elements.js's pageOp). Pure: no chrome. It must
// never hold page logic itself (that lives in page/), and callPageOp must never reference
// anything outside its own body (executeScript serialises it) and must do nothing when the page
// code is not installed (a navigation between the two injections starts a fresh world): it then
// answers NOT_INSTALLED, and the caller injects again or gives up with internal_error.

/** The page-side files, in load order (each one uses those before it). Paths from the extension root. */
export const PAGE_FILES = Object.freeze([
  "page/redact.js",
  "page/pick.js",
  "page/dom.js",
  "page/locate.js",
  "page/snapshot.js",
  "page/actions.js",
  "page/elements.js",
]);

/** Operations page/elements.js's pageOp understands (tests/extension/elements.test.mjs compares). */
export const PAGE_OPS = Object.freeze([
  "snapshot", "waitFor", "point", "actionable", "settle", "reveal", "clickResult", "describe", "fill", "press", "select", "check", "scroll", "getState", "text",
  "focus", "inputResult", "clear", "pointerHere",
]);

/**
 * Runs in the page after PAGE_FILES: pageOp(op, a) of the installed page code, or (nothing run)
 * {notInstalled: true} when it is not there.
 * @param {string} op
 * @param {Record<string, unknown>} a
 * @returns {unknown}
 */
export function callPageOp(op, a) {
  const entry = globalThis.tabwardenElements;
  if (entry === undefined || entry === null || typeof entry.pageOp !== "function") {
    return { notInstalled: true };
  }
  return entry.pageOp(op, a);
}
