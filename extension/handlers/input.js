// handlers/input.js — the tools that act through Chrome's debugger as a person would: page_mouse
// (a trusted click: CDP Input.dispatchMouseEvent, so `event.isTrusted` is true), page_drag (press,
// move in steps, release: HTML5 drops and pointer-event drags; both ends gated and checked as clicks), page_hover (the
// real pointer moves, so CSS :hover applies) and page_dialog (answer the JavaScript dialog that
// blocks a tab, arm a one-shot answer for the next one, list the recent ones). Thin glue over handlers/interact.js's elementTools (ownership, origin gate, page
// code, the person's confirmation), handlers/pointer.js (where the pointer lands, with `frame` placed
// in the tab's viewport, and the click itself, as page_click makes it), worker/debugger.js (every
// CDP command bounded by the call's deadline) and
// worker/dialogs.js. It must never touch the chrome global, never click a point another element
// covers unless the call says `force` (and never one an enclosing page covers over a frame, even
// then), never click something a submit or a link click
// would need the person for without asking them (as page_click does), never accept a confirm()
// or prompt() without them where policy confirms submits (an armed accept asks them when it is
// armed), never arm anything unless the signed policy allows arming, and never return a dialog's
// text unmasked or the text typed into a prompt.

import { BridgeError } from "../shared/bridge-error.js";
import { refuseUnlessAllowed } from "../shared/confirm-window.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { isPlainObject } from "../shared/wire.js";
import { argTarget, confirmName, elementTools, rememberSnapshot } from "./interact.js";
import { createPointer } from "./pointer.js";
import { argTabId, ownedTab } from "./support.js";
import { needsConfirm } from "./tabs.js";

/** CDP Input modifier bits (Input.dispatchMouseEvent `modifiers`). */
export const MODIFIER_BITS = Object.freeze({ Alt: 1, Control: 2, Meta: 4, Shift: 8 });
/** Longest coordinate accepted (CSS pixels). */
const MAX_COORD = 100_000;
/** page_drag's pointer moves between press and release when the call gives none. */
export const DRAG_STEPS = 10;
/** Elements whose box shows another document: a drop there lands in a frame nobody gated. */
const EMBEDS = new Set(["iframe", "frame", "object", "embed", "fencedframe", "portal"]);

/**
 * The modifier bitmask for `names` ("Alt", "Control", "Meta", "Shift", and "Mod": Meta on macOS,
 * Control elsewhere). The list's length and each name's enum are the wire schema's
 * (worker/dispatch.js checks it before any handler runs).
 * @param {unknown} names
 * @param {boolean} mac
 */
export function argModifiers(names, mac) {
  if (!Array.isArray(names)) return 0;
  let bits = 0;
  for (const n of names) {
    const name = n === "Mod" ? (mac ? "Meta" : "Control") : n;
    if (typeof name === "string" && Object.hasOwn(MODIFIER_BITS, name)) bits |= MODIFIER_BITS[/** @type {keyof typeof MODIFIER_BITS} */ (name)];
  }
  return bits;
}

/**
 * Where the pointer goes: exactly one element (ref/selector/text/xpath) or a viewport point x, y.
 * @param {Record<string, unknown>} args
 * @returns {{target: ReturnType<typeof argTarget>, x?: number, y?: number}}
 */
export function argPoint(args) {
  const target = argTarget(args, { optional: true });
  const hasX = args.x !== undefined && args.x !== null;
  const hasY = args.y !== undefined && args.y !== null;
  if (target !== null) {
    if (hasX || hasY) throw new BridgeError(CODE.BAD_REQUEST, "give an element or x and y, not both");
    return { target };
  }
  const ok = (/** @type {unknown} */ v) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= MAX_COORD;
  if (!ok(args.x) || !ok(args.y)) throw new BridgeError(CODE.BAD_REQUEST, "give exactly one of ref, selector, text, xpath, or viewport x and y (CSS pixels)");
  return { target: null, x: /** @type {number} */ (args.x), y: /** @type {number} */ (args.y) };
}

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: import("./interact.js").InteractBrowserApi,
 *   grace?: import("../worker/grace.js").Grace, docTokens?: import("./interact.js").DocTokens,
 *   now?: () => number, sleep?: (ms: number) => Promise<void>,
 *   cdp: import("../worker/debugger.js").DebuggerManager, dialogs: import("../worker/dialogs.js").Dialogs, mac?: boolean}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function inputHandlers(deps) {
  const { cdp, dialogs, loads, ensureOrigin, confirm } = deps;
  const mac = deps.mac === true;
  const { docTokens, open, page, ask, landing } = elementTools(deps);
  const pointer = createPointer({
    cdp, sleep: deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))), page, docTokens,
    remember: (tabId, session, frameId, token, floor) => rememberSnapshot(docTokens, tabId, session, frameId, token, floor),
  });
  const { locate } = pointer;

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageMouse(args, ctx) {
    const point = argPoint(args);
    // button's and modifiers' enums, clickCount's range and force are the wire schema's (worker/dispatch.js).
    const button = args.button === "right" || args.button === "middle" ? args.button : "left";
    const clickCount = args.clickCount === 2 || args.clickCount === 3 ? args.clickCount : 1;
    const modifiers = argModifiers(args.modifiers, mac);
    const force = args.force === true;
    const { tabId, origin, docToken, frameId } = await open(args, ctx, "page_mouse", {});
    await cdp.ensure(ctx, tabId);
    let at = await locate(ctx, tabId, frameId, origin, docToken, point);
    const report = () => ({
      x: at.x, y: at.y, covered: at.covered, hitTarget: at.hitTarget, ...(at.hitRef !== undefined ? { hitRef: at.hitRef } : {}),
    });
    // Over a frame, an element of the enclosing page is not the frame's to click, even with force
    // (what it would do is not known here, so nobody could be asked about it).
    if ((at.covered && !force) || at.overFrame) return { clicked: false, navigated: false, url: at.url, ...report() };
    // What receives the click decides what it needs: a submit or a link asks, as page_click does.
    const kind = at.kind;
    if (kind !== "plain" && needsConfirm(ctx, confirmName(kind))) {
      const what = kind === "submit" ? "This submits a form." : "This follows a link to another page.";
      const how = clickCount > 1 ? ` (${clickCount} clicks, ${button} button)` : button !== "left" ? ` (${button} button)` : "";
      await ask(ctx, { tabId, origin, tool: "page_mouse", detail: `Click ${at.covered ? at.hitTarget : at.desc} on ${origin}${how}? ${what}` });
      // The person took their time: look again, and refuse if what is there changed.
      const saved = docTokens.get(tabId);
      const token = (frameId === 0 ? saved?.token : saved?.frames?.get(frameId)) ?? null;
      const again = await locate(ctx, tabId, frameId, origin, token, point);
      if (again.kind !== kind || again.covered !== at.covered || again.overFrame || Math.abs(again.x - at.x) > 1 || Math.abs(again.y - at.y) > 1) {
        throw new BridgeError(CODE.POLICY_DENIED, "the element changed after it was confirmed; try again");
      }
      at = again;
    }
    const watch = loads.watch(tabId);
    try {
      await pointer.clickAt(ctx, tabId, { x: at.x, y: at.y, button, clickCount, modifiers, inFrame: at.inFrame });
    } catch (err) {
      watch.cancel();
      throw err;
    }
    const { navigated, after } = await landing(ctx, tabId, origin, watch, at.url);
    const url = typeof after?.url === "string" && after.url !== "" ? after.url : at.url;
    return { clicked: true, navigated, url, ...report() };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageHover(args, ctx) {
    const point = argPoint(args);
    const { tabId, origin, docToken, frameId } = await open(args, ctx, "page_hover", {});
    await cdp.ensure(ctx, tabId);
    const at = await locate(ctx, tabId, frameId, origin, docToken, point);
    await pointer.moveTo(ctx, tabId, { x: at.x, y: at.y, inFrame: at.inFrame });
    return {
      hovered: true, x: at.x, y: at.y, covered: at.covered, hitTarget: at.hitTarget,
      ...(at.hitRef !== undefined ? { hitRef: at.hitRef } : {}),
    };
  }

  /**
   * One end of a drag: its frame gated (ownership, the tab's and the frame's origin, as for any
   * element call), where the pointer goes there (pointer.locate, in the tab's viewport), refused
   * when covered (even by an enclosing page over the frame) or when what is at the point shows an
   * embedded document (its site would receive the input ungated: name that frame instead).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {number | undefined} frame
   * @param {{target: ReturnType<typeof argTarget>, x?: number, y?: number}} point
   * @param {"start" | "end"} which
   * @param {Record<string, unknown>} given the arguments naming this end (the call's, or its `to`)
   * @param {unknown} timeoutMs the call's wait for an element end (handlers/ready.js)
   */
  async function dragEnd(ctx, tabId, frame, point, which, given, timeoutMs) {
    // An end named by an element is waited on until it is there, shown and still (open's checks).
    const asked = { ...(point.target !== null ? given : {}), tabId, frame, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
    const { origin, docToken, frameId } = await open(asked, ctx, "page_drag", {});
    const at = await locate(ctx, tabId, frameId, origin, docToken, point);
    const named = point.target !== null ? at.desc : `the point (${at.x}, ${at.y})`;
    if (at.covered || at.overFrame) {
      throw new BridgeError(CODE.ELEMENT_COVERED,
        `the drag's ${which} ${named} is covered by ${at.hitTarget}, so nothing was dragged: dismiss or scroll away what covers it, then drag again`);
    }
    if (at.hitRef !== undefined) {
      const saved = docTokens.get(tabId);
      const token = (frameId === 0 ? saved?.token : saved?.frames?.get(frameId)) ?? null;
      const d = await page(ctx, tabId, "describe", { origin, target: { ref: at.hitRef, index: 0 }, docToken: token });
      if (EMBEDS.has(String(d.tag))) {
        throw new BridgeError(CODE.BAD_REQUEST,
          `the drag's ${which} is over an embedded frame (${at.hitTarget}), so nothing was dragged: give its frameId from page_frames as ${which === "start" ? "frame" : "to.frame"}, so its site is checked`);
      }
    }
    return { ...at, origin, frameId, named };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageDrag(args, ctx) {
    const start = argPoint(args);
    const to = isPlainObject(args.to) ? args.to : null;
    if (to === null) throw new BridgeError(CODE.BAD_REQUEST, "give to: the element or point to drop on");
    const end = argPoint(to);
    // steps' range and the frames' types are the wire schema's (worker/dispatch.js).
    const steps = Number.isSafeInteger(args.steps) ? /** @type {number} */ (args.steps) : DRAG_STEPS;
    const tabId = argTabId(args);
    const fromFrame = Number.isSafeInteger(args.frame) ? /** @type {number} */ (args.frame) : undefined;
    const toFrame = Number.isSafeInteger(to.frame) ? /** @type {number} */ (to.frame) : fromFrame;
    const both = async () => {
      // The end first, then the start: the call's frame (for landing) is the start's.
      const b = await dragEnd(ctx, tabId, toFrame, end, "end", to, args.timeoutMs);
      const a = await dragEnd(ctx, tabId, fromFrame, start, "start", args, args.timeoutMs);
      return { a, b };
    };
    await ownedTab(deps, ctx, tabId);
    await cdp.ensure(ctx, tabId);
    let { a, b } = await both();
    // What is pressed or released on decides what it needs: a submit button or a link at either
    // end asks, as page_click does (a link dragged and dropped can open its address; a release
    // over a submit button can click it), naming both ends.
    const kind = [a.kind, b.kind].find((k) => k === "submit") ?? [a.kind, b.kind].find((k) => k === "link") ?? "plain";
    if (kind !== "plain" && needsConfirm(ctx, confirmName(kind))) {
      const what = kind === "submit" ? "A submit button is at one end: this may submit a form." : "A link is at one end: this may follow it.";
      const there = b.origin === a.origin ? "" : ` on ${b.origin}`;
      await ask(ctx, { tabId, origin: a.origin, tool: "page_drag", detail: `Drag ${a.named} on ${a.origin} to ${b.named}${there}? ${what}` });
      // The person took their time: look again, and refuse if what is there changed.
      const again = await both();
      const moved = (/** @type {typeof a} */ p, /** @type {typeof a} */ q) => p.kind !== q.kind || Math.abs(p.x - q.x) > 1 || Math.abs(p.y - q.y) > 1;
      if (moved(again.a, a) || moved(again.b, b)) throw new BridgeError(CODE.POLICY_DENIED, "what is at the drag's ends changed after it was confirmed; try again");
      ({ a, b } = again);
    }
    const watch = loads.watch(tabId);
    try {
      await pointer.dragBetween(ctx, tabId, { from: a, to: b, steps });
    } catch (err) {
      watch.cancel();
      throw err;
    }
    const { navigated, after } = await landing(ctx, tabId, a.origin, watch, a.url);
    const url = typeof after?.url === "string" && after.url !== "" ? after.url : a.url;
    const report = (/** @type {typeof a} */ p, /** @type {boolean} */ named) => ({
      x: p.x, y: p.y, covered: p.covered, hitTarget: p.hitTarget, ...(p.hitRef !== undefined ? { hitRef: p.hitRef } : {}),
      ...(named ? { element: p.desc } : {}), frame: p.frameId,
    });
    return { dragged: true, navigated, url, start: report(a, start.target !== null), end: report(b, end.target !== null) };
  }

  /**
   * The tab's recent dialogs and its arm as they may be shown: the text of a dialog from a site
   * the policy does not approve is withheld; an armed prompt answer is never shown.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   */
  function dialogState(ctx, tabId) {
    const recent = dialogs.recent(tabId).map((e) => (ctx.policy.approves(e.origin) ? e : { ...e, message: "" }));
    const arm = dialogs.armed(tabId);
    return { armed: arm === null ? null : { answer: arm.accept ? "accept" : "dismiss", origin: arm.origin }, recent };
  }

  /**
   * Arm a one-shot answer for the next dialog this document opens (policy dialogArming), or
   * clear it ("off", always free).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {"accept" | "dismiss" | "off"} how
   * @param {string | undefined} promptText
   * @param {Record<string, unknown>} args the call's arguments (their `provenance`)
   */
  async function arm(ctx, tabId, how, promptText, args) {
    const tab = await ownedTab(deps, ctx, tabId);
    if (how === "off") {
      dialogs.arm(tabId, null);
      return { handled: false, ...dialogState(ctx, tabId) };
    }
    const origin = await ensureOrigin(tab?.url, ctx, "page_dialog");
    if (!ctx.policy.allows("dialogArming")) {
      throw new BridgeError(CODE.POLICY_DENIED,
        "arming an answer to the next dialog is off (policy dialogArming): answer a dialog with page_dialog action once calls say dialog_open, "
        + "or ask the person to turn arming on (`tabwarden policy set dialogArming=true`, or the options page; it needs their proof)");
    }
    if (dialogs.blocking(tabId) !== null) throw new BridgeError(CODE.BAD_REQUEST, `a dialog is open on tab ${tabId} now: answer it with action "accept" or "dismiss"`);
    const accept = how === "accept";
    const before = dialogs.navigations(tabId);
    // A prompt answer carrying another site's page content asks first (worker/provenance-gate.js);
    // that answer covers the submit question below: one window per call.
    const lineage = typeof promptText === "string"
      ? await deps.provenance?.check(args, ctx, "page_dialog", origin, { value: promptText, doing: `press OK on the next dialog ${origin} opens on this page, answering a prompt() with` })
      : null;
    // OK on a confirm()/prompt() is confirmed like a submit: armed, nobody sees the dialog before
    // it is answered, so the person is asked now, for whatever this page asks next. Leaving
    // (beforeunload) lets through the navigation the agent asks for, which passes the origin
    // gate itself; an alert has only OK.
    if (accept && (needsConfirm(ctx, "submit") || lineage === "confirmed")) {
      if (lineage !== "confirmed") {
        const typed = typeof promptText === "string" ? `, answering a prompt() with ${promptText.length} typed characters` : "";
        const decision = await confirm({
          kind: "action", tool: "page_dialog", origin,
          detail: `Press OK on the next dialog (confirm(), prompt(), alert or "leave this page?") that ${origin} opens on this page${typed}, without showing it to you first? It applies once, and ends when the page navigates.`,
          timeoutMs: ctx.policy.confirmTimeoutMs,
        });
        refuseUnlessAllowed(decision, "arming the dialog answer");
      }
      const now = await ownedTab(deps, ctx, tabId);
      if (dialogs.navigations(tabId) !== before || originOf(now?.url) !== origin) {
        throw new BridgeError(CODE.BAD_REQUEST, "the page navigated while you were asked, so nothing was armed; look at the page and arm again");
      }
    }
    dialogs.setArming(tabId, true);
    dialogs.arm(tabId, { accept, promptText: accept && typeof promptText === "string" ? promptText : null, origin });
    return { handled: false, ...dialogState(ctx, tabId) };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageDialog(args, ctx) {
    const tabId = argTabId(args);
    // action's and arm's enums and promptText's type and length are the wire schema's
    // (worker/dispatch.js); which of them go together, and with the dialog open, is checked here.
    const answer = args.action === "accept" || args.action === "dismiss" ? args.action : null;
    const armed = args.arm === "accept" || args.arm === "dismiss" || args.arm === "off" ? args.arm : null;
    if (answer !== null && armed !== null) throw new BridgeError(CODE.BAD_REQUEST, "give action (answer the open dialog) or arm (answer the next one), not both");
    const typedText = typeof args.promptText === "string" ? args.promptText : undefined;
    if (typedText !== undefined && (answer ?? armed) !== "accept") throw new BridgeError(CODE.BAD_REQUEST, 'promptText goes with "accept" only');
    if (armed !== null) return arm(ctx, tabId, armed, typedText, args);
    const tab = await ownedTab(deps, ctx, tabId);
    const origin = await ensureOrigin(tab?.url, ctx, "page_dialog");
    if (answer === null) return { handled: false, ...dialogState(ctx, tabId) };
    const d = dialogs.blocking(tabId);
    if (d === null) throw new BridgeError(CODE.BAD_REQUEST, `no JavaScript dialog is open on tab ${tabId} (it may have been answered already)`);
    if (typedText !== undefined && d.type !== "prompt") throw new BridgeError(CODE.BAD_REQUEST, `promptText is only for a prompt() dialog; this one is ${d.type}()`);
    const accept = answer === "accept";
    // A prompt answer carrying another site's page content asks first, against the dialog's own
    // origin (worker/provenance-gate.js); that answer covers the submit question below.
    const lineage = typedText !== undefined
      ? await deps.provenance?.check(args, ctx, "page_dialog", originOf(d.url) ?? origin,
        { value: typedText, doing: `press OK on the prompt() ${JSON.stringify(String(d.message ?? "").slice(0, 100))} of ${origin}, answering it with` })
      : null;
    // OK on a confirm() or prompt() is the second half of an action the page asks about ("Delete
    // this?"): confirmed like a submit. Leaving a page (beforeunload) is gated like navigation
    // (the navigation it lets through passed the origin gate); an alert has only OK; saying no is free.
    if (accept && (d.type === "confirm" || d.type === "prompt") && (needsConfirm(ctx, "submit") || lineage === "confirmed")) {
      if (lineage !== "confirmed") {
        const typed = typedText !== undefined ? ` and answer it with ${typedText.length} typed characters` : "";
        const decision = await confirm({
          kind: "action", tool: "page_dialog", origin, client: ctx.client,
          detail: `Press OK on the ${d.type}() dialog of ${origin}: ${JSON.stringify(d.message)}${typed}?`,
          timeoutMs: ctx.policy.confirmTimeoutMs,
        });
        refuseUnlessAllowed(decision, "answering the dialog");
      }
      if (deps.ownership.owner(tabId) !== ctx.session) throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
      if (dialogs.blocking(tabId) !== d) throw new BridgeError(CODE.BAD_REQUEST, "the dialog was answered or replaced while you were asked; look at the page again");
    }
    /** @type {Record<string, unknown>} */
    const params = { accept };
    if (accept && typedText !== undefined) params.promptText = typedText;
    dialogs.answering(tabId, { answered: accept ? "accepted" : "dismissed", by: "agent" });
    try {
      await cdp.send(ctx, tabId, "Page.handleJavaScriptDialog", params, "answer the dialog");
    } catch (err) {
      dialogs.answerFailed(tabId);
      throw err;
    }
    dialogs.closed(tabId);
    // The text of a dialog from a frame on a site the policy does not approve is withheld.
    const shown = ctx.policy.approves(originOf(d.url));
    return { handled: true, type: d.type, accepted: accept, message: shown ? d.message : "", ...dialogState(ctx, tabId) };
  }

  return [
    ["page_hover", pageHover],
    ["page_mouse", pageMouse],
    ["page_drag", pageDrag],
    ["page_dialog", pageDialog],
  ];
}

/** Whether the worker runs on macOS (Mod = Meta there). @param {unknown} nav navigator */
export function isMac(nav) {
  const n = /** @type {any} */ (nav);
  const platform = typeof n?.userAgentData?.platform === "string" && n.userAgentData.platform !== "" ? n.userAgentData.platform : n?.platform;
  return typeof platform === "string" && /^mac/i.test(platform);
}
