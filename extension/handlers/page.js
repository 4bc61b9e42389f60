// handlers/page.js — the page actions: page_navigate and page_text (of the page, of one of its
// frames: `frame`, gated on its own as handlers/frames.js says, or of one element: `ref`, through
// handlers/interact.js's elementTools like every element tool). Thin glue: browser calls are
// injected, the origin gate, redaction and paging come from lib/. It must never touch the chrome
// global, never act on a tab the session does not own, never read a page whose current origin
// is not approved, and never return card-like numbers or form field values.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { probePage, readPageText } from "../worker/page-text.js";
import { maskText } from "../worker/mask.js";
import { truncate } from "../worker/text.js";
import { isPlainObject } from "../shared/wire.js";
import { gatedFrame } from "./frames.js";
import { argTarget, elementTools } from "./interact.js";
import { navigateTab } from "./nav.js";
import { argInt, argTabId, argUrl, ownedTab, sameOrigin, step } from "./support.js";

/** Largest page_text slice a caller may ask for (bigger replies are chunked on hop 3). */
export const MAX_TEXT_CHARS = 5_000_000;
/** How long a page_text read serves the continuing slices (offset > 0) of the same document. */
export const TEXT_READ_TTL_MS = 60_000;
/** How many tabs' reads are kept at once (each up to the page's whole text, masked). */
const TEXT_READS_KEPT = 2;

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: import("./interact.js").InteractBrowserApi,
 *   docTokens?: import("./interact.js").DocTokens}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function pageHandlers(deps) {
  const { browser, ensureOrigin } = deps;
  const elements = elementTools(deps);

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageNavigate(args, ctx) {
    const tabId = argTabId(args);
    const url = argUrl(args);
    const before = await ownedTab(deps, ctx, tabId);
    return navigateTab(deps, ctx, { tabId, url, before, tool: "page_navigate" });
  }

  /**
   * One read of a page's text serves all its slices: "tabId:frameId" -> the masked text of the last read,
   * for the session and document it came from. Offset 0 always reads afresh; a later offset is
   * sliced from the kept read while the tab still shows that document (a cheap probe, its
   * documentId) and the read is younger than TEXT_READ_TTL_MS — so the slices of one long text
   * fit together, and a 10 MB page is read and masked once, not once per slice.
   * @type {Map<string, {session: string, documentId: string, href: string, docOrigin: string, text: string, at: number}>}
   */
  const reads = new Map();
  /** @param {Record<string, unknown>} read an in-page read's `{href, origin}` */
  const docOriginOf = (read) => (typeof read.origin === "string" ? read.origin : "");
  const now = deps.now ?? (() => Date.now());

  /**
   * @param {number} tabId
   * @param {import("./support.js").Ctx} ctx
   * @param {() => unknown} func
   * @param {string} what
   * @param {number} frameId 0: the top frame
   */
  async function inject(tabId, ctx, func, what, frameId) {
    try {
      const run = frameId === 0 ? browser.executeScript(tabId, func) : browser.executeScriptArgs(tabId, func, [], "ISOLATED", frameId);
      const results = await step(ctx, what, run);
      const first = /** @type {{result?: unknown, documentId?: unknown} | undefined} */ (Array.isArray(results) ? results[0] : undefined);
      return { result: first?.result, documentId: typeof first?.documentId === "string" ? first.documentId : "" };
    } catch (err) {
      if (err instanceof BridgeError) throw err; // the step's timeout
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this page's text");
    }
  }

  /**
   * The kept read for a continuing slice, or null when the page must be read again.
   * @param {number} tabId
   * @param {number} frameId
   * @param {import("./support.js").Ctx} ctx
   * @param {number} offset
   */
  async function keptRead(tabId, frameId, ctx, offset) {
    const kept = reads.get(`${tabId}:${frameId}`);
    if (offset === 0 || kept === undefined || kept.session !== ctx.session || now() - kept.at > TEXT_READ_TTL_MS) return null;
    const probe = await inject(tabId, ctx, probePage, "look at the page", frameId);
    if (probe.documentId === "" || probe.documentId !== kept.documentId) return null;
    if (!isPlainObject(probe.result) || probe.result.href !== kept.href || docOriginOf(probe.result) !== kept.docOrigin) return null;
    return kept;
  }

  /**
   * page_text of one element (a ref from the tab's latest snapshot): its rendered text, masked
   * as page text, read afresh for every slice.
   * @param {Record<string, unknown>} args
   * @param {import("./support.js").Ctx} ctx
   * @param {number} offset
   * @param {number} maxChars
   */
  async function elementText(args, ctx, offset, maxChars) {
    const target = argTarget({ ref: args.ref });
    const { tabId, tab, origin, docToken } = await elements.open(args, ctx, "page_text");
    const r = await elements.page(ctx, tabId, "text", { origin, target, docToken });
    if (typeof r.text !== "string" || typeof r.url !== "string") throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this element's text");
    if (originOf(r.url) !== origin) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the page left the approved origin");
    return { ...truncate(maskText(r.text), offset, maxChars), url: r.url, title: typeof tab?.title === "string" ? tab.title : "" };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageText(args, ctx) {
    const tabId = argTabId(args);
    const offset = argInt(args, "offset", 0, 0, Number.MAX_SAFE_INTEGER);
    const maxChars = argInt(args, "maxChars", 100_000, 1, MAX_TEXT_CHARS);
    if (args.ref !== undefined && args.ref !== null) return elementText(args, ctx, offset, maxChars);
    const { tab, frameId, origin } = await gatedFrame(/** @type {any} */ (deps), args, ctx, "page_text");
    const key = `${tabId}:${frameId}`;
    let read = await keptRead(tabId, frameId, ctx, offset);
    if (read === null) {
      reads.delete(key);
      const fresh = await inject(tabId, ctx, readPageText, "read the page's text", frameId);
      const got = fresh.result;
      if (!isPlainObject(got) || typeof got.text !== "string") {
        throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this page's text");
      }
      read = { session: ctx.session, documentId: fresh.documentId, href: String(got.href), docOrigin: docOriginOf(got), text: maskText(got.text), at: now() };
    }
    // The page may have navigated between the gate and the read: refuse text from elsewhere.
    sameOrigin({ href: read.href, origin: read.docOrigin }, origin);
    const slice = truncate(read.text, offset, maxChars);
    reads.delete(key);
    if (slice.nextOffset !== null && read.documentId !== "") {
      reads.set(key, read); // more slices to come; the last one served forgets the read
      while (reads.size > TEXT_READS_KEPT) reads.delete(reads.keys().next().value ?? key);
    }
    return {
      ...slice,
      url: read.href,
      title: typeof tab?.title === "string" ? tab.title : "",
    };
  }

  return [
    ["page_navigate", pageNavigate],
    ["page_text", pageText],
  ];
}
