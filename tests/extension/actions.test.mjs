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
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { fakeTimers } from "./helpers/fakes.mjs";
import { readFileSync } from "node:fs";
import { parsePolicy } from "../../extension/worker/policy.js";

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
    // The catalogue's order is its own (tools/list's); a family may list its handlers in any.
    assert.deepEqual(family(deps).map(([name]) => name).sort(), listed.sort(), family.name);
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

// ---- the frame check around RENDERS actions (docs/adr/0007-frames-in-rendered-output.md) ----

/**
 * A tab owned by session "s" whose frames are `frames` (getAllFrames' answer, switched by the
 * test between calls), an origin gate that approves `approved` and refuses the rest, and a
 * RENDERS handler that records whether it ran.
 */
function renderRig(frames, approved) {
  const ownership = createOwnership();
  ownership.claim("s", 7);
  const state = { frames, ran: 0, asked: [], texts: new Map(), read: [] };
  const deps = {
    ...inert(),
    ownership,
    browser: {
      getTab: async () => ({ id: 7, url: "http://top.test/" }),
      getAllFrames: async () => state.frames,
      executeInFrames: async (_tabId, frameIds, func) => {
        assert.equal(func.name, "renderedText");
        state.read.push(frameIds);
        return frameIds.filter((id) => state.texts.get(id) !== "unreadable").map((id) => ({ frameId: id, result: state.texts.get(id) ?? "Quarterly report" }));
      },
    },
    ensureOrigin: async (url, _ctx, tool) => {
      const origin = new URL(url).origin;
      state.asked.push([origin, tool]);
      if (!approved.includes(origin)) {
        const err = new Error("not approved");
        err.code = "origin_not_approved";
        throw err;
      }
      return origin;
    },
  };
  return { deps, state };
}
const ctx = { session: "s", policy: parsePolicy({ origins: ["http://top.test"] }), deadline: Date.now() + 60_000 };
const TOP = { frameId: 0, parentFrameId: -1, url: "http://top.test/" };

test("a RENDERS action asks about every frame's origin first and never runs while one is unapproved", async () => {
  const { deps, state } = renderRig([TOP, { frameId: 3, parentFrameId: 0, url: "http://evil.test/ad?card=4111" }], ["http://top.test"]);
  const { rendersOnlyApproved } = await import("../../extension/handlers/actions.js");
  const handler = rendersOnlyApproved(deps, "page_screenshot", async () => { state.ran += 1; return { data: "pixels" }; });
  await assert.rejects(handler({ tabId: 7 }, ctx), (err) => err.code === "origin_not_approved");
  assert.equal(state.ran, 0);
  assert.deepEqual(state.asked, [["http://top.test", "page_screenshot"], ["http://evil.test", "page_screenshot"]]);
});

test("an about:blank or srcdoc frame counts as its parent; a data: frame is refused without asking", async () => {
  const { rendersOnlyApproved } = await import("../../extension/handlers/actions.js");
  const blank = renderRig([TOP, { frameId: 4, parentFrameId: 0, url: "about:blank" }, { frameId: 5, parentFrameId: 0, url: "about:srcdoc" }], ["http://top.test"]);
  const ok = rendersOnlyApproved(blank.deps, "page_pdf", async () => { blank.state.ran += 1; return { data: "JVBERi0" }; });
  assert.deepEqual(await ok({ tabId: 7 }, ctx), { data: "JVBERi0", capturedOrigins: ["http://top.test"] });
  assert.equal(blank.state.ran, 1);
  const data = renderRig([TOP, { frameId: 4, parentFrameId: 0, url: "data:text/html,<p>4111 1111 1111 1111</p>" }], ["http://top.test"]);
  const refused = rendersOnlyApproved(data.deps, "page_pdf", async () => { data.state.ran += 1; return {}; });
  await assert.rejects(refused({ tabId: 7 }, ctx), (err) => err.code === "origin_not_approved" && /no web origin/.test(err.message));
  assert.equal(data.state.ran, 0);
  assert.deepEqual(data.state.asked, [["http://top.test", "page_pdf"]]);
});

test("the answer names the origin of every frame the capture showed, once each (the server records them as captures)", async () => {
  const { rendersOnlyApproved } = await import("../../extension/handlers/actions.js");
  const framed = renderRig([TOP, { frameId: 3, parentFrameId: 0, url: "http://ads.test/a" }, { frameId: 4, parentFrameId: 0, url: "http://ads.test/b" },
    { frameId: 5, parentFrameId: 0, url: "about:blank" }], ["http://top.test", "http://ads.test"]);
  const shot = rendersOnlyApproved(framed.deps, "page_screenshot", async () => ({ data: "png" }));
  assert.deepEqual(await shot({ tabId: 7 }, ctx), { data: "png", capturedOrigins: ["http://top.test", "http://ads.test"] });
});

test("a frame that arrives during the capture drops the output: refused, naming its origin", async () => {
  const { deps, state } = renderRig([TOP], ["http://top.test"]);
  const { rendersOnlyApproved } = await import("../../extension/handlers/actions.js");
  const handler = rendersOnlyApproved(deps, "page_screenshot", async () => {
    state.frames = [TOP, { frameId: 9, parentFrameId: 0, url: "http://late.test/x" }];
    return { data: "pixels with the late frame" };
  });
  await assert.rejects(handler({ tabId: 7 }, ctx), (err) => err.code === "origin_not_approved" && err.message.includes("http://late.test")
    && !err.message.includes("/x"));
});

test("a RENDERS action of a tab the session does not own lists no frames and names no origin", async () => {
  const { deps, state } = renderRig([TOP, { frameId: 3, parentFrameId: 0, url: "http://evil.test/" }], []);
  const { rendersOnlyApproved } = await import("../../extension/handlers/actions.js");
  const handler = rendersOnlyApproved(deps, "page_screenshot", async () => { state.ran += 1; return {}; });
  await assert.rejects(handler({ tabId: 7 }, { ...ctx, session: "other" }), (err) => err.code === "tab_not_owned" && !err.message.includes("evil"));
  assert.deepEqual(state.asked, []);
});

test("createRoutes wraps exactly the RENDERS actions of FRAME_OUTPUT in the frame check", async () => {
  const { FRAME_OUTPUT } = await import("../../extension/handlers/actions.js");
  const { deps, state } = renderRig([TOP, { frameId: 3, parentFrameId: 0, url: "http://evil.test/" }], ["http://top.test"]);
  const routes = createRoutes(deps);
  for (const [action, kind] of FRAME_OUTPUT) {
    assert.ok(PAGE_ACTIONS.has(action), action);
    if (kind !== "renders") continue;
    state.asked = [];
    await assert.rejects(routes.get(action)({ tabId: 7 }, ctx), (err) => err.code === "origin_not_approved", action);
    assert.deepEqual(state.asked.map(([o]) => o), ["http://top.test", "http://evil.test"], action);
  }
});

test("a SAVES action answers only a file whose frame's origin is approved, and never says which frame", async () => {
  const { savesOnlyApproved, FRAME_OUTPUT } = await import("../../extension/handlers/actions.js");
  assert.equal(FRAME_OUTPUT.get("page_wait_download"), "saves");
  const answering = (result) => savesOnlyApproved("page_wait_download", async () => result);
  const file = { state: "complete", file: { source: "/home/p/Downloads/x", size: 1 } };
  assert.deepEqual(await answering({ ...file, frameOrigin: "http://top.test" })({}, ctx), file);
  for (const lost of [{ ...file }, { ...file, frameOrigin: null }, { ...file, frameOrigin: "http://evil.test" }]) {
    await assert.rejects(answering(lost)({}, ctx), (err) => err.code === "internal_error" && !err.message.includes("evil"));
  }
});

test("a RENDERS action refuses while any frame's text shows a card number, before and after the capture", async () => {
  const { rendersOnlyApproved, MAX_CHECKED_TEXT, renderedText } = await import("../../extension/handlers/actions.js");
  assert.ok(renderedText.toString().includes(String(MAX_CHECKED_TEXT).replace(/\B(?=(\d{3})+$)/g, "_")), "the page-side limit is the worker's");
  const frames = [TOP, { frameId: 4, parentFrameId: 0, url: "about:blank" }];
  // In a subframe's text: refused, nothing captured, and the number is not in the refusal.
  const before = renderRig(frames, ["http://top.test"]);
  before.state.texts.set(4, "Card on file: 4111 1111 1111 1111");
  const shot = rendersOnlyApproved(before.deps, "page_pdf", async () => { before.state.ran += 1; return { data: "JVBERi0" }; });
  await assert.rejects(shot({ tabId: 7 }, ctx), (err) => err.code === "policy_denied" && !/4111/.test(err.message) && /card number/.test(err.message));
  assert.equal(before.state.ran, 0);
  assert.deepEqual(before.state.read, [[0, 4]]);
  // A masked or partial number is not a card number: rendered.
  const partial = renderRig(frames, ["http://top.test"]);
  partial.state.texts.set(0, "Visa ending 1111, **** **** **** 1111");
  assert.deepEqual(await rendersOnlyApproved(partial.deps, "page_screenshot", async () => ({ data: "png" }))({ tabId: 7 }, ctx), { data: "png", capturedOrigins: ["http://top.test"] });
  assert.deepEqual(partial.state.read, [[0, 4], [0, 4]]);
  // One typed into a field while the capture ran: the output is dropped.
  const during = renderRig(frames, ["http://top.test"]);
  const typed = rendersOnlyApproved(during.deps, "page_screenshot", async () => { during.state.texts.set(0, "4111111111111111"); return { data: "png" }; });
  await assert.rejects(typed({ tabId: 7 }, ctx), (err) => err.code === "policy_denied");
  // A frame whose text cannot be read is not assumed clean.
  const unreadable = renderRig(frames, ["http://top.test"]);
  unreadable.state.texts.set(4, "unreadable");
  await assert.rejects(rendersOnlyApproved(unreadable.deps, "page_pdf", async () => ({}))({ tabId: 7 }, ctx), (err) => err.code === "policy_denied");
});
