// handlers/read.js — the reading tools and the two risky ones: page_screenshot, cookie_get,
// storage_get, page_markdown, page_scrape, page_eval and page_upload. Thin glue: browser calls
// are injected, the origin gate, masking, redaction and paging come from lib/. It must never
// touch the chrome global, never act on a tab the session does not own, never return a cookie or
// storage value unmasked, a card-like number, a password field's value, or content read from
// another origin than the gated one, and never run page_eval / page_upload unless the signed
// policy enables them AND the person allowed that very call in the confirm window (with policy
// presenceConfirm: a tap on their security key that the host verified, for that very code/file).

import { BridgeError } from "../shared/bridge-error.js";
import { turnOnWords } from "../shared/policy-words.js";
import { FULL_PAGE_MAX, imageSize } from "../shared/screenshot.js";
import { MAX_RETURNED_BASE64 } from "../worker/chunking.js";
import { canonicalJson } from "../shared/canonical-json.js";
import { refuseUnlessAllowed } from "../shared/confirm-window.js";
import { CODE } from "../shared/error-codes.js";
import { readPageBlocks, renderMarkdown } from "../worker/markdown.js";
import { maskHref, maskText, maskValue } from "../worker/mask.js";
import { maskCards } from "../worker/redact.js";
import { truncate } from "../worker/text.js";
import { isPlainObject } from "../shared/wire.js";
import { gatedFrame } from "./frames.js";
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
 *   Promise<Array<{result?: unknown}>>} executeScriptArgs (in frame `frameId`: page_upload with frame)
 * @property {import("./frames.js").FramesBrowserApi["getAllFrames"]} [getAllFrames] (page_upload with frame)
 */

/** Most items page_scrape and storage_get return. */
export const MAX_ITEMS = 1000;
/** Longest text of one scraped element. */
export const MAX_ITEM_TEXT = 10_000;
/** Longest page_eval code (the MCP tool's own limit). */
export const MAX_CODE = 100_000;
/** Largest decoded upload. */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
const CSP_MESSAGE = "the page's Content-Security-Policy forbids eval";

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
 * (16-16384) and region {x, y, width, height} in page CSS pixels (not with fullPage). Each
 * field's type, enum, range and the region's shape are the wire schema's (worker/dispatch.js
 * checks it before any handler runs); which fields go together is checked here.
 * @param {Record<string, unknown>} args
 * @returns {{fullPage: boolean, format: "png" | "jpeg", quality?: number, maxWidth?: number,
 *   region?: {x: number, y: number, width: number, height: number}}}
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
  return opts;
}

/**
 * True when the policy flag is exactly `true` (anything else, or a missing policy, is off).
 * @param {import("./support.js").Ctx} ctx
 * @param {string} key
 */
const policyOn = (ctx, key) => ctx.policy.allows(key);

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

/**
 * Runs in the page's MAIN world (page_eval): indirect eval of the confirmed code; the result as
 * JSON text, or String(result) when it is not JSON-serialisable.
 * @param {string} code
 */
export async function evalInPage(code) {
  const href = String(location.href);
  let value;
  try {
    value = await (0, eval)(code);
  } catch (err) {
    const message = String(err && /** @type {any} */ (err).message ? /** @type {any} */ (err).message : err);
    const csp = err instanceof EvalError || /unsafe-eval|Content Security Policy|TrustedScript/i.test(message);
    return csp ? { href, csp: true } : { href, threw: message.slice(0, 300) };
  }
  const t = typeof value;
  if (t === "undefined") return { href, json: "null" };
  if (t === "function" || t === "symbol" || t === "bigint" || (typeof Node === "function" && value instanceof Node)) {
    return { href, text: String(value) };
  }
  try {
    const json = JSON.stringify(value);
    return json === undefined ? { href, text: String(value) } : { href, json };
  } catch {
    try {
      return { href, text: String(value) };
    } catch {
      return { href, text: Object.prototype.toString.call(value) };
    }
  }
}

/**
 * Runs in the page: find the upload target (selector or xpath, index-th match) and, when `file`
 * is given, put that file into it. Only an <input type=file> is accepted.
 * @param {string | null} selector
 * @param {string | null} xpath
 * @param {number} index
 * @param {{name: string, data: string} | null} file
 */
export function fileInput(selector, xpath, index, file) {
  const href = String(location.href);
  let el = null;
  try {
    if (selector !== null) el = document.querySelectorAll(selector)[index] ?? null;
    else if (xpath !== null) {
      const r = document.evaluate(xpath, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
      el = r.snapshotItem(index);
    }
  } catch {
    return { href, error: "locator" };
  }
  if (el === null) return { href, error: "not_found" };
  if (!(el instanceof HTMLInputElement) || el.type !== "file") return { href, error: "not_file_input" };
  if (file === null) return { href, ok: true };
  const bin = atob(file.data);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const dt = new DataTransfer();
  dt.items.add(new File([bytes], file.name));
  el.files = dt.files;
  el.dispatchEvent(new Event("input", { bubbles: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
  return { href, ok: true };
}

// ---------------------------------------------------------------- handlers

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: ReadBrowserApi}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function readHandlers(deps) {
  const { browser, confirm } = deps;

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
   * @param {number} [frameId] one frame of the tab (page_upload with frame)
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

  /**
   * Ask the person about one risky call; re-check ownership and origin after the wait.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {string} origin
   * @param {string} tool
   * @param {string} detail
   * @param {Record<string, string>} tapped what a presence-confirm tap signs for, with the origin
   * @param {string} [topOrigin] the tab's origin when `origin` is a frame's (re-checked after the wait)
   */
  async function confirmEveryCall(ctx, tabId, origin, tool, detail, tapped, topOrigin = origin) {
    /** @type {{action: string, detail: string} | null} */
    let presence = null;
    if (policyOn(ctx, "presenceConfirm")) {
      // docs/protocol.md "More tap-authorised actions": confirm.eval / confirm.upload.
      try {
        presence = { action: tool === "page_eval" ? "confirm.eval" : "confirm.upload", detail: canonicalJson({ ...tapped, origin }) };
      } catch {
        throw new BridgeError(CODE.BAD_REQUEST, "the request cannot be shown for a tap (invalid text)");
      }
    }
    const decision = await confirm({ kind: "action", tool, origin, detail, presence, client: ctx.client, timeoutMs: ctx.policy.confirmTimeoutMs });
    refuseUnlessAllowed(decision, tool);
    const now = await ownedTab(deps, ctx, tabId);
    sameOrigin(now?.url, topOrigin);
  }

  /**
   * @param {import("./support.js").Ctx} ctx
   * @param {string} key
   * @param {string} tool
   */
  function requirePolicy(ctx, key, tool) {
    if (!policyOn(ctx, key)) throw new BridgeError(CODE.POLICY_DENIED, `${tool} is off: the signed policy does not enable "${key}"; ${turnOnWords(key)}`);
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageScreenshot(args, ctx) {
    const opts = screenshotOptions(args);
    const { tabId, origin } = await gatedTab(args, ctx, "page_screenshot");
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

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageEval(args, ctx) {
    requirePolicy(ctx, "eval", "page_eval");
    const code = /** @type {string} */ (argString(args, "code", MAX_CODE));
    const { tabId, origin, url } = await gatedTab(args, ctx, "page_eval");
    // Every call, no grace period: the person sees the full code each time.
    await confirmEveryCall(ctx, tabId, origin, "page_eval", `Run this JavaScript in ${url.slice(0, 300)}?\n\n${code}`, { code });
    const out = await inject(ctx, tabId, evalInPage, [code], "run the code", "MAIN");
    sameOrigin(out.href, origin);
    if (out.csp === true) throw new BridgeError(CODE.INTERNAL_ERROR, CSP_MESSAGE);
    if (typeof out.threw === "string") throw new BridgeError(CODE.INTERNAL_ERROR, `the code threw: ${out.threw}`);
    if (typeof out.text === "string") return { result: out.text };
    try {
      return { result: JSON.parse(String(out.json)) };
    } catch {
      throw new BridgeError(CODE.INTERNAL_ERROR, "the code's result could not be read");
    }
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageUpload(args, ctx) {
    requirePolicy(ctx, "upload", "page_upload");
    const path = /** @type {string} */ (argString(args, "path", 4096));
    const name = /** @type {string} */ (argString(args, "name", 255));
    if (/[/\\\0]/.test(name)) throw new BridgeError(CODE.BAD_REQUEST, "name must be a file name, not a path");
    const bytes = base64Bytes(args.data);
    if (bytes < 0) throw new BridgeError(CODE.BAD_REQUEST, "data must be base64");
    if (bytes > MAX_UPLOAD_BYTES) throw new BridgeError(CODE.BAD_REQUEST, `the file exceeds ${MAX_UPLOAD_BYTES} bytes`);
    const locator = uploadTarget(args);
    const { tabId, url, frameId, origin, topOrigin } = await gatedFrame(/** @type {any} */ (deps), args, ctx, "page_upload");
    const where = [locator.selector, locator.xpath, locator.index];
    const probe = await inject(ctx, tabId, fileInput, [...where, null], "find the file input", undefined, frameId);
    sameOrigin(probe.href, origin);
    targetError(probe.error);
    const into = frameId === 0 ? `a file field of ${url.slice(0, 300)}` : `a file field of a frame on ${origin}, inside ${url.slice(0, 300)}`;
    await confirmEveryCall(ctx, tabId, origin, "page_upload",
      `Upload the file ${path} (${bytes} bytes, as "${name}") into ${into}?`, { path }, topOrigin);
    const done = await inject(ctx, tabId, fileInput, [...where, { name, data: args.data }], "set the file", undefined, frameId);
    sameOrigin(done.href, origin);
    targetError(done.error);
    if (done.ok !== true) throw new BridgeError(CODE.INTERNAL_ERROR, "could not set the file");
    return { uploaded: true };
  }

  return [
    ["page_screenshot", pageScreenshot],
    ["cookie_get", cookieGet],
    ["storage_get", storageGet],
    ["page_markdown", pageMarkdown],
    ["page_scrape", pageScrape],
    ["page_eval", pageEval],
    ["page_upload", pageUpload],
  ];
}

/**
 * page_upload's element: exactly one of selector / xpath (refs and text are not supported here).
 * @param {Record<string, unknown>} args
 */
function uploadTarget(args) {
  const given = ["ref", "selector", "text", "xpath"].filter((k) => args[k] !== undefined && args[k] !== null);
  if (given.length !== 1) throw new BridgeError(CODE.BAD_REQUEST, "give exactly one of selector or xpath");
  if (given[0] === "ref" || given[0] === "text") {
    throw new BridgeError(CODE.BAD_REQUEST, "page_upload addresses the file input by selector or xpath");
  }
  const value = argString(args, given[0], 4096);
  const index = argInt(args, "index", 0, 0, 10_000);
  return given[0] === "selector" ? { selector: value, xpath: null, index } : { selector: null, xpath: value, index };
}

/** @param {unknown} error */
function targetError(error) {
  if (error === undefined) return;
  if (error === "not_file_input") throw new BridgeError(CODE.BAD_REQUEST, "the target is not an <input type=file>");
  if (error === "not_found") throw new BridgeError(CODE.BAD_REQUEST, "no element matches");
  if (error === "locator") throw new BridgeError(CODE.BAD_REQUEST, "the selector or xpath is not valid");
  throw new BridgeError(CODE.INTERNAL_ERROR, "could not find the file input");
}
