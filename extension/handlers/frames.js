// handlers/frames.js — the frames of an owned tab: page_frames (list them), and what the element
// tools (handlers/interact.js elementTools) use to aim at one frame: argFrame (the `frame`
// argument: a frameId from page_frames, 0 = the top frame, the default) and gateFrame (the frame
// exists, and its origin, and every ancestor frame's, passes the origin gate on its own, as a
// navigation to it would). Thin glue: the frame list comes from chrome.webNavigation.getAllFrames
// (lib/chrome-api.js), injected. It must never touch the chrome global, never show the url (path,
// query) or name of a frame whose origin the policy does not approve (only its origin, which is
// what the person would be asked about), never run anything in such a frame, and never resolve a
// frame argument to another tab's frame.

import { BridgeError } from "../lib/bridge-error.js";
import { CODE } from "../lib/error-codes.js";
import { isApproved, originOf } from "../lib/origin.js";
import { maskCards } from "../lib/redact.js";
import { isPlainObject } from "../lib/wire.js";
import { argTabId, ownedTab, step } from "./support.js";

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

/** @param {string} url */
const inheritsOrigin = (url) => url === "about:blank" || url === "about:srcdoc" || url === "";

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

/** Runs in an approved frame (serialised by executeScript): the frame's window.name. */
function frameName() {
  return typeof window.name === "string" ? window.name.slice(0, 1000) : "";
}

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: FramesBrowserApi}} deps
 * @returns {Array<[string, import("../lib/dispatch.js").Handler]>}
 */
export function framesHandlers(deps) {
  const { browser, ensureOrigin } = deps;

  /** @type {import("../lib/dispatch.js").Handler} */
  async function pageFrames(args, ctx) {
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    await ensureOrigin(tab?.url, ctx, "page_frames");
    const all = await framesOf(deps, ctx, tabId);
    const approvedList = isPlainObject(ctx.policy) ? ctx.policy.origins : undefined;
    const shown = all.slice(0, MAX_FRAMES);
    const approved = (/** @type {FrameInfo} */ f) => f.origin !== null && isApproved(f.origin, approvedList);
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
