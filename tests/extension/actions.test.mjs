import { test } from "node:test";
import assert from "node:assert/strict";
import { PAGE_ACTIONS, createRoutes } from "../../extension/handlers/actions.js";
import { filesHandlers } from "../../extension/handlers/files.js";
import { framesHandlers } from "../../extension/handlers/frames.js";
import { inputHandlers } from "../../extension/handlers/input.js";
import { interactHandlers } from "../../extension/handlers/interact.js";
import { keyboardHandlers } from "../../extension/handlers/keyboard.js";
import { navHandlers } from "../../extension/handlers/nav.js";
import { pageHandlers } from "../../extension/handlers/page.js";
import { readHandlers } from "../../extension/handlers/read.js";
import { tabHandlers } from "../../extension/handlers/tabs.js";
import { createOwnership } from "../../extension/lib/ownership.js";
import { createLoadWatcher } from "../../extension/lib/tab-load.js";
import { fakeTimers } from "./helpers/fakes.mjs";
import { readFileSync } from "node:fs";

/** Deps that are never called: building the routes only makes closures. */
const inert = () => ({
  browser: {}, ownership: createOwnership(), loads: createLoadWatcher(fakeTimers()),
  ensureOrigin: async () => { throw new Error("not called"); }, confirm: async () => "deny",
});

test("PAGE_ACTIONS is importable without chrome and names each action once", () => {
  assert.equal(globalThis.chrome, undefined);
  assert.ok(PAGE_ACTIONS instanceof Map);
  // One action per relayed tool of the MCP catalogue (tests/mcp_server/tools_list.json; the two
  // local tools are answered by the server itself).
  const tools = Object.keys(JSON.parse(readFileSync(new URL("../mcp_server/tools_list.json", import.meta.url), "utf8")));
  const local = new Set(["bridge_status", "browser_list"]);
  assert.deepEqual([...PAGE_ACTIONS.keys()].sort(), tools.filter((t) => !local.has(t)).sort());
  assert.equal(PAGE_ACTIONS.has("constructor"), false);
  for (const name of PAGE_ACTIONS.keys()) assert.match(name, /^(tab|page|cookie|storage)_[a-z_]+$/);
});

test("each family serves exactly the actions PAGE_ACTIONS gives it", () => {
  const deps = inert();
  for (const family of [tabHandlers, pageHandlers, navHandlers, readHandlers, interactHandlers, inputHandlers, framesHandlers, keyboardHandlers, filesHandlers]) {
    const listed = [...PAGE_ACTIONS].filter(([, f]) => f === family).map(([name]) => name);
    assert.deepEqual(family(deps).map(([name]) => name), listed, family.name);
  }
});

test("createRoutes: one handler per action, in catalogue order; a mismatch throws", () => {
  const routes = createRoutes(inert());
  assert.deepEqual([...routes.keys()], [...PAGE_ACTIONS.keys()]);
  for (const handler of routes.values()) assert.equal(typeof handler, "function");
  // A catalogue entry nothing serves, or an action a family serves unlisted, stops the worker.
  const mutable = /** @type {Map<string, unknown>} */ (PAGE_ACTIONS);
  const saved = [...mutable];
  const restore = () => {
    mutable.clear();
    for (const [k, v] of saved) mutable.set(k, v);
  };
  try {
    mutable.set("page_teleport", tabHandlers);
    assert.throws(() => createRoutes(inert()), /nothing serves "page_teleport"/);
    restore();
    mutable.delete("tab_list");
    assert.throws(() => createRoutes(inert()), /tabHandlers serves "tab_list"/);
  } finally {
    restore();
  }
  assert.deepEqual([...PAGE_ACTIONS], saved);
});
