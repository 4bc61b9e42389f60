import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/lib/bridge-error.js";
import { createOwnership } from "../../extension/lib/ownership.js";
import { createPopups } from "../../extension/lib/popups.js";
import { createLoadWatcher } from "../../extension/lib/tab-load.js";
import { argFrame, frameList, framesHandlers, gateFrame } from "../../extension/handlers/frames.js";
import { interactHandlers } from "../../extension/handlers/interact.js";
import { fakeTimers } from "./helpers/fakes.mjs";

const A = "http://127.0.0.1:8000";
const B = "http://localhost:9000";
const POLICY = { origins: [A], confirm: [], passwordFill: false };
const CTX = { session: "s1", policy: POLICY };

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
  const popups = createPopups({
    ownership, lifecycle, attach: async (session, id) => { attached.push([session, id]); }, log: { warn: () => {} },
  });
  return { ownership, popups, claimed, attached };
}

test("popups: a tab an owned tab opens joins its session, is kept, attached and reported to the armed watch", async () => {
  const { ownership, popups, claimed, attached } = popupHarness();
  const watch = popups.watch(1, POLICY);
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
