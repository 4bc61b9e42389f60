// handlers/element-shot.js — page_screenshot of one element: where its border box lies in the
// tab's viewport. Thin glue over elementTools (handlers/interact.js: ownership, the origin gate of
// the tab and of the call's `frame`, the page code that resolves the element and scrolls it into
// view as the actions do) and createFrameWorlds (handlers/frames.js: a frame's viewport placed in
// the tab's). The capture itself stays page_screenshot's (handlers/read.js, shared/screenshot.js),
// wrapped as every RENDERS action is (handlers/actions.js rendersOnlyApproved). It must never
// measure an element in a frame the origin gate did not pass, never return a box it did not
// measure after the scroll, and never answer a box with no area (nothing would be captured).

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { isPlainObject } from "../shared/wire.js";
import { createFrameWorlds } from "./frames.js";
import { argTarget, elementTools } from "./interact.js";

/**
 * @typedef {{x: number, y: number, width: number, height: number}} Box
 */

/**
 * The border box page/snapshot.js boxOf measured, or null when it has no area.
 * @param {unknown} box
 * @returns {Box | null}
 */
export function measuredBox(box) {
  if (!isPlainObject(box)) return null;
  const [x, y, width, height] = [box.x, box.y, box.width, box.height].map(Number);
  if (![x, y, width, height].every(Number.isFinite) || width < 1 || height < 1) return null;
  return { x, y, width, height };
}

/**
 * @param {import("./support.js").HandlerDeps & {browser: any, cdp?: import("../worker/debugger.js").DebuggerManager,
 *   docTokens?: import("./interact.js").DocTokens, callFrame?: WeakMap<object, number>, sleep?: (ms: number) => Promise<void>}} deps
 */
export function elementShots(deps) {
  const { open, page } = elementTools(/** @type {any} */ (deps));
  const sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  const worlds = createFrameWorlds({ cdp: deps.cdp, sleep });

  /**
   * The element the call names, scrolled into view: its tab, the tab's top origin (what the
   * capture must still show afterwards) and its border box in the tab's viewport (CSS pixels).
   * @param {Record<string, unknown>} args
   * @param {import("./support.js").Ctx} ctx
   * @param {string} tool
   * @returns {Promise<{tabId: number, topOrigin: string, box: Box}>}
   */
  async function elementBox(args, ctx, tool) {
    const target = argTarget(args);
    const { tabId, tab, origin, docToken, frameId } = await open(args, ctx, tool);
    const moved = await page(ctx, tabId, "scroll", { origin, target, docToken });
    const t = isPlainObject(moved.target) ? moved.target : {};
    const doc = typeof t.docToken === "string" ? t.docToken : docToken;
    // Measured by the ref the page just gave it: the same element, not a new match of a selector.
    const by = typeof t.ref === "string" ? { ref: t.ref } : target;
    const state = await page(ctx, tabId, "getState", { origin, target: by, docToken: doc });
    const box = measuredBox(state.box);
    if (box === null) {
      throw new BridgeError(CODE.ELEMENT_NOT_FOUND, "the element has no box to capture (it is not rendered, or has no width or height); name a visible element, or take a region");
    }
    if (frameId === 0) return { tabId, topOrigin: origin, box };
    const topOrigin = originOf(String(tab?.url ?? ""));
    if (topOrigin === null) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the tab's page has no web origin; nothing was captured");
    if (typeof doc !== "string") throw new BridgeError(CODE.INTERNAL_ERROR, "could not find the element's frame document; retry");
    // In a frame: both corners placed in the tab's viewport through the enclosing iframes.
    const world = await worlds.locate(ctx, tabId, doc);
    const a = await worlds.toTop(ctx, tabId, world, box.x, box.y);
    const b = await worlds.toTop(ctx, tabId, world, box.x + box.width, box.y + box.height);
    const placed = measuredBox({ x: a.x, y: a.y, width: b.x - a.x, height: b.y - a.y });
    if (placed === null) throw new BridgeError(CODE.ELEMENT_NOT_FOUND, "the element's frame shows none of it in the tab; scroll the frame into view, or take a region");
    return { tabId, topOrigin, box: placed };
  }

  return { elementBox };
}
