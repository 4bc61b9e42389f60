// handlers/fetch.js — page_fetch: one HTTP request sent from an agent's tab with the page's
// credentials (its cookies), to the tab's site or another approved one. Off unless the signed
// policy enables it (pageFetch); then the person allows EVERY call in the confirm window, seeing
// the method and the URL. The request runs in the extension's isolated world in the page (the
// page's own scripts cannot wrap or read it), never follows a redirect (a redirect could carry the
// page's cookies to a site nobody approved), and sets only the headers in FETCH_HEADERS. The text
// body comes back masked (card-like numbers) and capped at maxBytes (bodyTruncated); with saveAs
// the raw bytes (at most MAX_SAVE_BYTES, refused above) go to the MCP server, which writes them
// into its download sandbox and never hands them to the agent. Thin glue: it must never touch the
// chrome global, send anything before the policy, the ownership, both origins and the person
// said yes, or return an answer read after the tab left the gated origin.

import { BridgeError } from "../lib/bridge-error.js";
import { confirmTimeoutMs, refuseUnlessAllowed } from "../lib/confirm-window.js";
import { CODE } from "../lib/error-codes.js";
import { isApproved, originOf } from "../lib/origin.js";
import { maskCards } from "../lib/redact.js";
import { isPlainObject } from "../lib/wire.js";
import { MAX_URL, argInt, argTabId, ownedTab, step } from "./support.js";

/** The methods page_fetch sends. */
export const FETCH_METHODS = Object.freeze(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]);
/** The request headers it may set (mcp_server/catalogue.py FETCH_HEADERS): never Cookie,
 * Authorization, Origin or anything else the browser computes. */
export const FETCH_HEADERS = Object.freeze(["accept", "accept-language", "cache-control", "content-type",
  "if-match", "if-modified-since", "if-none-match", "x-requested-with"]);
/** Most bytes of a text body returned. */
export const MAX_TEXT_BYTES = 1_000_000;
/** Most bytes saveAs carries; a larger body is refused (message_too_large), nothing saved. */
export const MAX_SAVE_BYTES = 10 * 1024 * 1024;
/** Longest request body (characters). */
export const MAX_BODY = 1_000_000;
/** Longest header value. */
const MAX_HEADER_VALUE = 1000;
/** How much of a body the confirm window shows. */
const SHOWN_BODY = 2000;
/** Longest wait for the answer (within the call's deadline). */
const FETCH_STEP_MS = 60_000;
const SAVE_NAME = /^[A-Za-z0-9][A-Za-z0-9._ -]{0,254}$/;

/**
 * @typedef {{url: string, origin: string, method: string, body: string | null,
 *   headers: Record<string, string>, maxBytes: number, saveAs: string | null}} FetchRequest
 */

/**
 * The request page_fetch was asked for, checked: bad_request for anything it will not send.
 * @param {Record<string, unknown>} args
 * @returns {FetchRequest}
 */
export function fetchRequest(args) {
  const url = args.url;
  const origin = originOf(url);
  if (typeof url !== "string" || url.length > MAX_URL || origin === null) {
    throw new BridgeError(CODE.BAD_REQUEST, "url must be an absolute http(s) URL without credentials");
  }
  const method = args.method === undefined ? "GET" : args.method;
  if (typeof method !== "string" || !FETCH_METHODS.includes(method)) {
    throw new BridgeError(CODE.BAD_REQUEST, `method must be one of ${FETCH_METHODS.join(", ")}`);
  }
  const body = args.body === undefined || args.body === null ? null : args.body;
  if (body !== null && (typeof body !== "string" || body.length > MAX_BODY)) {
    throw new BridgeError(CODE.BAD_REQUEST, `body must be a string of at most ${MAX_BODY} characters`);
  }
  if (body !== null && (method === "GET" || method === "HEAD")) {
    throw new BridgeError(CODE.BAD_REQUEST, `a ${method} request has no body`);
  }
  const raw = args.headers === undefined || args.headers === null ? {} : args.headers;
  if (!isPlainObject(raw) || Object.keys(raw).length > FETCH_HEADERS.length) {
    throw new BridgeError(CODE.BAD_REQUEST, "headers must be an object of header names to strings");
  }
  /** @type {Record<string, string>} */
  const headers = {};
  for (const [name, value] of Object.entries(raw)) {
    const lower = name.toLowerCase();
    if (!FETCH_HEADERS.includes(lower)) {
      throw new BridgeError(CODE.BAD_REQUEST, `page_fetch does not set the header ${JSON.stringify(name.slice(0, 60))}: only ${FETCH_HEADERS.join(", ")}`);
    }
    if (typeof value !== "string" || value.length > MAX_HEADER_VALUE || /[\r\n\0]/.test(value) || Object.hasOwn(headers, lower)) {
      throw new BridgeError(CODE.BAD_REQUEST, `header ${lower} must be given once, as one line of at most ${MAX_HEADER_VALUE} characters`);
    }
    headers[lower] = value;
  }
  const maxBytes = argInt(args, "maxBytes", 100_000, 1, MAX_TEXT_BYTES);
  const saveAs = args.saveAs === undefined || args.saveAs === null ? null : args.saveAs;
  if (saveAs !== null && (typeof saveAs !== "string" || !SAVE_NAME.test(saveAs) || saveAs.includes(".."))) {
    throw new BridgeError(CODE.BAD_REQUEST, "saveAs must be a plain file name");
  }
  return { url, origin, method, body, headers, maxBytes, saveAs };
}

/**
 * What the confirm window shows: where from, the method and the URL, then what is sent and
 * where the answer goes.
 * @param {FetchRequest} req
 * @param {string} pageUrl
 */
export function fetchDetail(req, pageUrl) {
  const lines = [`Send this request from ${pageUrl.slice(0, 300)}, with its cookies?`, "", `${req.method} ${req.url}`];
  const names = Object.keys(req.headers);
  if (names.length > 0) lines.push("", ...names.map((n) => `${n}: ${req.headers[n]}`));
  if (req.body !== null) {
    const shown = req.body.length > SHOWN_BODY ? `${req.body.slice(0, SHOWN_BODY)}… (${req.body.length} characters in all)` : req.body;
    lines.push("", "with this body:", shown);
  }
  if (req.saveAs !== null) lines.push("", `The answer is saved as ${req.saveAs} in tabwarden's download folder.`);
  return lines.join("\n");
}

// ---------------------------------------------------------------- page-side function
// Serialised into the page by executeScript (isolated world): self-contained.

/**
 * Runs in the page: fetch with the page's credentials, no redirect followed; at most `limit`
 * body bytes read, as text, or as base64 when `binary`.
 * @param {string} url
 * @param {string} method
 * @param {Record<string, string>} headers
 * @param {string | null} body
 * @param {number} limit
 * @param {boolean} binary
 */
export async function fetchInPage(url, method, headers, body, limit, binary) {
  const href = String(location.href);
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === null ? undefined : body, credentials: "include", redirect: "manual", cache: "no-store" });
  } catch (err) {
    return { href, error: String(err && /** @type {any} */ (err).message ? /** @type {any} */ (err).message : err).slice(0, 200) };
  }
  const redirected = res.type === "opaqueredirect";
  const head = { href, status: res.status, statusText: String(res.statusText), ok: res.ok, redirected, contentType: res.headers.get("content-type") };
  /** @type {Uint8Array[]} */
  const chunks = [];
  let total = 0;
  let truncated = false;
  if (method !== "HEAD" && !redirected && res.body !== null) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = limit - total;
      if (value.length > room) {
        chunks.push(value.subarray(0, room));
        total += room;
        truncated = true;
        await reader.cancel().catch(() => {});
        break;
      }
      chunks.push(value);
      total += value.length;
    }
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  if (!binary) return { ...head, bytes: total, truncated, text: new TextDecoder().decode(bytes) };
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { ...head, bytes: total, truncated, data: btoa(bin) };
}

// ---------------------------------------------------------------- the handler

/**
 * @param {import("./support.js").HandlerDeps & {browser: import("./read.js").ReadBrowserApi}} deps
 * @returns {Array<[string, import("../lib/dispatch.js").Handler]>}
 */
export function fetchHandlers(deps) {
  const { browser, ensureOrigin, confirm } = deps;

  /** @type {import("../lib/dispatch.js").Handler} */
  async function pageFetch(args, ctx) {
    if (!isPlainObject(ctx.policy) || ctx.policy.pageFetch !== true) {
      throw new BridgeError(CODE.FETCH_OFF, 'page_fetch is off: the signed policy does not enable "pageFetch" (`tabwarden policy set pageFetch=true` turns it on)');
    }
    const req = fetchRequest(args);
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    const origin = await ensureOrigin(tab?.url, ctx, "page_fetch");
    if (req.origin !== origin && !isApproved(req.origin, ctx.policy.origins)) {
      throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, `page_fetch sends requests only to approved sites, and ${req.origin} is not one: open it with tab_open to ask the person first`);
    }
    const pageUrl = String(tab?.url ?? "");
    // Every call, no grace period: the person sees the method and URL each time.
    const decision = await confirm({ kind: "action", tool: "page_fetch", origin, detail: fetchDetail(req, pageUrl),
      presence: null, client: ctx.client, timeoutMs: confirmTimeoutMs(ctx.policy) });
    refuseUnlessAllowed(decision, "page_fetch");
    const now = await ownedTab(deps, ctx, tabId);
    if (originOf(now?.url) !== origin) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the page left the approved origin");
    const binary = req.saveAs !== null;
    const limit = binary ? MAX_SAVE_BYTES + 1 : req.maxBytes;
    let results;
    try {
      results = await step(ctx, "send the request", browser.executeScriptArgs(tabId, fetchInPage,
        [req.url, req.method, req.headers, req.body, limit, binary], "ISOLATED"), FETCH_STEP_MS);
    } catch (err) {
      if (err instanceof BridgeError) throw err; // the step's timeout
      await ownedTab(deps, ctx, tabId);
      throw new BridgeError(CODE.FETCH_FAILED, "the request could not be sent from this page");
    }
    const out = Array.isArray(results) ? results[0]?.result : undefined;
    if (!isPlainObject(out)) throw new BridgeError(CODE.FETCH_FAILED, "the request could not be sent from this page");
    if (originOf(out.href) !== origin) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the page left the approved origin");
    if (typeof out.error === "string") throw new BridgeError(CODE.FETCH_FAILED, `the request failed in the page: ${out.error}`);
    if (binary && out.truncated === true) {
      throw new BridgeError(CODE.MESSAGE_TOO_LARGE, `the answer is larger than ${MAX_SAVE_BYTES} bytes: nothing was saved`);
    }
    const answer = {
      url: req.url,
      method: req.method,
      status: Number.isInteger(out.status) ? out.status : 0,
      statusText: typeof out.statusText === "string" ? out.statusText.slice(0, 200) : "",
      ok: out.ok === true,
      redirected: out.redirected === true,
      contentType: typeof out.contentType === "string" ? out.contentType.slice(0, 200) : null,
      bytes: Number.isInteger(out.bytes) ? out.bytes : 0,
      bodyTruncated: out.truncated === true,
    };
    if (binary) return { ...answer, data: typeof out.data === "string" ? out.data : "" };
    return req.method === "HEAD" ? answer : { ...answer, body: maskCards(String(out.text ?? "")) };
  }

  return [["page_fetch", pageFetch]];
}
