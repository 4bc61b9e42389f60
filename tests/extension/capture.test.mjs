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
  assert.deepEqual(await capture.network(1, { url: null, limit: 50, clear: false }, approving(A)), { enabled: false, entries: [], withheld: 0, more: 0 });
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
const N = { url: null, limit: 50, clear: false };

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
    [`${A}/down`, 0, null, "unavailable", "net::ERR_CONNECTION_REFUSED"],
  ]);
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
});
