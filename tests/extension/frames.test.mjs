import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createPopups } from "../../extension/worker/popups.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { argFrame, createFrameWorlds, frameList, framesHandlers, gateFrame } from "../../extension/handlers/frames.js";
import { interactHandlers } from "../../extension/handlers/interact.js";
import { fakeTimers } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const A = "http://127.0.0.1:8000";
const B = "http://localhost:9000";
const POLICY = { origins: [A], confirm: [], passwordFill: false };
const CTX = { session: "s1", policy: parsePolicy(POLICY) };

/** The top page on A, a same-origin frame, an about:blank child of it, and a frame on B. */
const FRAMES = [
  { frameId: 7, parentFrameId: 0, url: `${B}/inner?token=secret` },
  { frameId: 0, parentFrameId: -1, url: `${A}/` },
  { frameId: 3, parentFrameId: 0, url: `${A}/inner` },
  { frameId: 5, parentFrameId: 3, url: "about:blank" },
  { frameId: 9, parentFrameId: 7, url: `${A}/nested` },
];

/** An origin gate that approves POLICY's origins and refuses (records) the rest. */
function gateLog() {
  const asked = [];
  const ensureOrigin = async (url) => {
    const origin = new URL(url).origin;
    asked.push(url);
    if (!POLICY.origins.includes(origin)) throw new BridgeError("origin_not_approved", `${origin} is not approved`);
    return origin;
  };
  return { asked, ensureOrigin };
}

function harness() {
  const ownership = createOwnership();
  ownership.claim("s1", 1);
  const { asked, ensureOrigin } = gateLog();
  const ran = [];
  const browser = {
    getTab: async (id) => ({ id, url: `${A}/`, status: "complete" }),
    getAllFrames: async () => FRAMES.map((f) => ({ ...f })),
    executeInFrames: async (_tabId, frameIds) => {
      ran.push(["name", ...frameIds]);
      return frameIds.map((frameId) => ({ frameId, result: `name-${frameId}` }));
    },
    executeFiles: async (_tabId, _files, frameId = 0) => { ran.push(["files", frameId]); },
    executeScriptArgs: async (_tabId, _func, args, _world, frameId = 0) => {
      ran.push([args[0], frameId]);
      return [{ result: { docToken: `doc-${frameId}`, snapshot: [], lastRef: 4, url: "u", title: "t", truncated: false } }];
    },
  };
  const deps = { browser, ownership, loads: createLoadWatcher(fakeTimers()), ensureOrigin, confirm: async () => "deny" };
  return { deps, asked, ran };
}

test("argFrame: absent or null is the top frame; anything but a frameId is bad_request", () => {
  assert.equal(argFrame({}), 0);
  assert.equal(argFrame({ frame: null }), 0);
  assert.equal(argFrame({ frame: 7 }), 7);
  for (const frame of [-1, 1.5, "7", {}, 2 ** 31]) {
    assert.throws(() => argFrame({ frame }), (e) => e instanceof BridgeError && e.code === "bad_request" && /page_frames/.test(e.message));
  }
});

test("frameList: top first then by frameId, about:blank gated on the origin it inherits", () => {
  const list = frameList(FRAMES);
  assert.deepEqual(list.map((f) => [f.index, f.frameId, f.parentFrameId]), [[0, 0, null], [1, 3, 0], [2, 5, 3], [3, 7, 0], [4, 9, 7]]);
  assert.equal(list[2].origin, A);
  assert.equal(list[2].gateUrl, `${A}/inner`);
  assert.equal(list[3].origin, B);
  assert.deepEqual(frameList("nonsense"), []);
});

test("gateFrame: every enclosing frame is gated on its own, outermost first; a missing frame names page_frames", async () => {
  const { deps, asked } = harness();
  assert.equal(await gateFrame(deps, CTX, 1, 5, "page_snapshot"), A);
  assert.deepEqual(asked, [`${A}/inner`]); // the about:blank child is gated on its parent's url
  asked.length = 0;
  // An approved frame inside an unapproved one: the unapproved ancestor refuses first.
  await assert.rejects(gateFrame(deps, CTX, 1, 9, "page_snapshot"), (e) => e.code === "origin_not_approved");
  assert.deepEqual(asked, [`${B}/inner?token=secret`]);
  await assert.rejects(gateFrame(deps, CTX, 1, 42, "page_click"),
    (e) => e.code === "element_not_found" && /page_frames/.test(e.message));
});

test("an element tool in a refused frame runs nothing in the tab", async () => {
  const { deps, ran, asked } = harness();
  const routes = new Map(interactHandlers(deps));
  await assert.rejects(routes.get("page_snapshot")({ tabId: 1, frame: 7 }, { ...CTX }), (e) => e.code === "origin_not_approved");
  assert.deepEqual(ran, []);
  assert.deepEqual(asked, [`${A}/`, `${B}/inner?token=secret`]); // the tab's url, then the frame's
});

test("an element tool with frame injects into that frame only, and its ref token is the frame's", async () => {
  const { deps, ran } = harness();
  const docTokens = new Map();
  const routes = new Map(interactHandlers({ ...deps, docTokens }));
  await routes.get("page_snapshot")({ tabId: 1, frame: 3 }, { ...CTX });
  assert.deepEqual(ran, [["files", 3], ["snapshot", 3]]);
  const saved = docTokens.get(1);
  assert.equal(saved.token, ""); // no top-frame snapshot yet: a ref used there answers bad_ref
  assert.equal(saved.frames.get(3), "doc-3");
  assert.equal(saved.floor, 4);
  await routes.get("page_snapshot")({ tabId: 1 }, { ...CTX });
  assert.deepEqual(ran.slice(2), [["files", 0], ["snapshot", 0]]);
  assert.equal(docTokens.get(1).token, "doc-0");
  assert.equal(docTokens.get(1).frames.get(3), "doc-3"); // the frame's token stays
});

test("page_frames: url and name only for approved origins; nothing runs in an unapproved frame", async () => {
  const { deps, ran } = harness();
  const [[, pageFrames]] = framesHandlers(deps);
  const out = await pageFrames({ tabId: 1 }, { ...CTX });
  const byId = new Map(out.frames.map((f) => [f.frameId, f]));
  assert.deepEqual(byId.get(7), { index: 3, frameId: 7, parentFrameId: 0, origin: B, approved: false, url: null, name: null });
  assert.equal(byId.get(3).url, `${A}/inner`);
  assert.equal(byId.get(3).name, "name-3");
  assert.equal(byId.get(9).approved, true); // its own origin is approved (acting in it still gates frame 7)
  assert.ok(!JSON.stringify(out).includes("secret"));
  assert.ok(ran.every(([what, id]) => what === "name" && id !== 7), JSON.stringify(ran));
  assert.equal(out.truncated, false);
});

function popupHarness({ room = true } = {}) {
  const ownership = createOwnership();
  ownership.claim("s1", 1);
  const claimed = [];
  const attached = [];
  const lifecycle = {
    makeRoom: async () => {
      if (!room) throw new BridgeError("tab_limit", "full");
      return [];
    },
    claimed: async (id) => { claimed.push(id); },
  };
  const muted = [];
  const popups = createPopups({
    ownership, lifecycle, attach: async (session, id) => { attached.push([session, id]); },
    mute: async (id) => { muted.push(id); }, log: { warn: () => {} },
  });
  return { ownership, popups, claimed, attached, muted };
}

test("popups: a tab joining a session is muted unless its policy says agentTabsAudible; a person's popup never is", async () => {
  const { popups, muted } = popupHarness();
  popups.watch(1, parsePolicy(POLICY)).cancel();
  await popups.created(1, 2, `${A}/child`);
  assert.deepEqual(muted, [2], "an agent's popup is muted");
  await popups.created(50, 51, `${A}/`);
  assert.deepEqual(muted, [2], "a popup of a tab nobody owns is the person's: untouched");
  const audible = popupHarness();
  audible.popups.watch(1, parsePolicy({ ...POLICY, agentTabsAudible: true })).cancel();
  await audible.popups.created(1, 2, `${A}/child`);
  assert.deepEqual(audible.muted, [], "agentTabsAudible leaves it audible");
});

test("popups: a tab an owned tab opens joins its session, is kept, attached and reported to the armed watch", async () => {
  const { ownership, popups, claimed, attached } = popupHarness();
  const watch = popups.watch(1, parsePolicy(POLICY));
  assert.equal(watch.seen(), null);
  const joined = await popups.created(1, 2, `${A}/child`);
  assert.deepEqual(joined, { id: 2, url: `${A}/child`, opener: 1, session: "s1" });
  assert.equal(ownership.owner(2), "s1");
  assert.deepEqual(claimed, [2]);
  assert.deepEqual(attached, [["s1", 2]]);
  assert.deepEqual(watch.seen(), joined);
  assert.deepEqual(await watch.promise, joined);
  watch.cancel();
  // Its own popups join too.
  assert.equal((await popups.created(2, 3, "about:blank"))?.session, "s1");
});

test("popups: a person's tab, an orphan's, or one already owned never joins; no room keeps it unowned", async () => {
  const { ownership, popups, attached } = popupHarness();
  assert.equal(await popups.created(50, 51, `${A}/`), null); // nobody owns tab 50
  assert.equal(ownership.owner(51), null);
  ownership.claim("s2", 60);
  assert.equal(await popups.created(1, 60, `${A}/`), null); // s2's tab stays s2's
  assert.equal(ownership.owner(60), "s2");
  ownership.claim("s3", 70);
  ownership.endSession("s3");
  assert.equal(await popups.created(70, 71, `${A}/`), null); // an orphan's popups are the person's
  assert.equal(ownership.owner(71), null);
  assert.deepEqual(attached, []);
  const full = popupHarness({ room: false });
  assert.equal(await full.popups.created(1, 2, `${A}/`), null);
  assert.equal(full.ownership.owner(2), null);
  assert.equal(await popups.created("1", 2, ""), null);
});

// ---------------------------------------------------------------- frames through the debugger

/**
 * A debugger manager over a tab whose top frame T holds an out-of-process frame F1 (session S1),
 * which holds another, F2 (session S2). Each session's contexts, frame trees, iframe elements and
 * hit tests are given; every command is recorded with its session.
 */
function fakeFrameCdp({ hits = {} } = {}) {
  const listeners = new Set();
  const sent = [];
  const contexts = {
    top: [
      { id: 1, origin: A, auxData: { type: "default", frameId: "T", isDefault: true } },
      { id: 2, origin: "chrome-extension://tw", auxData: { type: "isolated", frameId: "T" } },
    ],
    S1: [{ id: 3, origin: "chrome-extension://someoneelse", auxData: { type: "isolated", frameId: "F1" } }],
    S2: [
      { id: 5, origin: B, auxData: { type: "isolated", frameId: "F2" } }, // a page-made world
      { id: 4, origin: "chrome-extension://tw", auxData: { type: "isolated", frameId: "F2" } },
    ],
  };
  const tokens = { 2: "doc-top", 3: "doc-other", 4: "doc-f2", 5: "doc-f2" };
  const trees = {
    top: { frameTree: { frame: { id: "T" } } },
    S1: { frameTree: { frame: { id: "F1", parentId: "T" } } },
    S2: { frameTree: { frame: { id: "F2", parentId: "F1" } } },
  };
  const owners = { F1: 33, F2: 40 };
  // Quads as DOM.getBoxModel gives them (corners clockwise from top-left), 100x100 content.
  const square = (x, y, size) => [x, y, x + size, y, x + size, y + size, x, y + size];
  const boxes = {
    33: { content: square(30, 200, 100), border: square(20, 190, 120), width: 120, height: 120 },
    40: { content: square(100, 50, 100), border: square(90, 40, 120), width: 120, height: 120 },
  };
  const hit = { top: { backendNodeId: 33, frameId: "T" }, S1: { backendNodeId: 40, frameId: "F1" }, ...hits };
  const children = [
    { sessionId: "S1", parent: undefined, targetId: "F1", type: "iframe" },
    { sessionId: "S2", parent: "S1", targetId: "F2", type: "iframe" },
  ];
  const cdp = {
    sent,
    listen: (_tabId, fn) => { listeners.add(fn); return () => listeners.delete(fn); },
    children: () => children,
    send: async (_ctx, _tabId, method, params, _what, session) => {
      const where = session ?? "top";
      sent.push([method, where]);
      if (method === "Runtime.enable") {
        for (const context of contexts[where] ?? []) for (const l of listeners) l("Runtime.executionContextCreated", { context }, session);
        return {};
      }
      if (method === "Runtime.callFunctionOn") return { result: { value: tokens[params.executionContextId] ?? null } };
      if (method === "DOM.getFrameOwner") return { backendNodeId: owners[params.frameId] };
      if (method === "DOM.getBoxModel") return { model: boxes[params.backendNodeId] };
      if (method === "Page.getFrameTree") return trees[where];
      if (method === "Page.getLayoutMetrics") return { cssLayoutViewport: { pageX: 0, pageY: 0, clientWidth: 1000, clientHeight: 800 } };
      if (method === "DOM.getNodeForLocation") return hit[where];
      return {};
    },
  };
  return cdp;
}

const DCTX = { ...CTX, deadline: Date.now() + 60_000 };
const noSleep = async () => {};

test("createFrameWorlds.locate: tabwarden's world by its document token, in the tab's session or an out-of-process frame's", async () => {
  const cdp = fakeFrameCdp();
  const worlds = createFrameWorlds({ cdp, sleep: noSleep });
  assert.deepEqual(await worlds.locate(DCTX, 1, "doc-top", { topOnly: true }), { session: undefined, contextId: 2, frameId: "T" });
  assert.equal(cdp.sent.some(([m]) => m === "Target.setAutoAttach"), false, "the top frame never reaches into child targets");
  cdp.sent.length = 0;
  // Another extension's world and a page-made world with the right token are never taken.
  assert.deepEqual(await worlds.locate(DCTX, 1, "doc-f2"), { session: "S2", contextId: 4, frameId: "F2" });
  for (const s of ["top", "S1", "S2"]) assert.ok(cdp.sent.some(([m, w]) => m === "Runtime.disable" && w === s), s);
  // Known once found (while its session is attached).
  cdp.sent.length = 0;
  await worlds.locate(DCTX, 1, "doc-f2");
  assert.deepEqual(cdp.sent, []);
  // A token no world holds: internal_error, after the bounded wait.
  const fresh = createFrameWorlds({ cdp: fakeFrameCdp(), sleep: noSleep });
  await assert.rejects(fresh.locate(DCTX, 1, "doc-nobody"), (e) => e.code === "internal_error" && /retry/.test(e.message));
});

test("createFrameWorlds.toTop: a nested out-of-process frame's point mapped through each enclosing iframe's content box", async () => {
  const cdp = fakeFrameCdp();
  const worlds = createFrameWorlds({ cdp, sleep: noSleep });
  const world = await worlds.locate(DCTX, 1, "doc-f2");
  cdp.sent.length = 0;
  assert.deepEqual(await worlds.toTop(DCTX, 1, world, 10, 20), { x: 140, y: 270, coveredBy: null });
  // F2's iframe element is asked for in S1 (where F2's parent lives), F1's in the tab's session.
  assert.deepEqual(cdp.sent.filter(([m]) => m === "DOM.getFrameOwner"), [["DOM.getFrameOwner", "S1"], ["DOM.getFrameOwner", "top"]]);
  // Something of the top page over F1's iframe at that point: covered, said so.
  const over = fakeFrameCdp({ hits: { top: { backendNodeId: 99, frameId: "T" } } });
  const w2 = createFrameWorlds({ cdp: over, sleep: noSleep });
  const covered = await w2.toTop(DCTX, 1, await w2.locate(DCTX, 1, "doc-f2"), 10, 20);
  assert.match(String(covered.coveredBy), /enclosing page/);
  // A same-process frame's own content at that point (another frame's node) is not a cover.
  const inner = fakeFrameCdp({ hits: { top: { backendNodeId: 7, frameId: "F1" } } });
  const w3 = createFrameWorlds({ cdp: inner, sleep: noSleep });
  assert.equal((await w3.toTop(DCTX, 1, await w3.locate(DCTX, 1, "doc-f2"), 10, 20)).coveredBy, null);
});

test("frameBox: a frame's point lands where Chrome draws it, under transforms and zoom (quads measured on Chromium 156)", async () => {
  const { frameBox } = await import("../../extension/handlers/frames.js");
  // A 600x400 frame (border 5, padding 3: a 616x416 border box) and a point (250, 120) in it:
  // each mapped point was clicked in Chromium and hit the button there.
  const measured = {
    plain: { content: [48, 58, 648, 58, 648, 458, 48, 458], border: [40, 50, 656, 50, 656, 466, 40, 466], width: 616, height: 416, at: [298, 178] },
    scale: { content: [44, 54, 344, 54, 344, 254, 44, 254], border: [40, 50, 348, 50, 348, 258, 40, 258], width: 616, height: 416, at: [169, 114] },
    rotate: { content: [87.3, 8.9, 678.2, 113.1, 608.7, 507.1, 17.8, 402.9], border: [80.8, -0.3, 687.4, 106.6, 615.2, 516.3, 8.6, 409.4], width: 616, height: 416, at: [312.6, 170.5] },
    zoom: { content: [96, 66, 1296, 66, 1296, 866, 96, 866], border: [80, 50, 1312, 50, 1312, 882, 80, 882], width: 616, height: 416, at: [596, 306] },
  };
  for (const [name, m] of Object.entries(measured)) {
    const p = frameBox(m).place(250, 120);
    assert.ok(Math.abs(p.x - m.at[0]) < 0.5 && Math.abs(p.y - m.at[1]) < 0.5, `${name}: ${JSON.stringify(p)}`);
  }
  assert.equal(frameBox(measured.zoom).drawnScale, 2);
  assert.deepEqual(frameBox(measured.plain).inset(250, 120), { x: 258, y: 128 });
  assert.deepEqual(frameBox(measured.zoom).inset(250, 120, 2), { x: 516, y: 256 });
  // Nothing to place a point in: no area, too few corners, not a box.
  for (const bad of [{ ...measured.plain, content: [1, 1, 1, 1, 1, 1, 1, 1] }, { ...measured.plain, border: [1, 2] }, { ...measured.plain, width: 0 }, null, "box"]) {
    assert.equal(frameBox(bad), null, JSON.stringify(bad));
  }
});
