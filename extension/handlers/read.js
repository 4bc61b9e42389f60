// handlers/read.js — the reading tools and the two risky ones: page_screenshot, cookie_get,
// storage_get, page_markdown, page_scrape, and (handlers/eval-upload.js, through Chrome's
// debugger) page_eval and page_upload. Thin glue: browser calls
// are injected, the origin gate, masking, redaction and paging come from lib/. It must never
// touch the chrome global, never act on a tab the session does not own, never return a cookie or
// storage value unmasked, a card-like number, a password field's value, or content read from
// another origin than the gated one, and never run page_eval / page_upload unless the signed
// policy enables them AND the person allowed that very call in the confirm window (with policy
// presenceConfirm: a tap on their security key that the host verified, for that very code/file).

import { BridgeError } from "../shared/bridge-error.js";
import { FULL_PAGE_MAX, imageSize } from "../shared/screenshot.js";
import { MAX_RETURNED_BASE64 } from "../worker/chunking.js";
import { CODE } from "../shared/error-codes.js";
import { readPageBlocks, renderMarkdown } from "../worker/markdown.js";
import { maskHref, maskText, maskValue } from "../worker/mask.js";
import { maskCards } from "../worker/redact.js";
import { truncate } from "../worker/text.js";
import { isPlainObject } from "../shared/wire.js";
import { elementShots } from "./element-shot.js";
import { evalUploadHandlers } from "./eval-upload.js";
import { gatedFrame } from "./frames.js";
import { argTarget } from "./interact.js";
import { MAX_TEXT_CHARS } from "./page.js";
import { argInt, gatedTab as gatedTabOf, ownedTab, sameOrigin, step } from "./support.js";

/**
 * The browser calls these handlers use beyond support.js's BrowserApi.
 * @typedef {object} ReadBrowserApi
 * @property {(tabId: number, props: {active: boolean}) => Promise<any>} updateTab
 * @property {(tabId: number, opts: ReturnType<typeof screenshotOptions>) =>
 *   Promise<{data: string}>} capturePage through the debugger (shared/screenshot.js's clip)
 * @property {(url: string) => Promise<any[]>} cookiesForUrl
 * @property {(tabId: number, func: (...a: any[]) => unknown, args: unknown[], world?: "ISOLATED" | "MAIN", frameId?: number) =>
 *   Promise<Array<{result?: unknown}>>} executeScriptArgs (in frame `frameId`: page_scrape with frame)
 * @property {import("./frames.js").FramesBrowserApi["getAllFrames"]} [getAllFrames] (page_markdown, page_scrape with frame)
 */

/** Most items page_scrape and storage_get return. */
export const MAX_ITEMS = 1000;
/** Longest text of one scraped element. */
export const MAX_ITEM_TEXT = 10_000;

// ---------------------------------------------------------------- pure helpers

/**
 * The decoded length of a base64 string, or -1 when it is not base64.
 * @param {unknown} data
 */
export function base64Bytes(data) {
  if (typeof data !== "string" || data.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data)) return -1;
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return (data.length / 4) * 3 - pad;
}

/**
 * page_screenshot's options: fullPage, format png|jpeg, quality (jpeg only, 1-100), maxWidth
 * (16-16384) and region {x, y, width, height} in page CSS pixels (not with fullPage), or an
 * element (ref, selector, text, xpath: handlers/element-shot.js measures its box). Each
 * field's type, enum, range and the region's shape are the wire schema's (worker/dispatch.js
 * checks it before any handler runs); which fields go together is checked here.
 * @param {Record<string, unknown>} args
 * @returns {{fullPage: boolean, format: "png" | "jpeg", quality?: number, maxWidth?: number,
 *   region?: {x: number, y: number, width: number, height: number},
 *   element?: {x: number, y: number, width: number, height: number}}}
 */
export function screenshotOptions(args) {
  const fullPage = args.fullPage === true;
  const format = args.format === "jpeg" ? "jpeg" : "png";
  /** @type {ReturnType<typeof screenshotOptions>} */
  const opts = { fullPage, format };
  if (args.quality !== undefined) {
    if (format !== "jpeg") throw new BridgeError(CODE.BAD_REQUEST, "quality applies to format jpeg only");
    opts.quality = argInt(args, "quality", 80, 1, 100);
  }
  if (args.maxWidth !== undefined) opts.maxWidth = argInt(args, "maxWidth", 0, 16, FULL_PAGE_MAX);
  if (isPlainObject(args.region)) {
    const r = args.region;
    if (fullPage) throw new BridgeError(CODE.BAD_REQUEST, "give region or fullPage, not both");
    opts.region = { x: Number(r.x), y: Number(r.y), width: Number(r.width), height: Number(r.height) };
  }
  if (argTarget(args, { optional: true }) !== null && (fullPage || opts.region !== undefined)) {
    throw new BridgeError(CODE.BAD_REQUEST, "give one of: an element, a region or fullPage");
  }
  return opts;
}

/**
 * @param {Record<string, unknown>} args
 * @param {string} name
 * @param {number} max
 * @param {boolean} [optional]
 * @returns {string | undefined}
 */
function argString(args, name, max, optional = false) {
  const v = args[name];
  if (optional && (v === undefined || v === null)) return undefined;
  if (typeof v !== "string" || v.length === 0 || v.length > max) {
    throw new BridgeError(CODE.BAD_REQUEST, `${name} must be a non-empty string of at most ${max} characters`);
  }
  return v;
}

/**
 * The first injection result, or an internal_error naming `what`.
 * @param {unknown} results
 * @param {string} what
 */
function firstResult(results, what) {
  const r = Array.isArray(results) ? results[0]?.result : undefined;
  if (!isPlainObject(r)) throw new BridgeError(CODE.INTERNAL_ERROR, `could not ${what}`);
  return r;
}

// ---------------------------------------------------------------- page-side functions
// Each is serialised into the page by executeScript: self-contained, nothing from outside.

/**
 * Runs in the page: web storage entries (raw; masked by the caller before they leave).
 * @param {"local" | "session"} area
 * @param {string | null} key
 * @param {number} max
 */
export function readStorage(area, key, max) {
  const href = String(location.href);
  try {
    const store = area === "session" ? sessionStorage : localStorage;
    const items = [];
    if (key !== null) {
      const value = store.getItem(key);
      if (value !== null) items.push({ key, value });
    } else {
      for (let i = 0; i < store.length && items.length < max; i++) {
        const k = store.key(i);
        if (k !== null) items.push({ key: k, value: String(store.getItem(k)) });
      }
    }
    return { href, items };
  } catch {
    return { href, error: "storage" };
  }
}

/**
 * The attributes whose value is an address (or, for the srcset ones, a list of them): page_scrape
 * answers them absolute, resolved against the document's base URL, and masked as links are.
 */
export const URL_ATTRS = Object.freeze(["href", "src", "action", "formaction", "poster", "cite", "data", "background",
  "longdesc", "xlink:href", "srcset", "imagesrcset"]);

/**
 * A srcset's candidates ("url 2x, url 640w") with `each` applied to every URL.
 * @param {string} value
 * @param {(url: string) => string} each
 */
export function mapSrcset(value, each) {
  return value.split(",").map((part) => {
    const words = part.trim().split(/\s+/);
    return words[0] === "" ? part.trim() : [each(words[0]), ...words.slice(1)].join(" ");
  }).join(", ");
}

/**
 * Runs in the page: text and chosen attributes of the elements matching `selector`, every
 * address attribute (`urlAttrs`) resolved against the document's base URL. Form field text is
 * never read; a password input's value attribute never; a hidden input's is masked by the caller.
 * @param {string} selector
 * @param {string[]} attrs
 * @param {number} max
 * @param {number} maxText
 * @param {string[]} [urlAttrs]
 */
export function scrapePage(selector, attrs, max, maxText, urlAttrs = []) {
  const href = String(location.href);
  const origin = String(globalThis.origin);
  const base = String(document.baseURI ?? href);
  /** @param {string} v */
  const absolute = (v) => {
    try {
      return new URL(v.trim(), base).href;
    } catch {
      return v;
    }
  };
  /** @param {string} v */
  const srcset = (v) => v.split(",").map((part) => {
    const words = part.trim().split(/\s+/);
    return words[0] === "" ? part.trim() : [absolute(words[0]), ...words.slice(1)].join(" ");
  }).join(", ");
  let nodes;
  try {
    nodes = document.querySelectorAll(selector);
  } catch {
    return { href, origin, error: "selector" };
  }
  const items = [];
  for (const el of Array.from(nodes).slice(0, max)) {
    const tag = String(el.tagName).toUpperCase();
    const type = tag === "INPUT" ? String(el.getAttribute("type") ?? "").toLowerCase() : "";
    const text = tag === "INPUT" || tag === "TEXTAREA" ? "" : String(/** @type {any} */ (el).innerText ?? el.textContent ?? "");
    /** @type {Record<string, string>} */
    const out = {};
    const hiddenValues = [];
    for (const name of attrs) {
      const lower = name.toLowerCase();
      if (lower === "value" && type === "password") continue;
      const v = el.getAttribute(name);
      if (v === null) continue;
      out[name] = !urlAttrs.includes(lower) ? v : lower.endsWith("srcset") ? srcset(v) : absolute(v);
      if (lower === "value" && type === "hidden") hiddenValues.push(name);
    }
    items.push({ text: text.slice(0, maxText), attrs: out, hiddenValues });
  }
  return { href, origin, items };
}

// ---------------------------------------------------------------- handlers

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: ReadBrowserApi}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function readHandlers(deps) {
  const { browser, confirm } = deps;
  const { elementBox } = elementShots(/** @type {any} */ (deps));

  /**
   * Ownership + the origin gate on the tab's current URL.
   * @param {Record<string, unknown>} args
   * @param {import("./support.js").Ctx} ctx
   * @param {string} tool
   */
  const gatedTab = (args, ctx, tool) => gatedTabOf(deps, args, ctx, tool);

  /**
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {(...a: any[]) => unknown} func
   * @param {unknown[]} args
   * @param {string} what
   * @param {"ISOLATED" | "MAIN"} [world]
   * @param {number} [frameId] one frame of the tab (page_scrape with frame)
   */
  async function inject(ctx, tabId, func, args, what, world, frameId = 0) {
    let results;
    try {
      const run = frameId === 0 ? browser.executeScriptArgs(tabId, func, args, world) : browser.executeScriptArgs(tabId, func, args, world ?? "ISOLATED", frameId);
      results = await step(ctx, what, run);
    } catch (err) {
      if (err instanceof BridgeError) throw err; // the step's timeout
      await ownedTabQuiet(tabId);
      throw new BridgeError(CODE.INTERNAL_ERROR, `could not ${what}`);
    }
    return firstResult(results, what);
  }

  /** tab_not_found (and release) when the tab is gone; otherwise nothing. @param {number} tabId */
  async function ownedTabQuiet(tabId) {
    try {
      await browser.getTab(tabId);
    } catch {
      deps.ownership.release(tabId);
      throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
    }
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageScreenshot(args, ctx) {
    const opts = screenshotOptions(args);
    let tabId;
    let origin;
    if (argTarget(args, { optional: true }) !== null) {
      // One element: found and scrolled into view as the actions do, its box the clip.
      const found = await elementBox(args, ctx, "page_screenshot");
      ({ tabId, topOrigin: origin } = found);
      opts.element = found.box;
    } else ({ tabId, origin } = await gatedTab(args, ctx, "page_screenshot"));
    let shot;
    try {
      // A background tab does not paint: make ours the active one of its window first.
      if (!opts.fullPage) await browser.updateTab(tabId, { active: true });
      shot = await step(ctx, "capture the page", browser.capturePage(tabId, opts));
    } catch (err) {
      if (err instanceof BridgeError) throw err; // the step's timeout
      await ownedTabQuiet(tabId);
      throw new BridgeError(CODE.INTERNAL_ERROR, opts.fullPage ? "could not capture the full page" : "could not capture the tab");
    }
    // The page must not have left the approved origin meanwhile: then the image is not ours.
    const after = await ownedTab(deps, ctx, tabId);
    sameOrigin(after?.url, origin);
    const data = typeof shot?.data === "string" ? shot.data : "";
    const size = imageSize(data);
    const format = opts.format === "jpeg" ? "image/jpeg" : "image/png";
    if (data === "" || size === null || size.mimeType !== format) {
      throw new BridgeError(CODE.INTERNAL_ERROR, `the capture returned no ${opts.format.toUpperCase()}`);
    }
    if (data.length > MAX_RETURNED_BASE64) {
      throw new BridgeError(CODE.SCREENSHOT_TOO_LARGE,
        `the ${size.width}x${size.height} ${opts.format} capture is ${base64Bytes(data)} bytes, over the ${Math.floor((MAX_RETURNED_BASE64 / 4) * 3)} that can be returned: ask for a region, a maxWidth (e.g. ${Math.max(16, Math.floor(size.width / 2))}), or format jpeg with a lower quality`);
    }
    return { mimeType: format, data, width: size.width, height: size.height };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function cookieGet(args, ctx) {
    const name = argString(args, "name", 4096, true);
    const { url } = await gatedTab(args, ctx, "cookie_get");
    let all;
    try {
      all = await browser.cookiesForUrl(url);
    } catch {
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this site's cookies");
    }
    const cookies = (Array.isArray(all) ? all : [])
      .filter((c) => isPlainObject(c) && typeof c.name === "string" && (name === undefined || c.name === name))
      .slice(0, MAX_ITEMS)
      .map((c) => ({
        name: String(c.name),
        value: maskValue(c.name, c.value),
        domain: String(c.domain ?? ""),
        path: String(c.path ?? ""),
        httpOnly: c.httpOnly === true,
        secure: c.secure === true,
      }));
    return { cookies };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function storageGet(args, ctx) {
    // area's enum and key's type and length are the wire schema's (worker/dispatch.js).
    const area = args.area === "session" ? "session" : "local";
    const key = typeof args.key === "string" && args.key !== "" ? args.key : null;
    const { tabId, origin } = await gatedTab(args, ctx, "storage_get");
    const read = await inject(ctx, tabId, readStorage, [area, key, MAX_ITEMS], "read this page's storage");
    sameOrigin(read.href, origin);
    if (read.error !== undefined || !Array.isArray(read.items)) throw new BridgeError(CODE.INTERNAL_ERROR, "this page's storage cannot be read");
    const items = read.items
      .filter((i) => isPlainObject(i) && typeof i.key === "string")
      .slice(0, MAX_ITEMS)
      .map((i) => ({ key: String(i.key), value: maskValue(i.key, i.value) }));
    return { items };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageMarkdown(args, ctx) {
    const offset = argInt(args, "offset", 0, 0, Number.MAX_SAFE_INTEGER);
    const maxChars = argInt(args, "maxChars", 100_000, 1, MAX_TEXT_CHARS);
    const main = args.main === true;
    const { tabId, tab, frameId, origin } = await gatedFrame(/** @type {any} */ (deps), args, ctx, "page_markdown");
    let read;
    try {
      const run = frameId === 0 && !main ? browser.executeScript(tabId, readPageBlocks) : browser.executeScriptArgs(tabId, readPageBlocks, [{ main }], "ISOLATED", frameId);
      read = firstResult(await step(ctx, "read this page", run), "read this page");
    } catch (err) {
      if (err instanceof BridgeError) throw err;
      await ownedTabQuiet(tabId);
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this page");
    }
    sameOrigin(read, origin);
    const slice = truncate(maskText(renderMarkdown(read.blocks)), offset, maxChars);
    return { ...slice, url: String(read.href), title: typeof tab?.title === "string" ? tab.title : "" };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageScrape(args, ctx) {
    // selector's length and attrs (at most 50 attribute names) are the wire schema's (worker/dispatch.js).
    const selector = String(args.selector);
    const attrs = Array.isArray(args.attrs) ? args.attrs.map(String) : [];
    const { tabId, frameId, origin } = await gatedFrame(/** @type {any} */ (deps), args, ctx, "page_scrape");
    const read = await inject(ctx, tabId, scrapePage, [selector, [...new Set(attrs)], MAX_ITEMS, MAX_ITEM_TEXT, [...URL_ATTRS]], "read this page", undefined, frameId);
    sameOrigin(read, origin);
    if (read.error === "selector") throw new BridgeError(CODE.BAD_REQUEST, "selector is not a valid CSS selector");
    if (!Array.isArray(read.items)) throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this page");
    const items = read.items.filter(isPlainObject).slice(0, MAX_ITEMS).map((item) => {
      const hidden = new Set(Array.isArray(item.hiddenValues) ? item.hiddenValues : []);
      /** @type {Record<string, string>} */
      const out = {};
      for (const [k, v] of Object.entries(isPlainObject(item.attrs) ? item.attrs : {})) {
        if (typeof v !== "string") continue;
        const lower = k.toLowerCase();
        // an address is masked as a snapshot's links are (no userinfo, secret-like query values by shape)
        const kept = !URL_ATTRS.includes(lower) ? v : lower.endsWith("srcset") ? mapSrcset(v, maskHref) : maskHref(v);
        out[k] = hidden.has(k) ? maskValue(k, v) : maskCards(kept);
      }
      return { text: maskCards(String(item.text ?? "").slice(0, MAX_ITEM_TEXT)), attrs: out };
    });
    return { items };
  }

  return [
    ["page_screenshot", pageScreenshot],
    ["cookie_get", cookieGet],
    ["storage_get", storageGet],
    ["page_markdown", pageMarkdown],
    ["page_scrape", pageScrape],
    ...evalUploadHandlers(deps),
  ];
}
