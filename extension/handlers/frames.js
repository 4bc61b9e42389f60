// handlers/frames.js — the frames of an owned tab: page_frames (list them), and what the element
// tools (handlers/interact.js elementTools) use to aim at one frame: argFrame (the `frame`
// argument: a frameId from page_frames, 0 = the top frame, the default) and gateFrame (the frame
// exists, and its origin, and every ancestor frame's, passes the origin gate on its own, as a
// navigation to it would). Thin glue: the frame list comes from chrome.webNavigation.getAllFrames
// (shared/chrome-api.js), injected. It must never touch the chrome global, never show the url (path,
// query) or name of a frame whose origin the policy does not approve (only its origin, which is
// what the person would be asked about), never run anything in such a frame, and never resolve a
// frame argument to another tab's frame.
//
// Also (createFrameWorlds) where a frame's document lives for Chrome's debugger: the CDP session
// (the tab's own, or an out-of-process iframe's child session, Target.setAutoAttach flatten) and
// the execution context of tabwarden's isolated world there, found by the document's RefStore
// token (docs/platform-facts-a11y.md), and how a point in a frame's viewport maps to the tab's
// viewport (DOM.getFrameOwner + DOM.getBoxModel on each enclosing iframe element), for trusted
// input (handlers/input.js) and the accessibility tree (handlers/interact.js).

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { inheritsOrigin, originOf } from "../shared/origin.js";
import { maskCards } from "../worker/redact.js";
import { isPlainObject } from "../shared/wire.js";
import { argTabId, gatedTab, ownedTab, step } from "./support.js";

/** Most frames page_frames lists (a page may make thousands); then `truncated`. */
export const MAX_FRAMES = 200;
/** Longest frame name shown. */
const MAX_NAME = 200;
/** Highest frameId accepted (Chrome's are small positive integers). */
const MAX_FRAME_ID = 2 ** 31 - 1;

/**
 * One frame of a tab. `gateUrl` is the url its origin gate runs on: its own, or, for a frame
 * that inherits its creator's origin (about:blank, about:srcdoc), the nearest ancestor's.
 * @typedef {{index: number, frameId: number, parentFrameId: number | null, url: string,
 *   origin: string | null, gateUrl: string}} FrameInfo
 */

/**
 * The browser calls this family uses.
 * @typedef {object} FramesBrowserApi
 * @property {(tabId: number) => Promise<Array<{frameId: number, parentFrameId: number, url: string}> | null>} getAllFrames
 * @property {(tabId: number, frameIds: number[], func: () => unknown) => Promise<Array<{frameId: number, result?: unknown}>>} executeInFrames
 */

/**
 * The `frame` argument: a frameId from page_frames; absent or null is the top frame (0).
 * @param {Record<string, unknown>} args
 * @returns {number}
 */
export function argFrame(args) {
  const v = args.frame;
  if (v === undefined || v === null) return 0;
  if (!Number.isInteger(v) || /** @type {number} */ (v) < 0 || /** @type {number} */ (v) > MAX_FRAME_ID) {
    throw new BridgeError(CODE.BAD_REQUEST, "frame must be a frameId (integer >= 0) from page_frames; 0 is the top frame");
  }
  return /** @type {number} */ (v);
}

/**
 * The tab's frames, top first then by frameId, each with its index in that order and the
 * origin its gate runs on. Pure over the getAllFrames answer.
 * @param {unknown} raw
 * @returns {FrameInfo[]}
 */
export function frameList(raw) {
  /** @type {Map<number, {frameId: number, parentFrameId: number, url: string}>} */
  const byId = new Map();
  for (const f of Array.isArray(raw) ? raw : []) {
    if (!isPlainObject(f) || !Number.isInteger(f.frameId) || /** @type {number} */ (f.frameId) < 0) continue;
    byId.set(/** @type {number} */ (f.frameId), {
      frameId: /** @type {number} */ (f.frameId),
      parentFrameId: Number.isInteger(f.parentFrameId) ? /** @type {number} */ (f.parentFrameId) : -1,
      url: typeof f.url === "string" ? f.url : "",
    });
  }
  /** @param {number} id @param {number} depth @returns {string} */
  const gateUrlOf = (id, depth) => {
    const f = byId.get(id);
    if (f === undefined) return "";
    if (!inheritsOrigin(f.url) || f.parentFrameId < 0 || depth > 64) return f.url;
    return gateUrlOf(f.parentFrameId, depth + 1);
  };
  const ids = [...byId.keys()].sort((a, b) => a - b);
  return ids.map((frameId, index) => {
    const f = /** @type {{frameId: number, parentFrameId: number, url: string}} */ (byId.get(frameId));
    const gateUrl = gateUrlOf(frameId, 0);
    return {
      index, frameId, parentFrameId: f.parentFrameId < 0 ? null : f.parentFrameId,
      url: f.url, origin: originOf(gateUrl), gateUrl,
    };
  });
}

/**
 * The tab's frames as the browser has them now.
 * @param {{browser: FramesBrowserApi}} deps
 * @param {import("./support.js").Ctx} ctx
 * @param {number} tabId
 */
async function framesOf(deps, ctx, tabId) {
  let raw;
  try {
    raw = await step(ctx, "list the tab's frames", deps.browser.getAllFrames(tabId));
  } catch (err) {
    if (err instanceof BridgeError) throw err;
    throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
  }
  if (raw === null || raw === undefined) throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
  return frameList(raw);
}

/**
 * Before an element tool acts in frame `frameId` (not the top frame, which the caller gated): the
 * frame must exist in the tab (else element_not_found), and its origin and every ancestor's must
 * pass the origin gate, each on its own (the person is asked about an unapproved one, as for a
 * navigation to it). Returns the frame's origin (the page code refuses to act on any other).
 * @param {import("./support.js").HandlerDeps & {browser: FramesBrowserApi}} deps
 * @param {import("./support.js").Ctx} ctx
 * @param {number} tabId
 * @param {number} frameId
 * @param {string} tool
 * @returns {Promise<string>}
 */
export async function gateFrame(deps, ctx, tabId, frameId, tool) {
  const frames = await framesOf(deps, ctx, tabId);
  const byId = new Map(frames.map((f) => [f.frameId, f]));
  const frame = byId.get(frameId);
  if (frame === undefined) {
    throw new BridgeError(CODE.ELEMENT_NOT_FOUND, `tab ${tabId} has no frame ${frameId} (it may have gone); list frames with page_frames`);
  }
  /** @type {FrameInfo[]} */
  const chain = [];
  for (let f = /** @type {FrameInfo | undefined} */ (frame); f !== undefined && chain.length <= 64; f = f.parentFrameId === null ? undefined : byId.get(f.parentFrameId)) {
    chain.push(f);
  }
  // Outermost first; the top frame was gated by the caller on the tab's url.
  /** @type {Map<string, string>} */
  const gated = new Map();
  for (const f of chain.reverse()) {
    if (f.frameId === 0 || gated.has(f.gateUrl)) continue;
    gated.set(f.gateUrl, await deps.ensureOrigin(f.gateUrl, ctx, tool));
  }
  const origin = gated.get(frame.gateUrl);
  if (origin === undefined) throw new BridgeError(CODE.BAD_REQUEST, "frame 0 is the top frame: leave frame out for it");
  return origin;
}

/**
 * A read tool's tab, and the frame it reads (`frame`; 0: the top one): the tab's origin passes the
 * gate, and with a frame that frame's origin and each enclosing one's, each on its own. `origin`
 * is the one the read must come from (support.js `sameOrigin`); `topOrigin` the tab's.
 * @param {import("./support.js").HandlerDeps & {browser: FramesBrowserApi}} deps
 * @param {Record<string, unknown>} args
 * @param {import("./support.js").Ctx} ctx
 * @param {string} tool
 */
export async function gatedFrame(deps, args, ctx, tool) {
  const frameId = argFrame(args);
  const { tabId, tab, origin: topOrigin, url } = await gatedTab(deps, args, ctx, tool);
  const origin = frameId === 0 ? topOrigin : await gateFrame(deps, ctx, tabId, frameId, tool);
  return { tabId, tab, url, frameId, origin, topOrigin };
}

/** Runs in an approved frame (serialised by executeScript): the frame's window.name. */
function frameName() {
  return typeof window.name === "string" ? window.name.slice(0, 1000) : "";
}

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: FramesBrowserApi}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function framesHandlers(deps) {
  const { browser, ensureOrigin } = deps;

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageFrames(args, ctx) {
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    await ensureOrigin(tab?.url, ctx, "page_frames");
    const all = await framesOf(deps, ctx, tabId);
    const shown = all.slice(0, MAX_FRAMES);
    const approved = (/** @type {FrameInfo} */ f) => f.origin !== null && ctx.policy.approves(f.origin);
    // Names only from approved frames: nothing runs in a frame the policy does not approve.
    /** @type {Map<number, string>} */
    const names = new Map();
    await Promise.all(shown.filter(approved).map(async (f) => {
      try {
        const r = await step(ctx, "read a frame's name", browser.executeInFrames(tabId, [f.frameId], frameName));
        const name = Array.isArray(r) ? r[0]?.result : undefined;
        if (typeof name === "string") names.set(f.frameId, maskCards(name.slice(0, MAX_NAME)));
      } catch (err) {
        if (err instanceof BridgeError) throw err; // the call's deadline
        // no host permission yet, or the frame went: its name stays unknown
      }
    }));
    return {
      frames: shown.map((f) => ({
        index: f.index,
        frameId: f.frameId,
        parentFrameId: f.parentFrameId,
        origin: f.origin ?? "null",
        approved: approved(f),
        url: approved(f) ? f.url : null,
        name: names.get(f.frameId) ?? null,
      })),
      truncated: all.length > shown.length,
    };
  }

  return [["page_frames", pageFrames]];
}

// ---------------------------------------------------------------- frames through the debugger

/** How long (and how often) to look for tabwarden's world after Runtime.enable / auto-attach. */
const WORLD_WAIT_MS = 2000;
const WORLD_POLL_MS = 20;
/** Deepest nesting of child sessions (out-of-process iframes in out-of-process iframes) followed. */
const MAX_SESSION_DEPTH = 8;
/** Documents' worlds remembered per tab (the top one and a few frames'). */
const MAX_WORLDS = 16;
/** Runs in a candidate world: its RefStore's token, which only tabwarden's world can hold. */
const WORLD_TOKEN_FN = "function () { const s = globalThis.__tabwardenRefs; return s && typeof s.doc === 'string' ? s.doc : null; }";

/**
 * Where one document's tabwarden world is: `session` undefined = the tab's own CDP session,
 * else an out-of-process iframe's child session; `contextId` its isolated world; `frameId` the
 * CDP frame id of the document's frame.
 * @typedef {{session: string | undefined, contextId: number, frameId: string}} FrameWorld
 */

/**
 * An iframe element's box as drawn, from DOM.getBoxModel's model: its content quad (corners
 * top-left, top-right, bottom-right, bottom-left, in the enclosing viewport, after CSS
 * transforms and zoom) spans the frame's viewport, whose size in the frame's own CSS pixels is
 * the element's untransformed content box: `model.width`/`height` (the border box, untransformed)
 * times the content quad's share of the border quad along each edge. `place` maps a point of
 * the frame's viewport into the enclosing viewport (an affine map, so rotation, scale, skew and
 * zoom all land where Chrome draws the point); `inset` gives it in the element's own
 * untransformed box (DOM.scrollIntoViewIfNeeded's rect), times `scale`; `drawnScale` is how much
 * larger the frame is drawn than laid out (zoom or a transform's scale). Null for a box drawn
 * with no area.
 * @param {unknown} model
 * @returns {{place: (x: number, y: number) => {x: number, y: number}, drawnScale: number,
 *   inset: (x: number, y: number, scale?: number) => {x: number, y: number}} | null}
 */
export function frameBox(model) {
  if (!isPlainObject(model)) return null;
  const quad = (/** @type {unknown} */ q) => Array.isArray(q) && q.length >= 8 && q.slice(0, 8).every((v) => Number.isFinite(v))
    ? /** @type {number[]} */ (q).map(Number) : null;
  const c = quad(model.content);
  const b = quad(model.border);
  const width = Number(model.width);
  const height = Number(model.height);
  if (c === null || b === null || !(width > 0) || !(height > 0)) return null;
  const len = (/** @type {number} */ dx, /** @type {number} */ dy) => Math.hypot(dx, dy);
  const topC = len(c[2] - c[0], c[3] - c[1]);
  const leftC = len(c[6] - c[0], c[7] - c[1]);
  const topB = len(b[2] - b[0], b[3] - b[1]);
  const leftB = len(b[6] - b[0], b[7] - b[1]);
  if (!(topC > 0 && leftC > 0 && topB > 0 && leftB > 0)) return null;
  // The frame's viewport in its own CSS pixels.
  const w = (width * topC) / topB;
  const h = (height * leftC) / leftB;
  return {
    place: (x, y) => ({
      x: c[0] + (x / w) * (c[2] - c[0]) + (y / h) * (c[6] - c[0]),
      y: c[1] + (x / w) * (c[3] - c[1]) + (y / h) * (c[7] - c[1]),
    }),
    drawnScale: topC / w,
    inset: (x, y, scale = 1) => {
      // The content corner's offset from the border corner, along each edge, untransformed.
      const ux = [(b[2] - b[0]) / topB, (b[3] - b[1]) / topB];
      const uy = [(b[6] - b[0]) / leftB, (b[7] - b[1]) / leftB];
      const d = [c[0] - b[0], c[1] - b[1]];
      return {
        x: (((d[0] * ux[0] + d[1] * ux[1]) * width) / topB + x) * scale,
        y: (((d[0] * uy[0] + d[1] * uy[1]) * height) / leftB + y) * scale,
      };
    },
  };
}

/**
 * @param {{cdp?: import("../worker/debugger.js").DebuggerManager, sleep: (ms: number) => Promise<void>}} deps
 */
export function createFrameWorlds({ cdp, sleep }) {
  /** tabId -> the world of the document whose RefStore token is `doc` (one per tab and frame kind). */
  /** @type {Map<number, Map<string, FrameWorld>>} */
  const known = new Map();

  /** @returns {import("../worker/debugger.js").DebuggerManager} */
  const debuggerOf = () => {
    if (cdp === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "the debugger is not available");
    return cdp;
  };

  /**
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {string | undefined} session
   * @param {string} method
   * @param {Record<string, unknown>} params
   * @param {string} what
   */
  const send = (ctx, tabId, session, method, params, what) => debuggerOf().send(ctx, tabId, method, params, what, session);

  /**
   * The world of the document whose RefStore token is `doc` (the DOM walk or a page op just
   * answered it): looked for in the tab's own session (`topOnly`: only there, the top frame's
   * case), then in its out-of-process iframes' child sessions. A candidate is accepted only when
   * it is an isolated world with a chrome-extension:// origin whose RefStore token equals `doc`
   * (read from the world and compared here, never sent into one).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {string} doc
   * @param {{topOnly?: boolean}} [opts]
   * @returns {Promise<FrameWorld>}
   */
  async function locate(ctx, tabId, doc, { topOnly = false } = {}) {
    const manager = debuggerOf();
    const cached = known.get(tabId)?.get(doc);
    // A child session goes with its frame's document: a cached world there must still be attached.
    if (cached !== undefined && (cached.session === undefined || manager.children(tabId).some((c) => c.sessionId === cached.session))) return cached;
    /** @type {Array<{session: string | undefined, context: any}>} */
    const seen = [];
    /** @type {Set<string>} */
    const fresh = new Set();
    const stop = manager.listen(tabId, (method, params, session) => {
      if (method === "Runtime.executionContextCreated" && isPlainObject(params) && isPlainObject(params.context)) seen.push({ session, context: params.context });
      if (method === "Target.attachedToTarget" && isPlainObject(params) && typeof params.sessionId === "string") fresh.add(params.sessionId);
    });
    /** @type {Array<string | undefined>} */
    const enabled = [];
    /** @type {Set<string | undefined>} */
    const searched = new Set();
    /** @param {string | undefined} session */
    const enable = async (session) => {
      if (searched.has(session)) return;
      searched.add(session);
      await send(ctx, tabId, session, "Runtime.enable", {}, "list the page's script worlds");
      enabled.push(session);
    };
    /** @param {string | undefined} session */
    const depth = (session) => {
      let d = 0;
      const byId = new Map(manager.children(tabId).map((c) => [c.sessionId, c]));
      for (let s = session; s !== undefined && d <= MAX_SESSION_DEPTH; s = byId.get(s)?.parent) d += 1;
      return d;
    };
    try {
      await enable(undefined);
      let children = false;
      for (let waited = 0; ; waited += WORLD_POLL_MS) {
        for (const { session, context: c } of seen.splice(0)) {
          const isolated = isPlainObject(c.auxData) && c.auxData.type === "isolated" && typeof c.auxData.frameId === "string";
          if (!isolated || !Number.isInteger(c.id) || typeof c.origin !== "string" || !c.origin.startsWith("chrome-extension://")) continue;
          const r = await send(ctx, tabId, session, "Runtime.callFunctionOn",
            { executionContextId: c.id, functionDeclaration: WORLD_TOKEN_FN, returnByValue: true }, "find tabwarden's script world").catch(() => null);
          if (r?.result?.value === doc) {
            /** @type {FrameWorld} */
            const world = { session, contextId: c.id, frameId: c.auxData.frameId };
            const tabWorlds = known.get(tabId) ?? new Map();
            known.set(tabId, tabWorlds);
            tabWorlds.set(doc, world);
            // Old documents' worlds are dead: keep the latest few.
            for (const old of tabWorlds.keys()) if (tabWorlds.size > MAX_WORLDS) tabWorlds.delete(old);
            return world;
          }
        }
        if (!topOnly) {
          if (!children) {
            // Out-of-process iframes are child targets: attach them (flat sessions) and search
            // each, and theirs in turn.
            children = true;
            await send(ctx, tabId, undefined, "Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }, "reach the page's out-of-process frames");
          }
          for (const c of manager.children(tabId)) fresh.add(c.sessionId);
          for (const session of [...fresh]) {
            fresh.delete(session);
            if (searched.has(session) || depth(session) > MAX_SESSION_DEPTH) continue;
            await enable(session).catch(() => {}); // a frame that went meanwhile
            await send(ctx, tabId, session, "Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true },
              "reach the page's out-of-process frames").catch(() => {});
          }
        }
        if (waited >= WORLD_WAIT_MS) break;
        await sleep(WORLD_POLL_MS);
      }
    } finally {
      stop();
      await Promise.all(enabled.map((session) => send(ctx, tabId, session, "Runtime.disable", {}, "stop listing script worlds").catch(() => {})));
    }
    throw new BridgeError(CODE.INTERNAL_ERROR, "could not find tabwarden's script world in this frame; retry");
  }

  /**
   * The CDP id of frame `frameId`'s parent frame, from the frame tree of the session that holds
   * it (an out-of-process frame's session roots at it, and still names its parent), or null.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {string | undefined} session
   * @param {string} frameId
   * @returns {Promise<string | null>}
   */
  async function parentOf(ctx, tabId, session, frameId) {
    const tree = await send(ctx, tabId, session, "Page.getFrameTree", {}, "read the frame tree").catch(() => null);
    /** @type {any[]} */
    const stack = [tree?.frameTree];
    for (let n = 0; stack.length > 0 && n < 10_000; n++) {
      const node = stack.pop();
      if (!isPlainObject(node)) continue;
      if (isPlainObject(node.frame) && node.frame.id === frameId) return typeof node.frame.parentId === "string" ? node.frame.parentId : null;
      if (Array.isArray(node.childFrames)) stack.push(...node.childFrames);
    }
    return null;
  }

  /**
   * The point (x, y) of `world`'s frame viewport in the tab's viewport (CSS pixels): each
   * enclosing iframe element's content box (DOM.getBoxModel, scrolled into view first so the
   * point shows) mapped through, up to the top frame (frameBox: CSS transforms and zoom on an
   * iframe are followed). A same-process frame's boxes are in its local root's viewport
   * already; an out-of-process frame's owner is asked in its parent session.
   * `coveredBy`: the enclosing document has another element over the frame at that point (then
   * input there would not reach the frame).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {FrameWorld} world
   * @param {number} x
   * @param {number} y
   * @returns {Promise<{x: number, y: number, coveredBy: string | null}>}
   */
  async function toTop(ctx, tabId, world, x, y) {
    /**
     * A local root's layout viewport: its size and scroll (zeros when it does not answer).
     * @param {string | undefined} session
     */
    const viewportOf = async (session) => {
      const metrics = await send(ctx, tabId, session, "Page.getLayoutMetrics", {}, "read the page's viewport").catch(() => null);
      const v = metrics?.cssLayoutViewport;
      return { w: Number(v?.clientWidth) || 0, h: Number(v?.clientHeight) || 0, sx: Number(v?.pageX) || 0, sy: Number(v?.pageY) || 0 };
    };
    /**
     * Whether a point of a local root's viewport is inside that viewport.
     * @param {{w: number, h: number}} view
     * @param {{x: number, y: number}} at
     */
    const inView = (view, at) => view.w > 0 && view.h > 0 && at.x >= 0 && at.y >= 0 && at.x < view.w && at.y < view.h;
    const byId = new Map(debuggerOf().children(tabId).map((c) => [c.sessionId, c]));
    let session = world.session;
    let frameId = world.frameId;
    let px = x;
    let py = y;
    /** @type {string | null} */
    let coveredBy = null;
    for (let hop = 0; hop <= 64; hop++) {
      const child = session === undefined ? undefined : byId.get(session);
      // A child session's root frame is its target; its owner element lives in the parent session.
      const ownerSession = child !== undefined && child.targetId === frameId ? child.parent : session;
      const owner = await send(ctx, tabId, ownerSession, "DOM.getFrameOwner", { frameId }, "find the frame's iframe element");
      const backendNodeId = owner?.backendNodeId;
      if (!Number.isInteger(backendNodeId)) throw new BridgeError(CODE.ELEMENT_NOT_FOUND, "the frame's iframe element left the page");
      const boxOf = async () => {
        const m = await send(ctx, tabId, ownerSession, "DOM.getBoxModel", { backendNodeId }, "measure the frame's iframe element");
        const box = frameBox(m?.model);
        if (box === null) throw new BridgeError(CODE.ELEMENT_NOT_FOUND, "the frame's iframe element is not rendered");
        return box;
      };
      let box = await boxOf();
      let at = box.place(px, py);
      let view = await viewportOf(ownerSession);
      // The element's own scrollIntoView (page/actions.js) usually brought the point into view
      // through every enclosing document already. If not, scroll the iframe element so the
      // point shows: its rect is in the element's layout pixels, which zoom scales and a
      // transform does not, and the box cannot tell one from the other, so each is tried.
      for (const scale of [1, box.drawnScale]) {
        if (inView(view, at)) break;
        const inset = box.inset(px, py, scale);
        await send(ctx, tabId, ownerSession, "DOM.scrollIntoViewIfNeeded", {
          backendNodeId, rect: { x: inset.x, y: inset.y, width: 1, height: 1 },
        }, "scroll the frame into view").catch(() => {});
        box = await boxOf();
        at = box.place(px, py);
        view = await viewportOf(ownerSession);
      }
      ({ x: px, y: py } = at);
      if (coveredBy === null) {
        // What the enclosing document has at that point: the iframe (or, in a same-process
        // frame, something inside it) is fine; another element of that document is on top.
        const around = await parentOf(ctx, tabId, session, frameId);
        // DOM.getNodeForLocation takes document coordinates: the viewport point plus the scroll.
        const hit = await send(ctx, tabId, ownerSession, "DOM.getNodeForLocation",
          { x: Math.floor(px + view.sx), y: Math.floor(py + view.sy), includeUserAgentShadowDOM: false, ignorePointerEventsNone: true }, "look at what is over the frame").catch(() => null);
        if (around !== null && hit?.frameId === around && Number.isInteger(hit?.backendNodeId) && hit.backendNodeId !== backendNodeId) {
          coveredBy = "an element of the enclosing page, over the frame";
        }
      }
      if (ownerSession === undefined) return { x: Math.round(px * 100) / 100, y: Math.round(py * 100) / 100, coveredBy };
      // Now in the local root of ownerSession: go on from that root to its own owner.
      session = ownerSession;
      const up = byId.get(ownerSession);
      if (up === undefined) break;
      frameId = up.targetId;
    }
    throw new BridgeError(CODE.ELEMENT_NOT_FOUND, "could not place the frame in the tab (it may have gone); list frames with page_frames");
  }

  return { locate, toTop, forget: (/** @type {number} */ tabId) => known.delete(tabId) };
}
