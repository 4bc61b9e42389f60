import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BODY_CAP, CONSOLE_RING, GLOBAL_BODY_BUDGET, NETWORK_RING, TAB_BODY_BUDGET, createCapture,
} from "../../extension/worker/capture.js";
import { maskText, maskUrl } from "../../extension/worker/mask.js";
import { utf8Length } from "../../extension/worker/chunking.js";
import { createDebuggerManager } from "../../extension/worker/debugger.js";
import { createDialogs } from "../../extension/worker/dialogs.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { captureHandlers } from "../../extension/handlers/capture.js";
import { step } from "../../extension/handlers/support.js";
import { fakeLog, flush, schemaChecked } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

/** What a policy approving exactly `origins` answers. @param {...string} origins */
const approving = (...origins) => parsePolicy({ origins }).approves;

const A = "http://a.test";
const B = "http://b.test";
const ON = { origins: [A], consoleCapture: true, networkCapture: true };
const OFF = { origins: [A], consoleCapture: false, networkCapture: false };
const T0 = 1_700_000_000_000;

/** A capture store over a fake CDP: `bodies` answers getResponseBody by requestId. */
function setup({ tabs = [1], clock = T0 } = {}) {
  const sent = [];
  const holds = [];
  const bodies = new Map();
  let time = clock;
  const capture = createCapture({
    send: async (tabId, method, params) => {
      sent.push([tabId, method, params]);
      if (method === "Network.getResponseBody") {
        const b = bodies.get(params.requestId);
        if (b === undefined) throw new Error("No resource with given identifier found");
        return b;
      }
      return {};
    },
    hold: (tabId, domain, on) => holds.push([tabId, domain, on]),
    attached: () => tabs,
    now: () => time,
    log: fakeLog(),
  });
  return { capture, sent, holds, bodies, tick: (ms) => { time += ms; } };
}

/** The CDP events a page on `origin` makes: its main world, then console.error(...texts). */
function context(capture, tabId, id, origin) {
  capture.event(tabId, "Runtime.executionContextCreated", { context: { id, origin, auxData: { isDefault: true } } });
}
const consoleError = (capture, tabId, ctxId, text, ts, type = "error") =>
  capture.event(tabId, "Runtime.consoleAPICalled", { type, args: [{ type: "string", value: text }], executionContextId: ctxId, timestamp: ts });
const Q = { level: "all", limit: 50, clear: false };

test("masking: cards, JWTs, bearer tokens, secret-named values; URLs lose userinfo, fragment and secret query values", () => {
  const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlX2hlcmU";
  // An unquoted value runs to the next "&" or the end of the line: a multi-word secret is masked whole.
  assert.equal(maskText("save failed: token=abc123 ok"), "save failed: token=[masked: 9 chars, letters+digits+spaces]");
  const text = maskText(`card 4111 1111 1111 1111 token=${"s3cr3tV4lue"}\njwt ${jwt} Authorization: Bearer abcdefgh12345678 {"password": "hunter22"}`);
  for (const secret of ["4111", "s3cr3tV4lue", jwt.slice(0, 20), "abcdefgh12345678", "hunter22"]) assert.ok(!text.includes(secret), `${secret} in ${text}`);
  assert.match(text, /card \[card\]/);
  assert.match(text, /token=\[masked: 11 chars/);
  const url = maskUrl(`https://user:pw@api.a.test/v1/items?page=2&access_token=abc123def456&q=shoes&x=${jwt}#frag`);
  assert.equal(url.startsWith("https://api.a.test/v1/items?page=2&access_token=[masked: 12 chars"), true, url);
  assert.ok(!url.includes("abc123def456") && !url.includes("user") && !url.includes("pw@") && !url.includes("frag") && !url.includes(jwt.slice(0, 20)), url);
  assert.match(url, /q=shoes/);
  assert.equal(maskUrl("data:text/plain,hello"), "data:");
});

test("masking a body at the cap stays linear on runs built to make a regex backtrack; long console text is cut before masking", () => {
  // Each would take many minutes with a name pattern that restarts inside a run.
  for (const nasty of ["a-".repeat(BODY_CAP / 2), "x".repeat(BODY_CAP), `${"pass".repeat(BODY_CAP / 8)}=`, " ".repeat(BODY_CAP)]) {
    assert.equal(typeof maskText(nasty), "string");
  }
  assert.equal(maskText(`{"${"k".repeat(70)}": "v", "sessionToken": "abc123"}`), `{"${"k".repeat(70)}": "v", "sessionToken": "[masked: 6 chars, letters+digits]"}`);
});

test("capture off: nothing is recorded, nothing is enabled; on: begins on every attached tab", async () => {
  const { capture, sent, holds } = setup({ tabs: [1, 2] });
  await capture.observe(parsePolicy(OFF));
  context(capture, 1, 7, A);
  consoleError(capture, 1, 7, "while off", T0 + 1);
  assert.deepEqual(capture.console(1, Q, approving(A)), { enabled: false, entries: [], withheld: 0, more: 0 });
  assert.deepEqual(sent, []);
  await capture.observe(parsePolicy(ON));
  assert.deepEqual(sent.map(([t, m]) => `${t}:${m}`).sort(), ["1:Log.enable", "1:Network.enable", "1:Runtime.enable", "2:Log.enable", "2:Network.enable", "2:Runtime.enable"]);
  assert.deepEqual(holds, [[1, "Runtime", true], [2, "Runtime", true]]);
  // Seeing the same policy again enables nothing more.
  await capture.observe(parsePolicy(ON));
  assert.equal(sent.length, 6);
});

test("console: errors, warnings, asserts and exceptions of approved origins, masked; others withheld; replays and pre-capture ones dropped", async () => {
  const { capture } = setup();
  await capture.observe(parsePolicy(ON));
  context(capture, 1, 7, A);
  context(capture, 1, 8, B); // an iframe of another site
  // Runtime.enable's replay of what the page logged before capture began stays out.
  consoleError(capture, 1, 7, "before capture", T0 - 5);
  consoleError(capture, 1, 7, "boom 4111 1111 1111 1111", T0 + 1);
  consoleError(capture, 1, 7, "boom 4111 1111 1111 1111", T0 + 1); // the same one replayed
  consoleError(capture, 1, 7, "careful", T0 + 2, "warning");
  consoleError(capture, 1, 7, "just a log", T0 + 3, "log");
  consoleError(capture, 1, 8, "from the frame: secret", T0 + 4);
  capture.event(1, "Runtime.exceptionThrown", {
    timestamp: T0 + 5,
    exceptionDetails: { text: "Uncaught", executionContextId: 7, exception: { type: "object", subtype: "error", description: "TypeError: x is undefined\n    at h (http://a.test/app.js:1:2)" } },
  });
  capture.event(1, "Log.entryAdded", { entry: { source: "network", level: "error", text: "Failed to load resource: 404", url: `${A}/missing`, timestamp: T0 + 6 } });
  capture.event(1, "Log.entryAdded", { entry: { source: "other", level: "info", text: "info", url: `${A}/`, timestamp: T0 + 7 } });
  consoleError(capture, 1, 99, "unknown context", T0 + 8); // no known origin: never shown
  const got = capture.console(1, Q, approving(A));
  assert.equal(got.enabled, true);
  assert.deepEqual(got.entries.map((e) => [e.level, e.source, e.text, e.origin]), [
    ["error", "console", "boom [card]", A],
    ["warning", "console", "careful", A],
    ["error", "exception", "Uncaught TypeError: x is undefined\n    at h (http://a.test/app.js:1:2)", A],
    ["error", "browser", "Failed to load resource: 404", A],
  ]);
  assert.equal(got.withheld, 2);
  assert.deepEqual(capture.console(1, { ...Q, level: "warning" }, approving(A)).entries.map((e) => e.text), ["careful"]);
  const last = capture.console(1, { ...Q, limit: 1 }, approving(A));
  assert.deepEqual([last.entries.map((e) => e.text), last.more], [["Failed to load resource: 404"], 3]);
  // Approving the frame's site later shows its entries (filtered when read, masked when kept).
  assert.equal(capture.console(1, Q, approving(A, B)).entries.length, 5);
  // clear: gone, and a replay of a cleared entry stays out.
  capture.console(1, { ...Q, clear: true }, approving(A));
  consoleError(capture, 1, 7, "careful", T0 + 2, "warning");
  assert.deepEqual(capture.console(1, Q, approving(A)).entries, []);
  consoleError(capture, 1, 7, "after clear", T0 + 20);
  assert.deepEqual(capture.console(1, Q, approving(A)).entries.map((e) => e.text), ["after clear"]);
});

test("console: a huge message is kept cut and masked, the token the cut went through dropped", async () => {
  const { capture } = setup();
  await capture.observe(parsePolicy(ON));
  context(capture, 1, 7, A);
  // The cut (at twice the cap) goes through the secret; masking the cards before it shrinks
  // the text so far that the secret's first half would land inside the cap.
  consoleError(capture, 1, 7, `${"4111 1111 1111 1111, ".repeat(190)}SECRETVALUE1234567890abcdef ${"y".repeat(10_000_000)}`, T0 + 1);
  const [e] = (capture.console(1, Q, approving(A))).entries;
  assert.ok(e.text.length <= 2001 && e.text.endsWith("…"), String(e.text.length));
  assert.ok(e.text.startsWith("[card], [card], "), e.text.slice(0, 40));
  assert.ok(!e.text.includes("SECRET") && !e.text.includes("4111") && !e.text.includes("yyy"), e.text.slice(-60));
});

test("console: a bounded ring per tab; the tabs are separate; a forgotten tab's entries are gone", async () => {
  const { capture } = setup({ tabs: [1, 2] });
  await capture.observe(parsePolicy(ON));
  context(capture, 1, 7, A);
  context(capture, 2, 7, A);
  for (let i = 0; i < CONSOLE_RING + 25; i++) consoleError(capture, 1, 7, `e${i}`, T0 + 10 + i);
  consoleError(capture, 2, 7, "tab two", T0 + 10);
  const one = capture.console(1, { ...Q, limit: 200 }, approving(A));
  assert.equal(one.entries.length, CONSOLE_RING);
  assert.equal(one.entries[0].text, "e25");
  // A replay of an evicted entry does not come back.
  consoleError(capture, 1, 7, "e0", T0 + 10);
  assert.equal(capture.console(1, { ...Q, limit: 200 }, approving(A)).entries[0].text, "e25");
  assert.deepEqual(capture.console(2, Q, approving(A)).entries.map((e) => e.text), ["tab two"]);
  capture.forget(1);
  assert.deepEqual(capture.console(1, Q, approving(A)).entries, []);
});

test("turning capture off drops every buffer before observe returns, stops the domains, and records nothing more", async () => {
  const { capture, sent, holds, bodies } = setup();
  await capture.observe(parsePolicy(ON));
  context(capture, 1, 7, A);
  consoleError(capture, 1, 7, "kept while on", T0 + 1);
  bodies.set("r1", { body: '{"a":1}', base64Encoded: false });
  request(capture, 1, "r1", `${A}/api`, { mimeType: "application/json", size: 7 });
  await flush();
  assert.equal((await capture.network(1, { url: null, limit: 50, clear: false }, approving(A))).entries.length, 1);
  sent.length = 0;
  const off = capture.observe(parsePolicy(OFF));
  // Synchronously gone: nothing to read even before the domains are stopped.
  assert.deepEqual(capture.console(1, Q, approving(A)), { enabled: false, entries: [], withheld: 0, more: 0 });
  assert.deepEqual(await capture.network(1, { url: null, limit: 50, clear: false }, approving(A)), { enabled: false, entries: [], withheld: 0, more: 0, dropped: 0 });
  assert.deepEqual(capture.usage(), { global: 0, tabs: { 1: 0 } });
  await off;
  await flush();
  assert.deepEqual(sent.map(([, m]) => m).sort(), ["Log.disable", "Network.disable", "Runtime.disable"]);
  assert.deepEqual(holds.at(-1), [1, "Runtime", false]);
  consoleError(capture, 1, 7, "while off again", T0 + 2);
  request(capture, 1, "r2", `${A}/api`, { mimeType: "application/json", size: 7 });
  await flush();
  // On again: a new capture, empty; what happened while off was never kept.
  await capture.observe(parsePolicy(ON));
  assert.deepEqual(capture.console(1, Q, approving(A)).entries, []);
  assert.deepEqual((await capture.network(1, { url: null, limit: 50, clear: false }, approving(A))).entries, []);
});

/**
 * One XHR/fetch from a document of `doc` to `url`: sent (with headers and cookies the capture
 * must never keep), answered, finished.
 */
function request(capture, tabId, requestId, url, { mimeType = "application/json", size = 10, status = 200, type = "Fetch", doc = `${A}/page`, wallTime = (T0 + 1) / 1000 } = {}) {
  capture.event(tabId, "Network.requestWillBeSent", {
    requestId, type, documentURL: doc, wallTime, timestamp: 5,
    request: { method: "POST", url, headers: { Authorization: "Bearer TOPSECRET-AUTH", Cookie: "sid=COOKIEVALUE" }, postData: "pw=POSTSECRET" },
  });
  capture.event(tabId, "Network.responseReceived", {
    requestId, type, response: { url, status, mimeType, headers: { "Set-Cookie": "sid=SETCOOKIEVALUE" }, requestHeaders: { Cookie: "sid=COOKIEVALUE" } },
  });
  capture.event(tabId, "Network.dataReceived", { requestId, dataLength: size, encodedDataLength: size });
  capture.event(tabId, "Network.loadingFinished", { requestId, encodedDataLength: size });
}
const N = { url: null, limit: 50, clear: false, bodies: true };

test("network: text bodies of approved targets, masked; never a header, cookie or request body; reasons for every omitted body", async () => {
  const { capture, bodies, sent } = setup();
  await capture.observe(parsePolicy(ON));
  bodies.set("json", { body: '{"user":"ada","card":"4111 1111 1111 1111","token":"abc123xyz"}', base64Encoded: false });
  bodies.set("png", { body: "iVBORw0KGgo=", base64Encoded: true });
  request(capture, 1, "json", `${A}/api/me?session=abcdef123456&page=1`);
  request(capture, 1, "big", `${A}/api/big`, { size: BODY_CAP + 1 });
  request(capture, 1, "png", `${A}/img`, { mimeType: "image/png" });
  request(capture, 1, "b64", `${A}/api/odd`, { mimeType: "application/octet-stream" });
  request(capture, 1, "other", `${B}/api/data`);
  request(capture, 1, "frame", `${A}/api/from-frame`, { doc: `${B}/frame` });
  request(capture, 1, "doc", `${A}/next`, { type: "Document" });
  capture.event(1, "Network.requestWillBeSent", { requestId: "bad", type: "XHR", documentURL: `${A}/`, wallTime: (T0 + 2) / 1000, request: { method: "GET", url: `${A}/down` } });
  capture.event(1, "Network.loadingFailed", { requestId: "bad", errorText: "net::ERR_CONNECTION_REFUSED" });
  await flush();
  const got = await capture.network(1, N, approving(A));
  assert.equal(got.enabled, true);
  assert.deepEqual(got.entries.map((e) => [e.url, e.status, e.body ?? null, e.bodyOmitted ?? null, e.failed ?? null]), [
    [`${A}/api/me?session=[masked: 12 chars, letters+digits]&page=1`, 200, '{"user":"ada","card":"[card]","token":"[masked: 9 chars, letters+digits]"}', null, null],
    [`${A}/api/big`, 200, null, "too_large", null],
    [`${A}/img`, 200, null, "binary", null],
    [`${A}/api/odd`, 200, null, "binary", null],
    [`${B}/api/data`, 200, null, "origin", null],
    [`${A}/next`, 200, null, null, null], // a document: listed, never a body (nor asked for)
    [`${A}/down`, 0, null, "unavailable", "net::ERR_CONNECTION_REFUSED"],
  ]);
  assert.ok(!("bodyOmitted" in got.entries[5]) && !("body" in got.entries[5]), JSON.stringify(got.entries[5]));
  assert.equal(got.withheld, 1); // the unapproved frame's request
  const whole = JSON.stringify(got);
  for (const secret of ["TOPSECRET", "COOKIEVALUE", "SETCOOKIEVALUE", "POSTSECRET", "Authorization", "Set-Cookie", "abcdef123456", "4111"]) {
    assert.ok(!whole.includes(secret), secret);
  }
  // Chrome was asked only for the one body that could be kept.
  assert.deepEqual(sent.filter(([, m]) => m === "Network.getResponseBody").map(([, , p]) => p.requestId), ["json"]);
  assert.deepEqual((await capture.network(1, { ...N, url: "/api/" }, approving(A))).entries.map((e) => e.url.split("?")[0]), [`${A}/api/me`, `${A}/api/big`, `${A}/api/odd`, `${B}/api/data`]);
  // A body whose target is no longer approved is not answered.
  assert.equal((await capture.network(1, N, approving())).entries.length, 0);
});

test("network: the per-tab and global body budgets, freed as the ring drops entries", async () => {
  const { capture, bodies } = setup({ tabs: [1, 2, 3, 4, 5] });
  await capture.observe(parsePolicy(ON));
  const size = BODY_CAP; // each body at the cap
  const text = "x".repeat(size);
  const perTab = Math.floor(TAB_BODY_BUDGET / size);
  for (let i = 0; i <= perTab; i++) {
    bodies.set(`t1-${i}`, { body: text, base64Encoded: false });
    request(capture, 1, `t1-${i}`, `${A}/b${i}`, { size });
  }
  await flush();
  const one = (await capture.network(1, N, approving(A))).entries;
  assert.equal(one.filter((e) => e.body !== undefined).length, perTab);
  assert.equal(one.at(-1).bodyOmitted, "budget");
  // Across tabs: the global budget.
  const globalMax = Math.floor(GLOBAL_BODY_BUDGET / size);
  let kept = perTab;
  for (const tabId of [2, 3, 4, 5]) {
    for (let i = 0; i < perTab; i++) {
      bodies.set(`t${tabId}-${i}`, { body: text, base64Encoded: false });
      request(capture, tabId, `t${tabId}-${i}`, `${A}/b${i}`, { size });
      await flush();
    }
    kept = Math.min(globalMax, kept + perTab);
  }
  const usage = capture.usage();
  assert.ok(usage.global <= GLOBAL_BODY_BUDGET, JSON.stringify(usage));
  assert.equal(usage.global, kept * utf8Length(text));
  assert.equal((await capture.network(5, N, approving(A))).entries.filter((e) => e.bodyOmitted === "budget").length > 0, true);
  // The ring drops tab 1's oldest entries, and their bytes are free again.
  for (let i = 0; i < NETWORK_RING; i++) request(capture, 1, `small-${i}`, `${A}/s${i}`, { mimeType: "image/png", size: 1 });
  await flush();
  assert.equal(capture.usage().tabs[1], 0);
  // clear frees them too.
  bodies.set("again", { body: text, base64Encoded: false });
  request(capture, 1, "again", `${A}/again`, { size });
  await flush();
  assert.equal(capture.usage().tabs[1], size);
  await capture.network(1, { ...N, clear: true }, approving(A));
  assert.equal(capture.usage().tabs[1], 0);
});

/**
 * One request of any type, CDP-timed: sent at monotonic second `at`, headers after `ttfb` ms,
 * finished after `ms` (or failed with `fail`: the loadingFailed params).
 */
function timed(capture, tabId, requestId, url, { type = "Script", at = 100, ttfb = 40, ms = 120, status = 200, mimeType = "text/javascript", doc = `${A}/page`, fail = null, wallMs = T0 + 1 } = {}) {
  capture.event(tabId, "Network.requestWillBeSent", {
    requestId, type, documentURL: doc, wallTime: wallMs / 1000, timestamp: at,
    request: { method: "GET", url, headers: { Authorization: "Bearer TOPSECRET-AUTH", Cookie: "sid=COOKIEVALUE" } },
  });
  if (fail !== null) {
    capture.event(tabId, "Network.loadingFailed", { requestId, type, timestamp: at + ms / 1000, ...fail });
    return;
  }
  capture.event(tabId, "Network.responseReceived", {
    requestId, type, timestamp: at + ttfb / 1000,
    response: { url, status, mimeType, headers: { "Set-Cookie": "sid=SETCOOKIEVALUE" }, timing: { requestTime: at + 0.002, receiveHeadersStart: ttfb - 2, receiveHeadersEnd: ttfb } },
  });
  capture.event(tabId, "Network.dataReceived", { requestId, dataLength: 5, encodedDataLength: 5 });
  capture.event(tabId, "Network.loadingFinished", { requestId, timestamp: at + ms / 1000, encodedDataLength: 5 });
}

test("network: every request type, with status, timing, failure text and blocked reason; redirects and cache hits; metadata only", async () => {
  const { capture, sent } = setup();
  await capture.observe(parsePolicy(ON));
  timed(capture, 1, "doc", `${A}/page`, { type: "Document", mimeType: "text/html", ms: 300, ttfb: 90 });
  timed(capture, 1, "js", `${A}/app.js`, { type: "Script" });
  timed(capture, 1, "css", `${A}/app.css`, { type: "Stylesheet", mimeType: "text/css" });
  timed(capture, 1, "img", `${A}/logo.png`, { type: "Image", mimeType: "image/png" });
  timed(capture, 1, "font", `${A}/f.woff2`, { type: "Font", mimeType: "font/woff2" });
  timed(capture, 1, "dead", "http://127.0.0.1:9/x?api_key=DEADSECRET123456", { type: "Fetch", fail: { errorText: "net::ERR_CONNECTION_REFUSED" } });
  timed(capture, 1, "csp", `${B}/evil.js`, { type: "Script", fail: { errorText: "net::ERR_BLOCKED_BY_CLIENT", blockedReason: "csp" } });
  timed(capture, 1, "cors", `${B}/api`, { type: "Fetch", fail: { errorText: "net::ERR_FAILED", corsErrorStatus: { corsError: "MissingAllowOriginHeader", failedParameter: "CORSPARAMSECRET" } } });
  timed(capture, 1, "gone", `${A}/slow`, { type: "Image", fail: { errorText: "net::ERR_ABORTED", canceled: true } });
  timed(capture, 1, "odd", `${A}/beacon`, { type: "SomethingNew", mimeType: "" });
  // A redirect: the 302 hop ends when the next hop is sent, under the same request id.
  capture.event(1, "Network.requestWillBeSent", { requestId: "r", type: "Document", documentURL: `${A}/old`, wallTime: (T0 + 5) / 1000, timestamp: 200, request: { method: "GET", url: `${A}/old?token=REDIRSECRET999` } });
  capture.event(1, "Network.requestWillBeSent", { requestId: "r", type: "Document", documentURL: `${A}/new`, wallTime: (T0 + 6) / 1000, timestamp: 200.05,
    redirectResponse: { status: 302, mimeType: "text/html", headers: { Location: "/new" } }, request: { method: "GET", url: `${A}/new` } });
  capture.event(1, "Network.responseReceived", { requestId: "r", type: "Document", response: { status: 200, mimeType: "text/html", fromDiskCache: true } });
  capture.event(1, "Network.loadingFinished", { requestId: "r", timestamp: 200.06, encodedDataLength: 0 });
  // Served from the memory cache (no response timing).
  capture.event(1, "Network.requestWillBeSent", { requestId: "mem", type: "Image", documentURL: `${A}/page`, wallTime: (T0 + 7) / 1000, timestamp: 201, request: { method: "GET", url: `${A}/logo.png` } });
  capture.event(1, "Network.requestServedFromCache", { requestId: "mem" });
  capture.event(1, "Network.responseReceived", { requestId: "mem", type: "Image", response: { status: 200, mimeType: "image/png" } });
  capture.event(1, "Network.loadingFinished", { requestId: "mem", timestamp: 201, encodedDataLength: 0 });
  await flush();
  const got = await capture.network(1, { ...N, limit: 200 }, approving(A));
  const row = (e) => [e.id, e.type, e.url.split("?")[0], e.status, e.durationMs ?? null, e.ttfbMs ?? null, e.failed ?? null, e.blocked ?? null, e.fromCache ?? null];
  assert.deepEqual(got.entries.map(row), [
    [1, "Document", `${A}/page`, 200, 300, 90, null, null, null],
    [2, "Script", `${A}/app.js`, 200, 120, 40, null, null, null],
    [3, "Stylesheet", `${A}/app.css`, 200, 120, 40, null, null, null],
    [4, "Image", `${A}/logo.png`, 200, 120, 40, null, null, null],
    [5, "Font", `${A}/f.woff2`, 200, 120, 40, null, null, null],
    [6, "Fetch", "http://127.0.0.1:9/x", 0, 120, null, "net::ERR_CONNECTION_REFUSED", null, null],
    [7, "Script", `${B}/evil.js`, 0, 120, null, "net::ERR_BLOCKED_BY_CLIENT", "csp", null],
    [8, "Fetch", `${B}/api`, 0, 120, null, "net::ERR_FAILED", "cors:MissingAllowOriginHeader", null],
    [9, "Image", `${A}/slow`, 0, 120, null, "canceled", null, null],
    [10, "Other", `${A}/beacon`, 200, 120, 40, null, null, null],
    [11, "Document", `${A}/old`, 302, 50, null, null, null, null],
    [12, "Document", `${A}/new`, 200, 10, null, null, null, true],
    [13, "Image", `${A}/logo.png`, 200, 0, null, null, null, true],
  ]);
  assert.equal(got.dropped, 0);
  assert.equal(got.entries[0].ts, T0 + 1);
  assert.equal(got.entries[0].mimeType, "text/html");
  // Bodies only for XHR/fetch: no other type's body was asked for, and none carries body fields.
  assert.deepEqual(sent.filter(([, m]) => m === "Network.getResponseBody"), []);
  for (const e of got.entries) assert.equal("bodyOmitted" in e, e.type === "Fetch", JSON.stringify(e));
  const whole = JSON.stringify(got);
  for (const secret of ["TOPSECRET", "COOKIEVALUE", "SETCOOKIEVALUE", "Authorization", "DEADSECRET123456", "REDIRSECRET999", "CORSPARAMSECRET", "Location"]) {
    assert.ok(!whole.includes(secret), secret);
  }
  assert.match(got.entries[5].url, /api_key=\[masked/);
});

test("network: the buffer keeps the newest NETWORK_RING, drops the oldest and says how many; clear starts the count again", async () => {
  const { capture } = setup();
  await capture.observe(parsePolicy(ON));
  for (let i = 1; i <= NETWORK_RING + 7; i++) timed(capture, 1, `q${i}`, `${A}/r${i}`, { type: "Image", mimeType: "image/png" });
  await flush();
  const got = await capture.network(1, { ...N, limit: 200 }, approving(A));
  assert.equal(got.dropped, 7);
  assert.equal(got.entries.length, 200);
  assert.equal(got.more, NETWORK_RING - 200);
  assert.equal(got.entries.at(-1).url, `${A}/r${NETWORK_RING + 7}`);
  // The oldest still kept is entry 8: entries 1-7 went first.
  const first = await capture.network(1, { ...N, limit: 1, sinceId: 0 }, approving(A));
  assert.deepEqual([first.entries[0].id, first.entries[0].url, first.dropped], [8, `${A}/r8`, 7]);
  const cleared = await capture.network(1, { ...N, limit: 1, clear: true }, approving(A));
  assert.equal(cleared.dropped, 7);
  timed(capture, 1, "after", `${A}/after`, { type: "Image", mimeType: "image/png" });
  const after = await capture.network(1, N, approving(A));
  assert.deepEqual([after.entries.map((e) => e.id), after.dropped], [[NETWORK_RING + 8], 0]);
  // Turning capture off and on again starts from nothing.
  await capture.observe(parsePolicy(OFF));
  await capture.observe(parsePolicy(ON));
  assert.deepEqual(await capture.network(1, N, approving(A)), { enabled: true, entries: [], withheld: 0, more: 0, dropped: 0 });
});

test("network: filters by type and failure, pages by sinceId, and withholds unapproved documents' requests under every filter", async () => {
  const { capture } = setup();
  await capture.observe(parsePolicy(ON));
  timed(capture, 1, "d", `${A}/`, { type: "Document", mimeType: "text/html" });
  timed(capture, 1, "s", `${A}/a.js`);
  timed(capture, 1, "404", `${A}/missing.css`, { type: "Stylesheet", status: 404, mimeType: "text/html" });
  timed(capture, 1, "x", `${A}/x`, { type: "Fetch", fail: { errorText: "net::ERR_NAME_NOT_RESOLVED" } });
  timed(capture, 1, "fs", `${B}/frame.js`, { doc: `${B}/frame` });
  timed(capture, 1, "ff", `${B}/boom`, { type: "Fetch", doc: `${B}/frame`, fail: { errorText: "net::ERR_FAILED" } });
  await flush();
  const q = (more) => capture.network(1, { ...N, ...more }, approving(A));
  const urls = (got) => got.entries.map((e) => e.url);
  assert.deepEqual(urls(await q({ types: ["Script", "Document"] })), [`${A}/`, `${A}/a.js`]);
  assert.equal((await q({ types: ["Script"] })).withheld, 1);
  const failed = await q({ failedOnly: true });
  assert.deepEqual([urls(failed), failed.withheld], [[`${A}/missing.css`, `${A}/x`], 1]);
  assert.deepEqual(urls(await q({ failedOnly: true, types: ["Fetch"] })), [`${A}/x`]);
  // Paging: the oldest first after sinceId, `more` the newer ones left.
  const p1 = await q({ sinceId: 0, limit: 2 });
  assert.deepEqual([p1.entries.map((e) => e.id), p1.more], [[1, 2], 2]);
  const p2 = await q({ sinceId: p1.entries.at(-1).id, limit: 2 });
  assert.deepEqual([p2.entries.map((e) => e.id), p2.more, p2.withheld], [[3, 4], 0, 2]);
  const p3 = await q({ sinceId: 6, limit: 2 });
  assert.deepEqual([p3.entries, p3.more, p3.withheld], [[], 0, 0]);
  // Without sinceId: the newest `limit`, `more` the older ones.
  const newest = await q({ limit: 1 });
  assert.deepEqual([newest.entries.map((e) => e.id), newest.more], [[4], 3]);
  assert.ok(!JSON.stringify(await q({})).includes(B));
  // A frame's document of an unapproved site, loaded by an approved page: withheld, address too.
  timed(capture, 1, "sub", `${B}/frame`, { type: "Document", doc: `${A}/page` });
  const framed = await q({ types: ["Document"] });
  assert.deepEqual([urls(framed), framed.withheld], [[`${A}/`], 1]);
  assert.ok(!JSON.stringify(framed).includes(B));
});

test("network: a WebSocket's handshake is listed, by the origin of the script that opened it (none known: withheld) and only to an approved site; one that never connects, as failed", async () => {
  const { capture } = setup();
  await capture.observe(parsePolicy(ON));
  capture.event(1, "Network.webSocketCreated", { requestId: "ws", url: `ws://a.test/live?token=WSSECRET12345`, initiator: { type: "script", stack: { callFrames: [{ url: `${A}/app.js` }] } } });
  capture.event(1, "Network.webSocketWillSendHandshakeRequest", { requestId: "ws", timestamp: 50, wallTime: (T0 + 3) / 1000, request: { headers: { Cookie: "sid=COOKIEVALUE" } } });
  capture.event(1, "Network.webSocketHandshakeResponseReceived", { requestId: "ws", timestamp: 50.025, response: { status: 101, headers: { "Set-Cookie": "sid=SETCOOKIEVALUE" } } });
  capture.event(1, "Network.webSocketCreated", { requestId: "anon", url: "ws://a.test/anon" });
  capture.event(1, "Network.webSocketHandshakeResponseReceived", { requestId: "anon", timestamp: 51, response: { status: 101 } });
  capture.event(1, "Network.webSocketCreated", { requestId: "down", url: "ws://a.test/down", initiator: { type: "script", url: `${A}/page` } });
  capture.event(1, "Network.webSocketWillSendHandshakeRequest", { requestId: "down", timestamp: 60, wallTime: (T0 + 4) / 1000, request: {} });
  capture.event(1, "Network.webSocketFrameError", { requestId: "down", timestamp: 60.1, errorMessage: "Error during WebSocket handshake: net::ERR_CONNECTION_REFUSED" });
  // Opened by an approved page's script, to a site not approved: withheld.
  capture.event(1, "Network.webSocketCreated", { requestId: "far", url: "wss://b.test/feed", initiator: { type: "script", url: `${A}/page` } });
  capture.event(1, "Network.webSocketHandshakeResponseReceived", { requestId: "far", timestamp: 61, response: { status: 101 } });
  const got = await capture.network(1, N, approving(A));
  assert.deepEqual(got.entries.map((e) => [e.type, e.status, e.ts, e.durationMs ?? null, e.failed ?? null, e.origin]), [
    ["WebSocket", 101, T0 + 3, 25, null, A],
    ["WebSocket", 0, T0 + 4, 100, "Error during WebSocket handshake: net::ERR_CONNECTION_REFUSED", A],
  ]);
  assert.equal(got.withheld, 2);
  assert.ok(!JSON.stringify(got).includes("b.test"));
  assert.equal((await capture.network(1, N, approving(A, "https://b.test"))).entries.at(-1).url, "wss://b.test/feed");
  // A ws: URL masked as its http: twin would be.
  assert.equal(got.entries[0].url, "ws://a.test/live?token=[masked: 13 chars, letters+digits]");
  assert.equal(got.entries[1].url, "ws://a.test/down");
  const whole = JSON.stringify(got);
  for (const secret of ["WSSECRET12345", "COOKIEVALUE", "SETCOOKIEVALUE"]) assert.ok(!whole.includes(secret), secret);
});

test("debugger: capture hears an owned tab's events and its attachments; a held domain survives another user's disable", async () => {
  const ownership = createOwnership();
  const calls = [];
  const api = {
    attach: async (tabId) => { calls.push(["attach", tabId]); },
    detach: async (tabId) => { calls.push(["detach", tabId]); },
    send: async (tabId, method) => { calls.push([tabId, method]); return {}; },
  };
  const heard = [];
  const sink = {
    attached: async (tabId, via) => { heard.push(["attached", tabId]); await via(tabId, "Runtime.enable", {}); },
    event: (tabId, method) => { heard.push([tabId, method]); },
    forget: (tabId) => heard.push(["forget", tabId]),
  };
  const manager = createDebuggerManager({ api, owned: (id) => ownership.owner(id) !== null, dialogs: createDialogs(), step, log: fakeLog(), sink });
  const ctx = { session: "s1", policy: parsePolicy({}), deadline: Date.now() + 60_000 };
  ownership.claim("s1", 3);
  await manager.ensure(ctx, 3);
  assert.deepEqual(calls, [["attach", 3], [3, "Page.enable"], [3, "Emulation.setFocusEmulationEnabled"], [3, "Page.startScreencast"], [3, "Runtime.enable"]]);
  manager.onEvent(3, "Runtime.consoleAPICalled", {});
  manager.onEvent(3, "Page.screencastFrame", { data: "", sessionId: 1 }); // the tab's hold, unread: never routed
  manager.onEvent(4, "Runtime.consoleAPICalled", {}); // nobody owns tab 4: never routed
  assert.deepEqual(heard, [["attached", 3], [3, "Runtime.consoleAPICalled"], ["forget", 4]]);
  manager.hold(3, "Runtime", true);
  calls.length = 0;
  await manager.send(ctx, 3, "Runtime.disable", {}, "stop");
  await manager.send(ctx, 3, "Runtime.enable", {}, "start");
  assert.deepEqual(calls, [[3, "Runtime.disable"], [3, "Runtime.enable"]]); // the enable re-enables; the disable was not sent
  manager.hold(3, "Runtime", false);
  calls.length = 0;
  await manager.send(ctx, 3, "Runtime.disable", {}, "stop");
  assert.deepEqual(calls, [[3, "Runtime.disable"]]);
  assert.deepEqual(await manager.command(3, "Network.enable", {}), {});
  await assert.rejects(manager.command(9, "Network.enable", {}));
  manager.removed(3);
  assert.deepEqual(heard.at(-1), ["forget", 3]);
});

test("page_console / page_network: ownership and the origin gate first; off answers enabled: false with what to do", async () => {
  const ownership = createOwnership();
  ownership.claim("s1", 1);
  const { capture } = setup();
  const gated = [];
  const deps = {
    ownership, capture,
    browser: { getTab: async (id) => ({ id, url: `${A}/page` }) },
    ensureOrigin: async (url, ctx, tool) => { gated.push([url, tool]); return A; },
  };
  const handlers = new Map(captureHandlers(/** @type {any} */ (deps)));
  const checked = schemaChecked((a) => handlers.get(a));
  const ctx = (policy) => ({ session: "s1", policy: parsePolicy(policy), deadline: Date.now() + 60_000 });
  await assert.rejects(checked("page_console", { tabId: 2 }, ctx(ON)), (e) => e.code === "tab_not_owned");
  await assert.rejects(checked("page_console", { tabId: 1, level: "info" }, ctx(ON)), (e) => e.code === "bad_request");
  await assert.rejects(checked("page_network", { tabId: 1, limit: 0 }, ctx(ON)), (e) => e.code === "bad_request");
  await assert.rejects(checked("page_network", { tabId: 1, url: "" }, ctx(ON)), (e) => e.code === "bad_request");
  await assert.rejects(checked("page_network", { tabId: 1, url: "x".repeat(2049) }, ctx(ON)), (e) => e.code === "bad_request");
  await assert.rejects(checked("page_network", { tabId: 1, clear: "yes" }, ctx(ON)), (e) => e.code === "bad_request");
  await assert.rejects(checked("page_console", { tabId: 1, clear: 1 }, ctx(ON)), (e) => e.code === "bad_request");
  await assert.rejects(checked("page_console", { tabId: 1, level: ["error"] }, ctx(ON)), (e) => e.code === "bad_request");
  const off = await checked("page_console", { tabId: 1 }, ctx(OFF));
  assert.equal(off.enabled, false);
  assert.match(off.hint, /tabwarden policy set consoleCapture=true/);
  assert.match((await checked("page_network", { tabId: 1 }, ctx(OFF))).hint, /networkCapture=true/);
  await capture.observe(parsePolicy(ON));
  context(capture, 1, 7, A);
  consoleError(capture, 1, 7, "shown", T0 + 1);
  assert.deepEqual((await checked("page_console", { tabId: 1 }, ctx(ON))).entries.map((e) => e.text), ["shown"]);
  assert.deepEqual(gated, [[`${A}/page`, "page_console"], [`${A}/page`, "page_network"], [`${A}/page`, "page_console"]]);
  // page_network's filters: the wire schema's names only, and what is given reaches the store.
  await assert.rejects(checked("page_network", { tabId: 1, types: ["Bogus"] }, ctx(ON)), (e) => e.code === "bad_request");
  await assert.rejects(checked("page_network", { tabId: 1, sinceId: -1 }, ctx(ON)), (e) => e.code === "bad_request");
  await assert.rejects(checked("page_network", { tabId: 1, failedOnly: "yes" }, ctx(ON)), (e) => e.code === "bad_request");
  timed(capture, 1, "s", `${A}/a.js`);
  timed(capture, 1, "f", `${A}/down`, { type: "Fetch", fail: { errorText: "net::ERR_CONNECTION_REFUSED" } });
  timed(capture, 1, "i", `${A}/i.png`, { type: "Image", status: 404 });
  const net = (args) => checked("page_network", { tabId: 1, ...args }, ctx(ON));
  assert.deepEqual((await net({ types: ["Script", "Image"] })).entries.map((e) => e.id), [1, 3]);
  assert.deepEqual((await net({ failedOnly: true })).entries.map((e) => e.id), [2, 3]);
  assert.deepEqual((await net({ sinceId: 1, limit: 1 })).entries.map((e) => e.id), [2]);
  assert.equal((await net({ types: [] })).entries.length, 3);
  assert.equal((await net({ tabId: 1 })).dropped, 0);
});

test("network: without bodies the answer is request metadata only (no body, no bodyOmitted); with them the body", async () => {
  const { capture, bodies } = setup();
  await capture.observe(parsePolicy(ON));
  bodies.set("json", { body: '{"user":"ada"}', base64Encoded: false });
  request(capture, 1, "json", `${A}/api/me`);
  await flush();
  const meta = (await capture.network(1, { ...N, bodies: false }, approving(A))).entries;
  assert.equal(meta.length, 1);
  assert.equal("body" in meta[0] || "bodyOmitted" in meta[0], false, JSON.stringify(meta[0]));
  const meta2 = (await capture.network(1, { url: null, limit: 50, clear: false }, approving(A))).entries;
  assert.equal("body" in meta2[0], false, "the default is metadata only");
  assert.equal((await capture.network(1, N, approving(A))).entries[0].body, '{"user":"ada"}');
});
