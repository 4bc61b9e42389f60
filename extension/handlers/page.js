// handlers/page.js — the page actions: page_navigate and page_text. Thin glue: browser calls are
// injected, the origin gate, redaction and paging come from lib/. It must never touch the chrome
// global, never act on a tab the session does not own, never read a page whose current origin
// is not approved, and never return card-like numbers or form field values.

import { BridgeError } from "../lib/bridge-error.js";
import { CODE } from "../lib/error-codes.js";
import { isApproved, originOf } from "../lib/origin.js";
import { readPageText } from "../lib/page-text.js";
import { maskCards } from "../lib/redact.js";
import { truncate } from "../lib/text.js";
import { isPlainObject } from "../lib/wire.js";
import { argInt, argTabId, argUrl, ownedTab, settledTab, step } from "./support.js";

/** Largest page_text slice a caller may ask for (bigger replies are chunked on hop 3). */
export const MAX_TEXT_CHARS = 5_000_000;

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps} deps
 * @returns {Array<[string, import("../lib/dispatch.js").Handler]>}
 */
export function pageHandlers(deps) {
  const { browser, loads, ensureOrigin } = deps;

  /** @type {import("../lib/dispatch.js").Handler} */
  async function pageNavigate(args, ctx) {
    const tabId = argTabId(args);
    const url = argUrl(args);
    const before = await ownedTab(deps, ctx, tabId);
    const origin = await ensureOrigin(url, ctx, "page_navigate");
    const watch = loads.watch(tabId);
    try {
      await browser.updateTab(tabId, { url });
    } catch {
      watch.cancel();
      throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
    }
    const tab = await settledTab(deps, tabId, watch);
    const approved = isPlainObject(ctx.policy) ? ctx.policy.origins : undefined;
    for (const where of [tab?.url, tab?.pendingUrl]) {
      if (typeof where !== "string" || where === "") continue;
      const o = originOf(where);
      if (o !== origin && !isApproved(o, approved)) {
        throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "redirected to an unapproved origin");
      }
    }
    // The tab stayed where it was (e.g. a 204 answer, a download, or another navigation won):
    // say so rather than report the old page as the new one.
    if (typeof before?.url === "string" && before.url !== "" && tab?.url === before.url
        && new URL(url).href !== before.url && !tab?.pendingUrl) {
      throw new BridgeError(CODE.NAVIGATION_CANCELLED, `the tab stayed on ${before.url}`);
    }
    return { url: typeof tab?.url === "string" ? tab.url : "", title: typeof tab?.title === "string" ? tab.title : "" };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function pageText(args, ctx) {
    const tabId = argTabId(args);
    const offset = argInt(args, "offset", 0, 0, Number.MAX_SAFE_INTEGER);
    const maxChars = argInt(args, "maxChars", 100_000, 1, MAX_TEXT_CHARS);
    const tab = await ownedTab(deps, ctx, tabId);
    const origin = await ensureOrigin(tab?.url, ctx, "page_text");
    let read;
    try {
      const results = await step(ctx, "read the page's text", browser.executeScript(tabId, readPageText));
      read = Array.isArray(results) ? results[0]?.result : undefined;
    } catch (err) {
      if (err instanceof BridgeError) throw err; // the step's timeout
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this page's text");
    }
    if (!isPlainObject(read) || typeof read.text !== "string") {
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this page's text");
    }
    // The page may have navigated between the gate and the read: refuse text from elsewhere.
    if (originOf(read.href) !== origin) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the page left the approved origin");
    const slice = truncate(maskCards(read.text), offset, maxChars);
    return {
      ...slice,
      url: String(read.href),
      title: typeof tab?.title === "string" ? tab.title : "",
    };
  }

  return [
    ["page_navigate", pageNavigate],
    ["page_text", pageText],
  ];
}
