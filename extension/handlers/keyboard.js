// handlers/keyboard.js — trusted keyboard input through Chrome's debugger (events the page sees
// as the person's own): page_type
// (CDP Input.insertText into the node that really has focus) and page_keys (keys and chords
// through CDP Input.dispatchKeyEvent, worker/keyboard.js's key table). Thin glue over
// handlers/interact.js's elementTools (ownership, origin gate, page code, the person's
// confirmation) and worker/keyboard.js. It must never type into a password field unless
// policy.passwordFill (the check runs on the focused node, in the page, right before each
// typing key or insertion), never press Enter or Space on a submit or a link without the
// confirmation page_click asks for, never send a key after one that may have left the page, and
// never return what was typed or what a field holds.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { MAX_TYPE_CHARS, activation, argKeys, insertThrough, keyEvents, putsText } from "../worker/keyboard.js";
import { argTarget, confirmName, elementTools } from "./interact.js";
import { needsConfirm } from "./tabs.js";

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: import("./interact.js").InteractBrowserApi,
 *   grace?: import("../worker/grace.js").Grace, docTokens?: import("./interact.js").DocTokens,
 *   now?: () => number, sleep?: (ms: number) => Promise<void>,
 *   cdp: import("../worker/debugger.js").DebuggerManager, mac?: boolean}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function keyboardHandlers(deps) {
  const { cdp, loads } = deps;
  const mac = deps.mac === true;
  const { grace, now, docTokens, open, page, ask, landing } = elementTools(deps);
  /** @param {import("./support.js").Ctx} ctx */
  const passwordFill = (ctx) => ctx.policy.allows("passwordFill");

  /**
   * The page's "focus" op, recording the document's ref token as a snapshot does (the focused
   * node's ref can be used next).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {Record<string, unknown>} a
   */
  async function focus(ctx, tabId, a) {
    const floor = docTokens.get(tabId)?.floor ?? 0;
    const r = await page(ctx, tabId, "focus", { ...a, refFloor: floor });
    if (typeof r.docToken === "string" && Number.isSafeInteger(r.lastRef)) {
      docTokens.set(tabId, { session: ctx.session, token: r.docToken, floor: Math.max(floor, r.lastRef) });
    }
    return { desc: String(r.desc ?? ""), kind: r.kind === "submit" || r.kind === "link" ? r.kind : "plain", url: String(r.url ?? ""), ref: typeof r.ref === "string" ? r.ref : undefined };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageType(args, ctx) {
    const text = args.value;
    if (typeof text !== "string" || text.length === 0 || text.length > MAX_TYPE_CHARS) {
      throw new BridgeError(CODE.BAD_REQUEST, `value must be a non-empty string of at most ${MAX_TYPE_CHARS} characters`);
    }
    const target = argTarget(args, { optional: true });
    const { tabId, origin, docToken } = await open(args, ctx, "page_type", { enabled: true });
    await deps.provenance?.check(args, ctx, "page_type", origin);
    const floor = docTokens.get(tabId)?.floor ?? 0;
    const r = await insertThrough({ cdp, page }, ctx, tabId, { origin, target, docToken, allowPassword: passwordFill(ctx), arm: "insert", refFloor: floor }, text);
    const f = r.focus;
    if (typeof f.docToken === "string" && Number.isSafeInteger(f.lastRef)) {
      docTokens.set(tabId, { session: ctx.session, token: f.docToken, floor: Math.max(floor, f.lastRef) });
    }
    return {
      typed: true, applied: r.applied, length: [...text].length, focused: String(f.desc ?? ""),
      ...(typeof f.ref === "string" ? { ref: f.ref } : {}),
    };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageKeys(args, ctx) {
    const keys = argKeys(args.keys, mac);
    const target = argTarget(args, { optional: true });
    const { tabId, origin, docToken } = await open(args, ctx, "page_keys", { enabled: true });
    const names = keys.map((k) => k.name);
    const shown = names.length > 10 ? `${names.slice(0, 10).join(", ")}, … (${names.length} keys)` : names.join(", ");
    // Keys that spell another site's page content ask first (worker/provenance-gate.js); that answer
    // covers the policy's "press" question for the call (a submit or link key still asks).
    const lineage = await deps.provenance?.check(args, ctx, "page_keys", origin, { value: names.join("\n"), doing: `press ${shown} on ${origin}, typing` });
    await cdp.ensure(ctx, tabId);
    const allowPassword = passwordFill(ctx);
    /** The focused node before key `i` (the first look focuses the target). @param {number} i */
    const look = (i) => focus(ctx, tabId, {
      origin, target: i === 0 ? target : null, docToken, allowPassword,
      guardPassword: putsText(keys[i]), forKey: activation(keys[i]) ?? undefined,
    });
    let at = await look(0);
    const urlBefore = at.url;
    // The policy's "press" confirm covers the whole call, and the first key's submit or link
    // when it says so; a later Enter or Space on one asks on its own, as page_click would.
    let firstAsked = false;
    if (needsConfirm(ctx, "press") && lineage !== "confirmed") {
      const first = activation(keys[0]) !== null && at.kind !== "plain";
      const what = !first ? "" : at.kind === "submit" ? " The first key submits a form." : " The first key follows a link.";
      await ask(ctx, { tabId, origin, tool: "page_keys", detail: `Press ${shown} on ${at.desc} on ${origin}?${what}` });
      firstAsked = first;
    }
    const watch = loads.watch(tabId);
    try {
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        if (i > 0) at = await look(i);
        if (activation(k) !== null && at.kind !== "plain") {
          if (i < keys.length - 1) {
            throw new BridgeError(CODE.BAD_REQUEST, `${k.name} on ${at.desc} ${at.kind === "submit" ? "submits a form" : "follows a link"}: end the keys there and send the rest in another call (${i} of ${keys.length} keys were pressed)`);
          }
          const kind = confirmName(at.kind);
          if ((firstAsked && i === 0) || (needsConfirm(ctx, kind) && !grace.covered(tabId, origin, "page_keys", now()))) {
            if (!(firstAsked && i === 0)) {
              const what = at.kind === "submit" ? "This submits a form." : "This follows a link to another page.";
              await ask(ctx, { tabId, origin, tool: "page_keys", detail: `Press ${k.name} on ${at.desc} on ${origin}? ${what}` });
            }
            // The person took their time: look again, and refuse if what has focus changed.
            const again = await look(i);
            if (again.kind !== at.kind || again.desc !== at.desc) throw new BridgeError(CODE.POLICY_DENIED, "the focused element changed after it was confirmed; try again");
          }
        }
        for (const ev of keyEvents(k)) await cdp.send(ctx, tabId, "Input.dispatchKeyEvent", ev, `press ${k.name}`);
      }
      // The page's guard (armed by each typing key's look) cancelled a key that a page listener
      // redirected into a password field.
      if (keys.some(putsText)) {
        const r = await page(ctx, tabId, "inputResult", { origin }).catch(() => null);
        if (r?.moved === true) throw new BridgeError(CODE.POLICY_DENIED, "the page moved the focus while a key was typed, so it may have gone into another field; look at the page again");
        if (r?.blocked === true) throw new BridgeError(CODE.POLICY_DENIED, "a key was cancelled because it would have typed into a password field (the policy's passwordFill is off); look at the page again");
      }
    } catch (err) {
      watch.cancel();
      throw err;
    }
    const { navigated, after } = await landing(ctx, tabId, origin, watch, urlBefore);
    const url = typeof after?.url === "string" && after.url !== "" ? after.url : urlBefore;
    return { pressed: keys.length, keys: names, navigated, url };
  }

  return [
    ["page_type", pageType],
    ["page_keys", pageKeys],
  ];
}
