// handlers/pointer.js — a person's click (and drag) on an owned tab, made in one place for page_click
// (handlers/interact.js), page_mouse and page_drag (handlers/input.js): where the pointer lands
// (page/actions.js pointAt in the call's frame, placed in the tab's viewport through the enclosing
// iframes), the click itself as trusted input (CDP Input.dispatchMouseEvent: `event.isTrusted` is
// true and Chrome counts it as a user gesture, so its popup blocker lets the window a click
// handler opens through, as for a person's click), and the windows Chrome blocked meanwhile
// (CDP Page.windowOpen without a user gesture, then no tab). Pure: the debugger and the page code
// are injected. It must never click a point other than the one `locate` found, never turn off
// Chrome's popup blocker, and never report a window as blocked while one could still join.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { createFrameWorlds } from "./frames.js";

/** CDP `buttons` bit of each button while it is held. */
export const BUTTON_BITS = Object.freeze({ left: 1, right: 2, middle: 4 });
/**
 * How long a window Chrome announced without a user gesture (Page.windowOpen, userGesture false)
 * may take to show up as a tab before it counts as blocked: a site the person allowed pop-ups on
 * opens it anyway, within a few hundred ms (measured, Chromium 156).
 */
export const POPUP_JOIN_MS = 1500;

/** How long a click in a frame waits for the pointer to reach that frame's document. */
export const POINTER_REACH_MS = 5000;
/** How often it looks; every NUDGE_MS the move is sent again. */
const REACH_POLL_MS = 50;
const NUDGE_MS = 500;

/**
 * Where the pointer lands, and the click there.
 * @param {{cdp?: import("../worker/debugger.js").DebuggerManager, sleep: (ms: number) => Promise<void>,
 *   page: (ctx: import("./support.js").Ctx, tabId: number, op: string, a: Record<string, unknown>) => Promise<Record<string, any>>,
 *   docTokens: import("./interact.js").DocTokens,
 *   remember: (tabId: number, session: string, frameId: number, token: string, floor: number) => void}} deps
 */
export function createPointer({ cdp, sleep, page, docTokens, remember }) {
  const worlds = createFrameWorlds({ cdp, sleep });

  /**
   * Where the pointer lands on the tab (page/actions.js pointAt, in the call's frame), recording
   * the document's ref token as a snapshot does, so the hit element's ref can be used next. In a
   * frame the point is found in the frame's viewport (`covered`, `hitTarget`, `hitRef` are the
   * frame's), then placed in the tab's viewport through the enclosing iframe elements
   * (handlers/frames.js toTop); an element of an enclosing page over the frame at that point is
   * `covered` too (`overFrame`: nothing of the frame's own would receive the input), and the
   * answer names the frame's origin as `inFrame`, so moveTo, clickAt and dragBetween wait for the
   * pointer there before pressing. `more` goes to pointAt as well (page_click's `armClick`:
   * watch the click the element receives).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {number} frameId
   * @param {string} origin
   * @param {string | null} docToken
   * @param {{target: Record<string, unknown> | null, x?: number, y?: number}} point
   * @param {Record<string, unknown>} [more]
   */
  async function locate(ctx, tabId, frameId, origin, docToken, point, more = {}) {
    const floor = docTokens.get(tabId)?.floor ?? 0;
    const a = point.target !== null ? { target: point.target, docToken } : { x: point.x, y: point.y };
    const r = await page(ctx, tabId, "point", { ...a, ...more, origin, refFloor: floor });
    if (!Number.isFinite(r.x) || !Number.isFinite(r.y)) throw new BridgeError(CODE.INTERNAL_ERROR, "could not find where to point in this page");
    if (typeof r.docToken === "string" && Number.isSafeInteger(r.lastRef)) {
      remember(tabId, ctx.session, frameId, r.docToken, Math.max(floor, r.lastRef));
    }
    const kind = r.kind === "submit" || r.kind === "link" ? r.kind : "plain";
    const at = {
      x: Number(r.x), y: Number(r.y), covered: r.covered === true, overFrame: false, kind, url: String(r.url),
      desc: String(r.desc ?? ""), hitTarget: String(r.hitTarget ?? ""),
      hitKind: r.hitKind === "submit" || r.hitKind === "link" ? r.hitKind : "plain",
      ...(typeof r.hitRef === "string" ? { hitRef: r.hitRef } : {}),
      inFrame: /** @type {string | undefined} */ (undefined),
    };
    if (frameId === 0) return at;
    if (typeof r.docToken !== "string") throw new BridgeError(CODE.INTERNAL_ERROR, "could not find where to point in this frame");
    const world = await worlds.locate(ctx, tabId, r.docToken);
    const top = await worlds.toTop(ctx, tabId, world, at.x, at.y);
    if (top.coveredBy === null) return { ...at, x: top.x, y: top.y, inFrame: origin };
    const { hitRef: _hidden, ...rest } = at;
    return { ...rest, x: top.x, y: top.y, covered: true, overFrame: true, hitTarget: top.coveredBy, hitKind: "plain", inFrame: origin };
  }

  /**
   * The pointer moves to the tab's viewport point (x, y), as trusted CDP input. `inFrame`: the
   * point is in a frame of that origin (the call's frame); the move is done only once that
   * frame's document has the pointer (page/actions.js pointerHere), the move sent again now and
   * then meanwhile. Chrome routes input into an out-of-process frame only after it has placed
   * the frame, and input sent before lands on the enclosing page: if the pointer never arrives,
   * the call answers timeout (a click then presses nothing).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {{x: number, y: number, modifiers?: number, inFrame?: string}} m
   */
  async function moveTo(ctx, tabId, { x, y, modifiers = 0, inFrame }) {
    if (cdp === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "the debugger is not available");
    const move = () => cdp.send(ctx, tabId, "Input.dispatchMouseEvent", { x, y, modifiers, type: "mouseMoved", button: "none", buttons: 0 }, "move the pointer");
    await move();
    if (inFrame === undefined) return;
    for (let waited = 0; ; waited += REACH_POLL_MS) {
      const here = await page(ctx, tabId, "pointerHere", { origin: inFrame });
      if (here.inside === true) return;
      if (waited >= POINTER_REACH_MS) {
        throw new BridgeError(CODE.TIMEOUT, "the pointer did not reach the frame (Chrome had not placed it in the page yet), so nothing was pressed; try again");
      }
      await sleep(REACH_POLL_MS);
      if (waited % NUDGE_MS === 0) await move();
    }
  }

  /**
   * A person's click at the tab's viewport point (x, y): the pointer moves there (moveTo, which
   * in a frame waits until the frame has the pointer), then the button is pressed and released
   * `clickCount` times, as trusted CDP input.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {{x: number, y: number, button?: "left" | "right" | "middle", clickCount?: number, modifiers?: number, inFrame?: string}} c
   */
  async function clickAt(ctx, tabId, { x, y, button = "left", clickCount = 1, modifiers = 0, inFrame }) {
    if (cdp === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "the debugger is not available");
    const mouse = (/** @type {Record<string, unknown>} */ event, /** @type {string} */ what) => cdp.send(ctx, tabId, "Input.dispatchMouseEvent", event, what);
    const base = { x, y, modifiers };
    await moveTo(ctx, tabId, { x, y, modifiers, inFrame });
    for (let n = 1; n <= clickCount; n++) {
      const held = { ...base, button, clickCount: n };
      await mouse({ ...held, type: "mousePressed", buttons: BUTTON_BITS[button] }, "press the mouse button");
      await mouse({ ...held, type: "mouseReleased", buttons: 0 }, "release the mouse button");
    }
  }

  /**
   * A person's drag between two of the tab's viewport points: the pointer moves to `from`, the
   * left button is pressed there, the pointer moves to `to` in `steps` even moves with the button
   * held (so a page's pointermove handlers and Chrome's drag threshold see it travel; Chrome
   * starts a real HTML5 drag from a draggable element, as for a person, since drags are not
   * intercepted), and the button is released at `to`. Trusted CDP input, as clickAt; a start in
   * a frame (`from.inFrame`, as locate answers it) is pressed only once the pointer is there.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {{from: {x: number, y: number, inFrame?: string}, to: {x: number, y: number}, steps: number}} d
   */
  async function dragBetween(ctx, tabId, { from, to, steps }) {
    if (cdp === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "the debugger is not available");
    const mouse = (/** @type {Record<string, unknown>} */ event, /** @type {string} */ what) => cdp.send(ctx, tabId, "Input.dispatchMouseEvent", event, what);
    const held = { button: "left", buttons: BUTTON_BITS.left };
    await moveTo(ctx, tabId, { x: from.x, y: from.y, inFrame: from.inFrame });
    await mouse({ type: "mousePressed", x: from.x, y: from.y, ...held, clickCount: 1 }, "press the mouse button");
    /** @type {unknown} */
    let failed = null;
    try {
      for (let n = 1; n <= steps; n++) {
        const x = from.x + ((to.x - from.x) * n) / steps;
        const y = from.y + ((to.y - from.y) * n) / steps;
        await mouse({ type: "mouseMoved", x, y, ...held }, "move the pointer with the button held");
      }
    } catch (err) {
      failed = err;
    }
    // Never leave the button held down in the person's browser, even when a move failed.
    try {
      await mouse({ type: "mouseReleased", x: to.x, y: to.y, button: "left", buttons: 0, clickCount: 1 }, "release the mouse button");
    } catch (err) {
      if (failed === null) throw err;
    }
    if (failed !== null) throw failed;
  }

  return { locate, moveTo, clickAt, dragBetween, worlds };
}

/**
 * @typedef {object} BlockedWindows
 * @property {() => {url: string} | null} seen the first window the tab tried to open without a
 *   user gesture since the watch began (Chrome's popup blocker stops those, unless the person
 *   allowed pop-ups on the site)
 * @property {Promise<{url: string}>} next settles with that window once it is seen
 * @property {() => void} stop
 */

/**
 * Watch the tab for windows it opens without a user gesture (CDP Page.windowOpen with
 * `userGesture` false; the Page domain is on for every owned tab, worker/debugger.js).
 * @param {import("../worker/debugger.js").DebuggerManager | undefined} cdp
 * @param {number} tabId
 * @returns {BlockedWindows}
 */
export function watchBlockedWindows(cdp, tabId) {
  /** @type {{url: string} | null} */
  let got = null;
  /** @type {(w: {url: string}) => void} */
  let resolve = () => {};
  /** @type {Promise<{url: string}>} */
  const next = new Promise((r) => { resolve = r; });
  const stop = cdp?.listen(tabId, (method, params) => {
    if (method !== "Page.windowOpen" || got !== null || params?.userGesture !== false) return;
    got = { url: typeof params?.url === "string" ? params.url : "" };
    resolve(got);
  }) ?? (() => {});
  return { seen: () => got, next, stop };
}

/**
 * The refusal for a window Chrome's popup blocker stopped.
 * @param {{url: string}} w
 * @param {string} done what the action did ("The click was done")
 */
export function popupBlocked(w, done) {
  const where = w.url !== "" ? ` (${w.url.slice(0, 200)})` : "";
  return new BridgeError(CODE.POPUP_BLOCKED,
    `${done}, but Chrome's pop-up blocker stopped the window the page tried to open${where}: the page opened it without a click of its own `
    + "(from a timer, or a second window for one click). Nothing opened. Click the link or button that opens it directly, or open its address with tab_open");
}

/**
 * Wait (at most POPUP_JOIN_MS) for a window announced without a gesture to join as a tab;
 * when none joins, the popup blocker stopped it: `popup_blocked`. Without a popup watch nothing
 * can tell, and nothing is said.
 * @param {import("../worker/popups.js").PopupWatch | null} opened
 * @param {BlockedWindows} blocked
 * @param {(ms: number) => Promise<void>} sleep
 * @param {string} done
 */
export async function refuseIfBlocked(opened, blocked, sleep, done) {
  const w = blocked.seen();
  if (w === null || opened === null || opened.seen() !== null) return;
  await Promise.race([opened.promise, sleep(POPUP_JOIN_MS)]);
  if (opened.seen() === null) throw popupBlocked(w, done);
}
