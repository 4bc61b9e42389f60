import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { FETCH_HEADERS, MAX_SAVE_BYTES, fetchDetail, fetchHandlers, fetchInPage, fetchRequest } from "../../extension/handlers/fetch.js";
import { DELIVERY, createDeliveryWatch } from "../../extension/worker/fetch-delivery.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";
import { argsRefusal } from "../../extension/worker/dispatch.js";
import { parsePolicy } from "../../extension/worker/policy.js";

const OK = "http://127.0.0.1:8000";
const OTHER = "http://127.0.0.1:9000";
const POLICY = { origins: [OK, OTHER], confirm: [], confirmTimeoutSeconds: 30 };
const ON = { session: "s1", policy: parsePolicy({ ...POLICY, pageFetch: true }) };

/**
 * The handler with a fake browser whose executeScriptArgs runs fetchInPage against a scripted
 * server (`answer(url, init)` → a Response), the page at the tab's URL.
 */
function harness({ decision = "allow", answer = () => new Response("hello 4111 1111 1111 1111"), cdp } = {}) {
  const ownership = createOwnership();
  const loads = createLoadWatcher(fakeTimers());
  const tabs = new Map();
  const calls = { confirm: [], script: [], sent: [] };
  const browser = {
    getTab: async (id) => { const t = tabs.get(id); if (!t) throw new Error("No tab"); return { ...t }; },
    executeScriptArgs: async (tabId, func, args, world) => {
      calls.script.push([tabId, func.name, world]);
      const saved = { location: Object.getOwnPropertyDescriptor(globalThis, "location"), fetch: globalThis.fetch };
      Object.defineProperty(globalThis, "location", { value: { href: tabs.get(tabId).url }, configurable: true, writable: true });
      globalThis.fetch = async (url, init) => { calls.sent.push([url, init]); return answer(url, init); };
      try {
        return [{ result: structuredClone(await func(...structuredClone(args))) }];
      } finally {
        if (saved.location) Object.defineProperty(globalThis, "location", saved.location);
        else delete globalThis.location;
        globalThis.fetch = saved.fetch;
      }
    },
  };
  const ensureOrigin = async (url, ctx) => {
    const o = url && new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const confirm = async (req) => { calls.confirm.push(req); return decision; };
  const routes = new Map(fetchHandlers({ browser, ownership, loads, ensureOrigin, confirm, ...(cdp ? { cdp } : {}) }));
  const open = (id, url, session = "s1") => {
    tabs.set(id, { id, windowId: 7, url, title: "t", status: "complete" });
    ownership.claim(session, id);
  };
  const call = (args, ctx = ON) => routes.get("page_fetch")(args, ctx);
  return { call, calls, open, routes };
}

/** fetchRequest as the dispatcher reaches it: the wire schema's check first (bad_request). */
function checkedRequest(args) {
  const refused = argsRefusal("page_fetch", args);
  if (refused !== null) throw new BridgeError("bad_request", refused);
  return fetchRequest(args);
}

test("fetchRequest sends only the methods and headers it lists, never a body with GET or HEAD", () => {
  const base = { tabId: 1, url: `${OK}/api` };
  assert.deepEqual(checkedRequest(base), { url: `${OK}/api`, origin: OK, method: "GET", body: null, headers: {}, maxBytes: 100_000, saveAs: null });
  for (const name of ["Cookie", "authorization", "Origin", "Host", "Proxy-Authorization", "X-Forwarded-For"]) {
    assert.throws(() => checkedRequest({ ...base, headers: { [name]: "x" } }), (e) => e.code === "bad_request", name);
  }
  assert.equal(checkedRequest({ ...base, headers: { "Content-Type": "application/json" } }).headers["content-type"], "application/json");
  assert.throws(() => checkedRequest({ ...base, headers: { accept: "a", Accept: "b" } }), (e) => e.code === "bad_request");
  for (const value of ["a\r\nCookie: x", "a\nb", "a\0b", "x".repeat(1001), 5, ["a"]]) {
    assert.throws(() => checkedRequest({ ...base, headers: { accept: value } }), (e) => e.code === "bad_request", String(value));
  }
  for (const headers of ["accept: x", ["accept"], 1]) {
    assert.throws(() => checkedRequest({ ...base, headers }), (e) => e.code === "bad_request", String(headers));
  }
  for (const method of ["TRACE", "get", 1, ["GET"]]) {
    assert.throws(() => checkedRequest({ ...base, method }), (e) => e.code === "bad_request", String(method));
  }
  assert.throws(() => checkedRequest({ ...base, body: "x" }), (e) => e.code === "bad_request");
  assert.throws(() => checkedRequest({ ...base, method: "HEAD", body: "x" }), (e) => e.code === "bad_request");
  for (const body of [7, { a: 1 }, "x".repeat(1_000_001)]) {
    assert.throws(() => checkedRequest({ ...base, method: "POST", body }), (e) => e.code === "bad_request", typeof body);
  }
  assert.throws(() => checkedRequest({ ...base, url: "file:///etc/passwd" }), (e) => e.code === "bad_request");
  assert.throws(() => checkedRequest({ ...base, url: "http://u:p@127.0.0.1:8000/" }), (e) => e.code === "bad_request");
  for (const saveAs of ["../x", "a/b", ".hidden", "", "a..b", "a...", "a\\b", "x".repeat(256), 5]) {
    assert.throws(() => checkedRequest({ ...base, saveAs }), (e) => e.code === "bad_request", String(saveAs));
  }
  for (const saveAs of ["a", "a.", "items.json", "a.b.c", "Report 2026-12_03.csv"]) {
    assert.equal(checkedRequest({ ...base, saveAs }).saveAs, saveAs);
  }
  assert.ok(FETCH_HEADERS.every((h) => h === h.toLowerCase()));
});

test("a page_fetch whose args the schema refuses asks nobody and sends nothing", async () => {
  const { calls, open, routes } = harness();
  open(1, `${OK}/page`);
  const checked = schemaChecked((a) => routes.get(a));
  for (const bad of [{ method: "TRACE" }, { headers: { accept: "a\r\nCookie: x" } }, { saveAs: "a..b" }, { body: 1, method: "POST" }]) {
    await assert.rejects(checked("page_fetch", { tabId: 1, url: `${OK}/api`, ...bad }, ON), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
  assert.deepEqual(calls.confirm, []);
  assert.deepEqual(calls.sent, []);
  assert.deepEqual(calls.script, []);
});

test("the confirm window's text names the method, the URL, the page and where the answer goes", () => {
  const req = fetchRequest({ tabId: 1, url: `${OK}/api/items?id=7`, method: "POST", body: '{"a":1}', saveAs: "items.json" });
  const text = fetchDetail(req, `${OK}/app`);
  assert.match(text, /^Send this request from http:\/\/127\.0\.0\.1:8000\/app, with its cookies\?/);
  assert.ok(text.includes(`POST ${OK}/api/items?id=7`));
  assert.ok(text.includes('{"a":1}') && text.includes("items.json"));
});

test("off unless the policy says pageFetch: true: fetch_off, nothing asked, nothing sent", async () => {
  const h = harness();
  h.open(1, `${OK}/`);
  for (const policy of [POLICY, { ...POLICY, pageFetch: false }, { ...POLICY, pageFetch: "true" }, { ...POLICY, eval: true }]) {
    await assert.rejects(h.call({ tabId: 1, url: `${OK}/api` }, { session: "s1", policy: parsePolicy(policy) }), (e) => e.code === "fetch_off" && /pageFetch/.test(e.message));
  }
  assert.equal(h.calls.confirm.length, 0);
  assert.equal(h.calls.sent.length, 0);
});

test("every call is confirmed; denied → nothing sent; allowed → sent in the isolated world, with credentials, no redirect followed, body masked", async () => {
  const h = harness({ decision: "deny" });
  h.open(1, `${OK}/`);
  await assert.rejects(h.call({ tabId: 1, url: `${OK}/api` }), (e) => e.code === "confirm_denied");
  assert.equal(h.calls.sent.length, 0);

  const ok = harness();
  ok.open(1, `${OK}/`);
  const out = await ok.call({ tabId: 1, url: `${OK}/api`, method: "POST", body: "x=1", headers: { "content-type": "text/plain" } });
  const again = await ok.call({ tabId: 1, url: `${OK}/api` });
  assert.equal(ok.calls.confirm.length, 2, "no grace period: each call asks");
  assert.equal(ok.calls.confirm[0].tool, "page_fetch");
  assert.ok(ok.calls.confirm[0].detail.includes(`POST ${OK}/api`));
  assert.deepEqual(ok.calls.script[0], [1, "fetchInPage", "ISOLATED"]);
  const [, init] = ok.calls.sent[0];
  assert.equal(init.credentials, "include");
  assert.equal(init.redirect, "manual");
  assert.equal(init.body, "x=1");
  assert.equal(out.status, 200);
  assert.equal(out.body, "hello [card]"); // masked as page_text masks

  assert.equal(out.bodyTruncated, false);
  assert.equal(again.method, "GET");
});

test("a target on a site nobody approved is refused before anything is asked or sent", async () => {
  const h = harness();
  h.open(1, `${OK}/`);
  await assert.rejects(h.call({ tabId: 1, url: "http://evil.test/steal" }), (e) => e.code === "origin_not_approved");
  assert.equal(h.calls.confirm.length, 0);
  assert.equal(h.calls.sent.length, 0);
  await h.call({ tabId: 1, url: `${OTHER}/api` }); // another approved site is fine
  assert.equal(h.calls.sent.length, 1);
});

test("another session's tab does not exist for the caller", async () => {
  const h = harness();
  h.open(1, `${OK}/`, "s2");
  await assert.rejects(h.call({ tabId: 1, url: `${OK}/api` }), (e) => e.code === "tab_not_owned");
  assert.equal(h.calls.sent.length, 0);
});

test("maxBytes caps the text (bodyTruncated); saveAs carries base64 and refuses a body over the hard cap", async () => {
  const h = harness({ answer: () => new Response("a".repeat(5000)) });
  h.open(1, `${OK}/`);
  const capped = await h.call({ tabId: 1, url: `${OK}/big`, maxBytes: 100 });
  assert.equal(capped.body.length, 100);
  assert.equal(capped.bodyTruncated, true);
  const saved = await h.call({ tabId: 1, url: `${OK}/big`, saveAs: "big.txt" });
  assert.equal(Buffer.from(saved.data, "base64").toString(), "a".repeat(5000));
  assert.equal(saved.body, undefined);

  const huge = harness({ answer: () => new Response(new Uint8Array(MAX_SAVE_BYTES + 10)) });
  huge.open(1, `${OK}/`);
  await assert.rejects(huge.call({ tabId: 1, url: `${OK}/huge`, saveAs: "huge.bin" }), (e) => e.code === "message_too_large");
});

test("a redirect is reported, never followed; a failure with no debugger to ask is unknown, not fetch_failed", async () => {
  const h = harness({ answer: () => { throw new TypeError("Failed to fetch"); } });
  h.open(1, `${OK}/`);
  const unknown = await h.call({ tabId: 1, url: `${OK}/api`, method: "POST", body: "x" });
  assert.equal(unknown.delivery, "unknown");
  assert.match(unknown.hint, /not known whether this request reached the server/);
  assert.match(unknown.hint, /Do not repeat this POST/);
  const r = Response.error();
  Object.defineProperty(r, "type", { value: "opaqueredirect" });
  const redirect = harness({ answer: () => r });
  redirect.open(1, `${OK}/`);
  const out = await redirect.call({ tabId: 1, url: `${OK}/go` });
  assert.equal(out.redirected, true);
  assert.equal(out.body, "");
});

test("fetchInPage is self-contained (it is serialised into the page)", () => {
  assert.doesNotMatch(fetchInPage.toString(), /\bimport\b|BridgeError|CODE\./);
});

// ---------------------------------------------------------------- delivery

/** The tab's debugger, as worker/debugger.js offers it: listeners fed by `emit`, commands recorded. */
function fakeCdp({ attached = true } = {}) {
  const listeners = new Set();
  const sent = [];
  return {
    sent,
    ensureSoft: async () => attached,
    listen: (_tabId, fn) => { listeners.add(fn); return () => listeners.delete(fn); },
    send: async (_ctx, _tabId, method) => { sent.push(method); return {}; },
    emit: (method, params, sessionId) => { for (const fn of [...listeners]) fn(method, params, sessionId); },
    listening: () => listeners.size,
  };
}

const sentAs = (id, url, method, initiator = "script") => ["Network.requestWillBeSent",
  { requestId: id, request: { url, method }, initiator: { type: initiator }, type: initiator === "preflight" ? "Preflight" : "Fetch" }];

/** The events Chromium 156 sent (measured) for each way a cross-origin fetch ends. */
const STORIES = {
  corsBlocked: (url) => [sentAs("r1", url, "POST"), ["Network.requestWillBeSentExtraInfo", { requestId: "r1" }],
    ["Network.responseReceivedExtraInfo", { requestId: "r1", statusCode: 200 }],
    ["Network.loadingFailed", { requestId: "r1", errorText: "net::ERR_FAILED", corsErrorStatus: { corsError: "MissingAllowOriginHeader" } }]],
  refused: (url) => [sentAs("r2", url, "POST"), ["Network.loadingFailed", { requestId: "r2", errorText: "net::ERR_CONNECTION_REFUSED" }]],
  preflightRefused: (url) => [sentAs("p1", url, "OPTIONS", "preflight"), sentAs("r3", url, "PUT"),
    ["Network.requestWillBeSentExtraInfo", { requestId: "p1" }], ["Network.responseReceivedExtraInfo", { requestId: "p1", statusCode: 200 }],
    ["Network.responseReceived", { requestId: "p1", response: { status: 200 } }], ["Network.loadingFinished", { requestId: "p1" }],
    ["Network.loadingFailed", { requestId: "r3", errorText: "net::ERR_FAILED", corsErrorStatus: { corsError: "PreflightMissingAllowOriginHeader" } }]],
  resetAfterSending: (url, method) => [sentAs("r4", url, method), ["Network.requestWillBeSentExtraInfo", { requestId: "r4" }],
    ["Network.loadingFailed", { requestId: "r4", errorText: "net::ERR_CONNECTION_RESET" }]],
};

/** A harness whose page fetch fails after the debugger reported `story` (late: after the rejection). */
function failing(story, { late = false, policy = {} } = {}) {
  const cdp = fakeCdp();
  const h = harness({ cdp, answer: (url, init) => {
    const tell = () => { for (const [m, p] of STORIES[story](url, init?.method ?? "GET")) cdp.emit(m, p); };
    if (late) setImmediate(tell);
    else tell();
    throw new TypeError("Failed to fetch");
  } });
  h.open(1, `${OK}/`);
  const ctx = { ...ON, policy: parsePolicy({ ...POLICY, pageFetch: true, ...policy }) };
  return { cdp, call: (args) => h.call({ tabId: 1, ...args }, ctx) };
}

test("a POST the server answered without CORS headers was delivered: never fetch_failed, and not to be repeated", async () => {
  for (const late of [false, true]) {
    const f = failing("corsBlocked", { late });
    const out = await f.call({ url: `${OTHER}/api/pay`, method: "POST", body: "amount=5" });
    assert.equal(out.delivery, DELIVERY.SENT_UNREADABLE, `late=${late}`);
    assert.equal(out.ok, false);
    assert.equal("body" in out, false, "no answer is made up");
    assert.match(out.hint, /server received this request and answered/);
    assert.match(out.hint, /MissingAllowOriginHeader/);
    assert.match(out.hint, /Do not repeat this POST: it would act twice/);
    assert.deepEqual(f.cdp.sent, ["Network.enable", "Network.disable"], "watched for this call only");
    assert.equal(f.cdp.listening(), 0);
  }
});

test("a request Chrome never sent is fetch_failed, said to be safe to repeat", async () => {
  for (const [story, method, body] of [["refused", "POST", "x"], ["preflightRefused", "PUT", "{}"]]) {
    const f = failing(story);
    await assert.rejects(f.call({ url: `${OTHER}/api`, method, body }),
      (e) => e.code === "fetch_failed" && /was not sent/.test(e.message) && /repeating it is safe/.test(e.message), story);
  }
});

test("sent but unanswered (a reset connection) is unknown, with a hint not to repeat a POST; a GET may be", async () => {
  const f = failing("resetAfterSending");
  const out = await f.call({ url: `${OTHER}/api`, method: "POST", body: "x" });
  assert.equal(out.delivery, DELIVERY.UNKNOWN);
  assert.match(out.hint, /Do not repeat this POST/);
  const get = await failing("resetAfterSending").call({ url: `${OTHER}/api` });
  assert.equal(get.delivery, DELIVERY.UNKNOWN);
  assert.match(get.hint, /A GET changes nothing, so repeating it is safe/);
});

test("with networkCapture on, the capture's Network domain is left as it is", async () => {
  const f = failing("corsBlocked", { policy: { networkCapture: true } });
  const out = await f.call({ url: `${OTHER}/api`, method: "POST", body: "x" });
  assert.equal(out.delivery, DELIVERY.SENT_UNREADABLE);
  assert.deepEqual(f.cdp.sent, [], "neither enabled nor disabled");
});

test("an answered fetch says so", async () => {
  const cdp = fakeCdp();
  const h = harness({ cdp });
  h.open(1, `${OK}/`);
  const out = await h.call({ tabId: 1, url: `${OK}/api` });
  assert.equal(out.delivery, DELIVERY.ANSWERED);
  assert.equal(out.hint, undefined);
});

test("the watch: only our method and URL, never the preflight; identical requests in flight are unknown", () => {
  const url = `${OTHER}/a?b=1`;
  const w = createDeliveryWatch("POST", `${url}#frag`);
  w.event(...sentAs("x", url, "OPTIONS", "preflight"));
  w.event("Network.loadingFailed", { requestId: "x", errorText: "net::ERR_CONNECTION_REFUSED" });
  assert.equal(w.settled(), false, "a preflight is not the request");
  w.event(...sentAs("y", `${OTHER}/other`, "POST"));
  w.event("Network.loadingFailed", { requestId: "y", errorText: "net::ERR_CONNECTION_REFUSED" });
  assert.equal(w.verdict().delivery, DELIVERY.UNKNOWN, "another URL is not ours");
  // ExtraInfo may come before requestWillBeSent.
  w.event("Network.requestWillBeSentExtraInfo", { requestId: "z" });
  w.event(...sentAs("z", url, "POST"));
  w.event("Network.loadingFailed", { requestId: "z", errorText: "net::ERR_CONNECTION_REFUSED" });
  assert.equal(w.verdict().delivery, DELIVERY.UNKNOWN, "on the wire: never 'not sent', whatever the error says");
  const two = createDeliveryWatch("POST", url);
  for (const id of ["a", "b"]) two.event(...sentAs(id, url, "POST"));
  two.event("Network.loadingFailed", { requestId: "a", errorText: "net::ERR_CONNECTION_REFUSED" });
  two.event("Network.responseReceivedExtraInfo", { requestId: "b", statusCode: 200 });
  two.event("Network.loadingFailed", { requestId: "b", errorText: "net::ERR_FAILED", corsErrorStatus: { corsError: "MissingAllowOriginHeader" } });
  assert.equal(two.verdict().delivery, DELIVERY.UNKNOWN, "which one was ours is not known");
});
