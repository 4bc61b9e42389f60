// handlers/files.js — files out of an owned tab and the screen it is shown on: page_pdf
// (Page.printToPDF; the MCP server writes the bytes into its download sandbox, so they never
// reach the agent), page_wait_download (a download a frame of an approved site in the tab
// started, from worker/downloads.js; where Chrome saved a finished one comes from chrome.downloads,
// and the MCP server copies it into the sandbox) and page_viewport (Emulation.* device metrics and touch, and what the page then sees;
// given no size, the current viewport: nothing changed).
// Thin glue: the debugger and chrome.downloads are injected. It must never touch the chrome
// global, never act on a tab the session does not own or whose site is not approved, never
// return a download's URL from an unapproved site nor a download a frame of one started (never
// matching a filter against what it withholds), and never redirect, open, remove or erase a
// download (observe only: Chrome's file and history stay as they are).

import { BridgeError } from "../shared/bridge-error.js";
import { MAX_RETURNED_BASE64 } from "../worker/chunking.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { maskCards } from "../worker/redact.js";
import { isPlainObject } from "../shared/wire.js";
import { argInt, gatedTab, ownedTab, sameOrigin, step } from "./support.js";

/** Longest page_wait_download wait (the MCP tool's own limit). */
export const MAX_WAIT_MS = 40_000;
/** How long Chrome may take to list a download its debugger already called complete. */
const LISTED_WITHIN_MS = 10_000;
const LISTED_POLL_MS = 100;
/** How much earlier than its debugger event Chrome may have stamped a download's start. */
const START_SLACK_MS = 5000;

/** page_viewport's presets (CSS pixels, device pixel ratio, mobile viewport rules, touch). */
export const VIEWPORT_PRESETS = Object.freeze({
  mobile: Object.freeze({ width: 390, height: 844, deviceScaleFactor: 3, mobile: true, touch: true }),
  tablet: Object.freeze({ width: 820, height: 1180, deviceScaleFactor: 2, mobile: true, touch: true }),
  desktop: Object.freeze({ width: 1280, height: 800, deviceScaleFactor: 1, mobile: false, touch: false }),
});

/**
 * The browser calls this family uses beyond support.js's BrowserApi.
 * @typedef {object} FilesBrowserApi
 * @property {(query: {url?: string}) => Promise<any[]>} searchDownloads chrome.downloads.search
 * @property {(tabId: number, func: (...a: any[]) => unknown, args: unknown[], world?: "ISOLATED" | "MAIN") =>
 *   Promise<Array<{result?: unknown}>>} executeScriptArgs
 */

// ---------------------------------------------------------------- pure helpers

/**
 * page_viewport's settings from its arguments: a preset, overridden field by field, or an
 * explicit width and height; null for reset; "read" when nothing is given (the current viewport
 * is answered, nothing changed).
 * @param {Record<string, unknown>} args
 * @returns {{width: number, height: number, deviceScaleFactor: number, mobile: boolean, touch: boolean} | null | "read"}
 */
export function viewportSettings(args) {
  // Each field's type and range, the preset's enum and the booleans are the wire schema's
  // (worker/dispatch.js checks it before any handler runs); which fields go together is read here.
  const keys = ["preset", "width", "height", "deviceScaleFactor", "mobile", "touch"].filter((k) => args[k] !== undefined && args[k] !== null);
  if (args.reset === true) {
    if (keys.length > 0) throw new BridgeError(CODE.BAD_REQUEST, "reset takes no other setting");
    return null;
  }
  if (keys.length === 0) return "read";
  const preset = args.preset;
  const base = typeof preset === "string" && Object.hasOwn(VIEWPORT_PRESETS, preset)
    ? VIEWPORT_PRESETS[/** @type {keyof typeof VIEWPORT_PRESETS} */ (preset)] : null;
  if (base === null && (args.width === undefined || args.height === undefined)) {
    throw new BridgeError(CODE.BAD_REQUEST, "give a preset, or width and height, or reset");
  }
  const dpr = typeof args.deviceScaleFactor === "number" ? args.deviceScaleFactor : base?.deviceScaleFactor ?? 1;
  return {
    width: argInt(args, "width", base?.width ?? 0, 100, 4096),
    height: argInt(args, "height", base?.height ?? 0, 100, 4096),
    deviceScaleFactor: dpr,
    mobile: typeof args.mobile === "boolean" ? args.mobile : base?.mobile ?? false,
    touch: typeof args.touch === "boolean" ? args.touch : base?.touch ?? false,
  };
}

/**
 * An optional substring filter argument (its type and length are the wire schema's).
 * @param {Record<string, unknown>} args
 * @param {string} name
 */
function argSubstring(args, name) {
  const v = args[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/**
 * The PDF's file name: the agent's, else the page's host; always ending in .pdf (the MCP server
 * sanitises it again and never overwrites).
 * @param {unknown} name
 * @param {string} url
 */
export function pdfName(name, url) {
  let base = typeof name === "string" && name.length > 0 ? name : "";
  if (base === "") {
    try {
      base = new URL(url).hostname || "page";
    } catch {
      base = "page";
    }
  }
  return /\.pdf$/i.test(base) ? base : `${base}.pdf`;
}

// ---------------------------------------------------------------- page-side function

/** Runs in the page (isolated world): what the page sees of its screen, after a frame. */
export async function readView() {
  await Promise.race([new Promise((r) => requestAnimationFrame(r)), new Promise((r) => setTimeout(r, 200))]);
  return {
    href: String(location.href),
    innerWidth: window.innerWidth,
    innerHeight: window.innerHeight,
    devicePixelRatio: window.devicePixelRatio,
    coarsePointer: matchMedia("(pointer: coarse)").matches,
    maxTouchPoints: navigator.maxTouchPoints,
  };
}

// ---------------------------------------------------------------- handlers

/**
 * @param {import("./actions.js").ActionDeps} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function filesHandlers(deps) {
  const { cdp, downloads } = deps;
  const { browser } = deps;

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pagePdf(args, ctx) {
    // The booleans, scale's range, pageRanges's form and name's length are the wire schema's
    // (worker/dispatch.js checks it before any handler runs).
    const scale = typeof args.scale === "number" ? args.scale : 1;
    const ranges = typeof args.pageRanges === "string" ? args.pageRanges : undefined;
    const { tabId, origin, url } = await gatedTab(deps, args, ctx, "page_pdf");
    /** @type {Record<string, unknown>} */
    const params = {
      landscape: args.landscape === true,
      printBackground: args.printBackground === true,
      scale,
      transferMode: "ReturnAsBase64",
      ...(ranges === undefined ? {} : { pageRanges: ranges }),
    };
    const printed = await cdp.send(ctx, tabId, "Page.printToPDF", params, "print the page to PDF");
    const after = await ownedTab(deps, ctx, tabId);
    sameOrigin(after?.url, origin);
    const data = typeof printed?.data === "string" ? printed.data : "";
    if (!data.startsWith("JVBERi0")) throw new BridgeError(CODE.INTERNAL_ERROR, "Chrome returned no PDF");
    if (data.length > MAX_RETURNED_BASE64) {
      throw new BridgeError(CODE.BAD_REQUEST,
        `the PDF is over ${Math.floor((MAX_RETURNED_BASE64 / 4) * 3)} bytes: print fewer pages (pageRanges) or a smaller scale`);
    }
    return { data, name: pdfName(args.name, url) };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageWaitDownload(args, ctx) {
    const match = { filename: argSubstring(args, "filename"), url: argSubstring(args, "url") };
    const timeoutMs = argInt(args, "timeoutMs", 30_000, 100, MAX_WAIT_MS);
    const { tabId } = await gatedTab(deps, args, ctx, "page_wait_download");
    await cdp.ensure(ctx, tabId); // its events are the only source: it must be listening
    // Frames whose navigation the debugger missed (attached after them): known from now on.
    downloads.framesKnown(tabId, await cdp.send(ctx, tabId, "Page.getFrameTree", {}, "read the frame tree"));
    const left = typeof ctx.deadline === "number" ? ctx.deadline - Date.now() - LISTED_WITHIN_MS : timeoutMs;
    // Only a download a frame of an approved site started is ever seen (worker/downloads.js).
    const found = await downloads.wait(tabId, match, Math.max(0, Math.min(timeoutMs, left)), ctx.policy.approves);
    if (found === null) {
      const what = [match.filename && `named like "${match.filename}"`, match.url && `from a URL with "${match.url}"`].filter(Boolean).join(" and ");
      throw new BridgeError(CODE.TIMEOUT, `no download${what ? ` ${what}` : ""} began on tab ${tabId} within ${(timeoutMs / 1000).toFixed(1)} s`);
    }
    await ownedTab(deps, ctx, tabId);
    const shown = {
      frameOrigin: found.frameOrigin, // checked and removed by actions.js savesOnlyApproved
      filename: maskCards(found.filename).slice(0, 500),
      url: ctx.policy.approves(originOf(found.url)) ? found.url.slice(0, 2000) : null,
      receivedBytes: found.receivedBytes,
      totalBytes: found.totalBytes,
    };
    if (found.state === "started") return { state: "started", ...shown };
    const item = await step(ctx, "find the download in Chrome's list", listed(found), LISTED_WITHIN_MS + 1000);
    if (found.state === "failed" || item === null || item.state !== "complete") {
      const chromeSays = typeof item?.error === "string" && item.error !== "" ? item.error : null;
      const reason = chromeSays ?? (found.state === "failed" ? "canceled" : "Chrome does not list the finished download");
      return { state: "failed", ...shown, reason };
    }
    const size = Number.isInteger(item.fileSize) && item.fileSize >= 0 ? item.fileSize : item.bytesReceived;
    return { state: "complete", ...shown, receivedBytes: size, file: { source: String(item.filename), size } };
  }

  /** Chrome's download ids already answered: one record is never handed out twice. */
  /** @type {Set<unknown>} */
  const answered = new Set();

  /**
   * Chrome's own record of a download its debugger reported finished: the newest one with its
   * URL that Chrome started no more than START_SLACK_MS before the debugger said it began, not
   * answered before, once it is no longer in progress (the file is renamed from its temporary
   * name just after the debugger says complete); null if none.
   * @param {import("../worker/downloads.js").Download} d
   */
  async function listed(d) {
    const until = Date.now() + LISTED_WITHIN_MS;
    for (;;) {
      const items = (await browser.searchDownloads({ url: d.url })) ?? [];
      const item = items
        .filter((i) => isPlainObject(i) && !answered.has(i.id) && Date.parse(String(i.startTime)) >= d.startedAt - START_SLACK_MS)
        .sort((a, b) => Date.parse(String(b.startTime)) - Date.parse(String(a.startTime)))[0] ?? null;
      if ((item !== null && item.state !== "in_progress") || Date.now() > until) {
        if (item !== null && item.state !== "in_progress") answered.add(item.id);
        return item;
      }
      await new Promise((r) => setTimeout(r, LISTED_POLL_MS));
    }
  }

  /**
   * The screen page_viewport set on each tab, and for which session (a read answers it to that
   * session only); forgotten on reset. Chrome ends it with the debugger's attachment.
   * @type {Map<number, {session: string, settings: NonNullable<Exclude<ReturnType<typeof viewportSettings>, "read">>}>}
   */
  const screens = new Map();

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageViewport(args, ctx) {
    const asked = viewportSettings(args);
    const { tabId, origin } = await gatedTab(deps, args, ctx, "page_viewport");
    if (asked !== "read") {
      await emulateScreen(ctx, tabId, asked);
      if (asked === null) screens.delete(tabId);
      else screens.set(tabId, { session: ctx.session, settings: asked });
    }
    const known = screens.get(tabId);
    return { emulating: known !== undefined && known.session === ctx.session ? known.settings : null, page: await readBack(ctx, tabId, origin) };
  }

  /**
   * Set (or, null, end) the screen emulation on an owned tab.
   * @param {import("./support.js").Ctx} ctx @param {number} tabId
   * @param {Exclude<ReturnType<typeof viewportSettings>, "read">} settings
   */
  async function emulateScreen(ctx, tabId, settings) {
    // Touch first, the screen last: the page's resize event then sees the pointer it will keep.
    const touch = settings?.touch === true;
    await cdp.send(ctx, tabId, "Emulation.setTouchEmulationEnabled",
      touch ? { enabled: true, maxTouchPoints: 5 } : { enabled: false }, "emulate touch");
    await cdp.send(ctx, tabId, "Emulation.setEmitTouchEventsForMouse",
      touch ? { enabled: true, configuration: settings?.mobile ? "mobile" : "desktop" } : { enabled: false }, "emulate touch");
    if (settings === null) {
      await cdp.send(ctx, tabId, "Emulation.clearDeviceMetricsOverride", {}, "end the screen emulation");
    } else {
      const { touch: _, ...metrics } = settings;
      await cdp.send(ctx, tabId, "Emulation.setDeviceMetricsOverride", metrics, "emulate the screen");
    }
  }

  /**
   * What the page sees of its screen, from the gated origin.
   * @param {import("./support.js").Ctx} ctx @param {number} tabId @param {string} origin
   */
  async function readBack(ctx, tabId, origin) {
    let seen;
    try {
      seen = (await step(ctx, "read what the page sees", browser.executeScriptArgs(tabId, readView, [])))?.[0]?.result;
    } catch (err) {
      if (err instanceof BridgeError) throw err;
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not read what the page sees");
    }
    if (!isPlainObject(seen)) throw new BridgeError(CODE.INTERNAL_ERROR, "could not read what the page sees");
    sameOrigin(seen.href, origin);
    const n = (/** @type {unknown} */ v) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
    return {
      innerWidth: Math.round(n(seen.innerWidth)),
      innerHeight: Math.round(n(seen.innerHeight)),
      devicePixelRatio: n(seen.devicePixelRatio),
      coarsePointer: seen.coarsePointer === true,
      maxTouchPoints: Math.round(n(seen.maxTouchPoints)),
    };
  }

  return [
    ["page_pdf", pagePdf],
    ["page_wait_download", pageWaitDownload],
    ["page_viewport", pageViewport],
  ];
}
