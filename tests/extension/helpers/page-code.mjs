// page-code.mjs — loads extension/page/ into Node's global scope the way the worker injects it
// into a tab (worker/elements.js PAGE_FILES, in that order, each file for its side effect), so
// tests run the page code through callPageOp exactly as executeScript does. Test-only.

import { PAGE_FILES, callPageOp } from "../../../extension/worker/elements.js";

for (const file of PAGE_FILES) await import(new URL(`../../../extension/${file}`, import.meta.url));

export { PAGE_FILES, callPageOp };
