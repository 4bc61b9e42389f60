// handlers/fetch.js — page_fetch: one HTTP request sent from an agent's tab with the page's
// credentials (its cookies), to the tab's site or another approved one. Off unless the signed
// policy enables it (pageFetch); then the person allows EVERY call in the confirm window, seeing
// the method and the URL. The request runs in the extension's isolated world in the page (the
// page's own scripts cannot wrap or read it), never follows a redirect (a redirect could carry the
// page's cookies to a site nobody approved), and sets only the headers in FETCH_HEADERS. The text
// body comes back masked (card-like numbers) and capped at maxBytes (bodyTruncated); with saveAs
// the raw bytes (at most MAX_SAVE_BYTES, refused above) go to the MCP server, which writes them
// into its download sandbox and never hands them to the agent. Whether the request reached the
// server is told apart (`delivery`, worker/fetch-delivery.js from the tab's CDP Network events):
// "answered" (the page read the answer), "sent_unreadable" (the server answered, the page may not
// read it: CORS) and "unknown" (no word either way) come back as results with a hint not to repeat
// a request that changes something; only a request Chrome failed before sending it is
// `fetch_failed`. Thin glue: it must never touch the
// chrome global, send anything before the policy, the ownership, both origins and the person
// said yes, return an answer read after the tab left the gated origin, or claim a request failed
// when it may have reached the server.

import { BridgeError } from "../shared/bridge-error.js";
import { turnOnWords } from "../shared/policy-words.js";
import { refuseUnlessAllowed } from "../shared/confirm-window.js";
import { CODE } from "../shared/error-codes.js";
import { DELIVERY, createDeliveryWatch } from "../worker/fetch-delivery.js";
import { originOf } from "../shared/origin.js";
import { maskCards } from "../worker/redact.js";
import { isPlainObject } from "../shared/wire.js";
import { argInt, argTabId, ownedTab, step } from "./support.js";

/** The methods page_fetch sends. */
export const FETCH_METHODS = Object.freeze(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]);
/** The request headers it may set (mcp_server/catalogue/fetch.py FETCH_HEADERS): never Cookie,
 * Authorization, Origin or anything else the browser computes. */
export const FETCH_HEADERS = Object.freeze(["accept", "accept-language", "cache-control", "content-type",
  "if-match", "if-modified-since", "if-none-match", "x-requested-with"]);
/** Most bytes of a text body returned. */
export const MAX_TEXT_BYTES = 1_000_000;
/** Most bytes saveAs carries; a larger body is refused (message_too_large), nothing saved. */
export const MAX_SAVE_BYTES = 10 * 1024 * 1024;
/** How much of a body the confirm window shows. */
const SHOWN_BODY = 2000;
/** Longest wait for the answer (within the call's deadline). */
const FETCH_STEP_MS = 60_000;
/** Longest wait, after fetch() rejected, for Chrome's word on what became of the request. */
const DELIVERY_WAIT_MS = 3000;
/** Methods that change nothing when repeated. */
const SAFE_METHODS = new Set(["GET", "HEAD"]);

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
  // The types, the method's enum, the body's and each header value's length and one-line form,
  // maxBytes and saveAs's file-name form are the wire schema's (worker/dispatch.js checks it
  // before any handler runs). Checked here: what a schema cannot state.
  const url = args.url;
  const origin = originOf(url);
  if (typeof url !== "string" || origin === null) {
    throw new BridgeError(CODE.BAD_REQUEST, "url must be an absolute http(s) URL without credentials");
  }
  const method = typeof args.method === "string" && FETCH_METHODS.includes(args.method) ? args.method : "GET";
  const body = typeof args.body === "string" ? args.body : null;
  if (body !== null && SAFE_METHODS.has(method)) {
    throw new BridgeError(CODE.BAD_REQUEST, `a ${method} request has no body`);
  }
  const raw = isPlainObject(args.headers) ? args.headers : {};
  /** @type {Record<string, string>} */
  const headers = {};
  for (const [name, value] of Object.entries(raw)) {
    const lower = name.toLowerCase();
    if (!FETCH_HEADERS.includes(lower)) {
      throw new BridgeError(CODE.BAD_REQUEST, `page_fetch does not set the header ${JSON.stringify(name.slice(0, 60))}: only ${FETCH_HEADERS.join(", ")}`);
    }
    if (Object.hasOwn(headers, lower)) throw new BridgeError(CODE.BAD_REQUEST, `header ${lower} must be given once`);
    headers[lower] = String(value);
  }
  const maxBytes = argInt(args, "maxBytes", 100_000, 1, MAX_TEXT_BYTES);
  const saveAs = typeof args.saveAs === "string" ? args.saveAs : null;
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

/**
 * The result of a request that may have reached the server though the page could not read an
 * answer: never a failure, with what to do before repeating it.
 * @param {FetchRequest} req
 * @param {string} delivery DELIVERY.SENT_UNREADABLE or DELIVERY.UNKNOWN
 * @param {string} reason Chrome's word (a CORS error name or a net error), for the hint
 */
export function undeliveredAnswer(req, delivery, reason) {
  const again = SAFE_METHODS.has(req.method)
    ? `A ${req.method} changes nothing, so repeating it is safe.`
    : `Do not repeat this ${req.method}: it would act twice. Check on the site (e.g. read the page) whether it took effect.`;
  const hint = delivery === DELIVERY.SENT_UNREADABLE
    ? `The server received this request and answered, but this page may not read the answer (${reason.slice(0, 100)}). ${again}`
    : `It is not known whether this request reached the server (${reason.slice(0, 100)}). ${again}`;
  return { url: req.url, method: req.method, delivery, status: 0, statusText: "", ok: false, redirected: false,
    contentType: null, bytes: 0, bodyTruncated: false, hint };
}

// ---------------------------------------------------------------- the handler

/**
 * @param {import("./support.js").HandlerDeps & {browser: import("./read.js").ReadBrowserApi, cdp?: import("../worker/debugger.js").DebuggerManager}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function fetchHandlers(deps) {
  const { browser, ensureOrigin, confirm, cdp } = deps;

  /**
   * Watch the tab's Network events for the request (none when the debugger is away): the
   * domain is enabled for the call unless the network capture holds it already.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {FetchRequest} req
   */
  async function watchDelivery(ctx, tabId, req) {
    const watch = createDeliveryWatch(req.method, req.url);
    if (cdp === undefined || !(await cdp.ensureSoft(ctx, tabId))) return null;
    const unlisten = cdp.listen(tabId, (method, params, sessionId) => {
      if (sessionId === undefined) watch.event(method, params);
    });
    const captured = ctx.policy.allows("networkCapture");
    try {
      if (!captured) await cdp.send(ctx, tabId, "Network.enable", {}, "watch the request");
    } catch {
      unlisten();
      return null;
    }
    const stop = () => {
      unlisten();
      if (!captured) cdp.send(ctx, tabId, "Network.disable", {}, "stop watching").catch(() => {});
    };
    return { watch, stop };
  }

  /**
   * What became of a request whose fetch() did not answer: throws fetch_failed only when Chrome
   * says it was never sent, else the result that says it may have arrived.
   * @param {import("./support.js").Ctx} ctx
   * @param {FetchRequest} req
   * @param {{watch: ReturnType<typeof createDeliveryWatch>} | null} watching
   * @param {string} what the page's own error
   * @param {boolean} started whether the fetch ran at all (the script answered)
   */
  async function judged(ctx, req, watching, what, started) {
    if (watching === null) return undeliveredAnswer(req, DELIVERY.UNKNOWN, `the debugger is not on this tab: ${what}`);
    try {
      await step(ctx, "learn whether the request was sent", watching.watch.whenSettled(), DELIVERY_WAIT_MS);
    } catch {
      // Chrome did not finish reporting in time: judged on what it said so far.
    }
    const { delivery, reason } = watching.watch.verdict();
    if (delivery === DELIVERY.NOT_SENT || (!started && reason === "Chrome reported no such request")) {
      throw new BridgeError(CODE.FETCH_FAILED, `the request was not sent (${started ? reason : what}): nothing reached ${req.origin}, so repeating it is safe`);
    }
    return undeliveredAnswer(req, delivery, started ? reason : what);
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageFetch(args, ctx) {
    if (!ctx.policy.allows("pageFetch")) {
      throw new BridgeError(CODE.FETCH_OFF, `page_fetch is off: the signed policy does not enable "pageFetch"; ${turnOnWords("pageFetch")}`);
    }
    const req = fetchRequest(args);
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    const origin = await ensureOrigin(tab?.url, ctx, "page_fetch");
    if (req.origin !== origin && !ctx.policy.approves(req.origin)) {
      throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, `page_fetch sends requests only to approved sites, and ${req.origin} is not one: open it with tab_open to ask the person first`);
    }
    const pageUrl = String(tab?.url ?? "");
    // Every call, no grace period: the person sees the method and URL each time.
    const decision = await confirm({ kind: "action", tool: "page_fetch", origin, detail: fetchDetail(req, pageUrl),
      presence: null, client: ctx.client, timeoutMs: ctx.policy.confirmTimeoutMs });
    refuseUnlessAllowed(decision, "page_fetch");
    const now = await ownedTab(deps, ctx, tabId);
    if (originOf(now?.url) !== origin) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the page left the approved origin");
    const binary = req.saveAs !== null;
    const limit = binary ? MAX_SAVE_BYTES + 1 : req.maxBytes;
    const watching = await watchDelivery(ctx, tabId, req);
    try {
      let results;
      try {
        results = await step(ctx, "send the request", browser.executeScriptArgs(tabId, fetchInPage,
          [req.url, req.method, req.headers, req.body, limit, binary], "ISOLATED"), FETCH_STEP_MS);
      } catch (err) {
        if (err instanceof BridgeError) throw err; // the step's timeout
        await ownedTab(deps, ctx, tabId);
        return await judged(ctx, req, watching, "the script did not run in this page", false);
      }
      const out = Array.isArray(results) ? results[0]?.result : undefined;
      if (!isPlainObject(out)) return await judged(ctx, req, watching, "the script did not run in this page", false);
      if (originOf(out.href) !== origin) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the page left the approved origin");
      if (typeof out.error === "string") return await judged(ctx, req, watching, out.error.slice(0, 200), true);
      return answered(req, out, binary);
    } finally {
      watching?.stop();
    }
  }

  /**
   * The answer the page read.
   * @param {FetchRequest} req
   * @param {Record<string, unknown>} out
   * @param {boolean} binary
   */
  function answered(req, out, binary) {
    if (binary && out.truncated === true) {
      throw new BridgeError(CODE.MESSAGE_TOO_LARGE, `the answer is larger than ${MAX_SAVE_BYTES} bytes: nothing was saved`);
    }
    const answer = {
      url: req.url,
      method: req.method,
      delivery: DELIVERY.ANSWERED,
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
