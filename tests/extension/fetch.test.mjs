import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/lib/bridge-error.js";
import { createOwnership } from "../../extension/lib/ownership.js";
import { createLoadWatcher } from "../../extension/lib/tab-load.js";
import { FETCH_HEADERS, MAX_SAVE_BYTES, fetchDetail, fetchHandlers, fetchInPage, fetchRequest } from "../../extension/handlers/fetch.js";
import { fakeTimers } from "./helpers/fakes.mjs";

const OK = "http://127.0.0.1:8000";
const OTHER = "http://127.0.0.1:9000";
const POLICY = { origins: [OK, OTHER], confirm: [], confirmTimeoutSeconds: 30 };
const ON = { session: "s1", policy: { ...POLICY, pageFetch: true } };

/**
 * The handler with a fake browser whose executeScriptArgs runs fetchInPage against a scripted
 * server (`answer(url, init)` → a Response), the page at the tab's URL.
 */
function harness({ decision = "allow", answer = () => new Response("hello 4111 1111 1111 1111") } = {}) {
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
    if (!ctx.policy.origins.includes(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const confirm = async (req) => { calls.confirm.push(req); return decision; };
  const routes = new Map(fetchHandlers({ browser, ownership, loads, ensureOrigin, confirm }));
  const open = (id, url, session = "s1") => {
    tabs.set(id, { id, windowId: 7, url, title: "t", status: "complete" });
    ownership.claim(session, id);
  };
  const call = (args, ctx = ON) => routes.get("page_fetch")(args, ctx);
  return { call, calls, open };
}

test("fetchRequest sends only the methods and headers it lists, never a body with GET or HEAD", () => {
  const base = { tabId: 1, url: `${OK}/api` };
  assert.deepEqual(fetchRequest(base), { url: `${OK}/api`, origin: OK, method: "GET", body: null, headers: {}, maxBytes: 100_000, saveAs: null });
  for (const name of ["Cookie", "authorization", "Origin", "Host", "Proxy-Authorization", "X-Forwarded-For"]) {
    assert.throws(() => fetchRequest({ ...base, headers: { [name]: "x" } }), (e) => e.code === "bad_request", name);
  }
  assert.equal(fetchRequest({ ...base, headers: { "Content-Type": "application/json" } }).headers["content-type"], "application/json");
  assert.throws(() => fetchRequest({ ...base, headers: { accept: "a\r\nCookie: x" } }), (e) => e.code === "bad_request");
  assert.throws(() => fetchRequest({ ...base, method: "TRACE" }), (e) => e.code === "bad_request");
  assert.throws(() => fetchRequest({ ...base, body: "x" }), (e) => e.code === "bad_request");
  assert.throws(() => fetchRequest({ ...base, method: "HEAD", body: "x" }), (e) => e.code === "bad_request");
  assert.throws(() => fetchRequest({ ...base, url: "file:///etc/passwd" }), (e) => e.code === "bad_request");
  assert.throws(() => fetchRequest({ ...base, url: "http://u:p@127.0.0.1:8000/" }), (e) => e.code === "bad_request");
  for (const saveAs of ["../x", "a/b", ".hidden", "", "a..b"]) {
    assert.throws(() => fetchRequest({ ...base, saveAs }), (e) => e.code === "bad_request", saveAs);
  }
  assert.ok(FETCH_HEADERS.every((h) => h === h.toLowerCase()));
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
    await assert.rejects(h.call({ tabId: 1, url: `${OK}/api` }, { session: "s1", policy }), (e) => e.code === "fetch_off" && /pageFetch/.test(e.message));
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

test("a redirect is reported, never followed; a network failure is fetch_failed", async () => {
  const h = harness({ answer: () => { throw new TypeError("Failed to fetch"); } });
  h.open(1, `${OK}/`);
  await assert.rejects(h.call({ tabId: 1, url: `${OK}/api` }), (e) => e.code === "fetch_failed" && /Failed to fetch/.test(e.message));
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
