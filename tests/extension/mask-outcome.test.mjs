import { test } from "node:test";
import assert from "node:assert/strict";
import { isSecretName, learnedUrlRule, maskOutcome, maskText, maskUrl } from "../../extension/worker/mask.js";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { CODE } from "../../extension/shared/error-codes.js";
import { fakeLog } from "./helpers/fakes.mjs";

const SECRET = "correct horse battery";

test("secret names: long words anywhere, short ones only as a whole part of the name", () => {
  for (const name of ["pwd", "pin", "key", "apiKey", "api_key", "X-API-KEY", "passcode", "secret", "clientSecret", "token",
    "access_token", "auth", "authToken", "session", "sessionId", "sid", "PHPSESSID", "cookie", "credential", "signature", "sig",
    "otp", "apikey", "user[password]", "user.password", "newPassword", "pass", "mfa-code", "csrf_token", "pin2"]) {
    assert.equal(isSecretName(name), true, name);
  }
  for (const name of ["spinner", "monkey", "keyboard", "author", "pinned", "sidebar", "signal", "design", "page", "q", "user", "otpx", "passenger", "bypass", "code"]) {
    assert.equal(isSecretName(name), false, name);
  }
  assert.equal(isSecretName("code", { url: true }), true, "an OAuth code in a URL");
  assert.equal(isSecretName("login_field", { extraNames: new Set(["login_field"]) }), true);
  assert.equal(isSecretName("x".repeat(65)), false);
});

test("values are masked whole: multi-word, quoted, JSON, form-encoded, header lines, auth schemes", () => {
  const cases = [
    [`pwd=${SECRET}`, "pwd=[masked"],
    [`console: pwd=${SECRET}\nnext line`, "next line"],
    [`{"password": "${SECRET}", "user": "bob"}`, `"user": "bob"`],
    [`{"pin":1234,"user":"bob"}`, `"user":"bob"`],
    [`pwd='${SECRET}' and more`, "and more"],
    [`login?user=bob&pwd=correct+horse%20battery&next=%2Fhome`, "next=%2Fhome"],
    [`Cookie: sid=abc; theme=${SECRET}`, "Cookie: [masked"],
    [`set-cookie: a=${SECRET}; HttpOnly`, "[masked"],
    [`Authorization: Basic ${Buffer.from(SECRET).toString("base64")}`, "Authorization: [masked"],
    [`header Bearer ${"A1b2C3d4".repeat(3)}`, "Bearer [masked"],
    [`apiKey: "${SECRET}"`, "apiKey: \"[masked"],
  ];
  for (const [text, visible] of cases) {
    const out = maskText(text);
    for (const word of ["correct", "horse", "battery", "1234", "abc;", "A1b2C3d4", "Y29ycmVjdC"]) assert.ok(!out.includes(word), `${word} in ${out}`);
    assert.ok(out.includes(visible), `${visible} not in ${out}`);
  }
  // What is not secret stays readable.
  assert.equal(maskText("spinner=3&monkey=george&page=2"), "spinner=3&monkey=george&page=2");
  assert.equal(maskText('{"author": "Ann", "keyboard": "qwerty"}'), '{"author": "Ann", "keyboard": "qwerty"}');
});

test("masking is idempotent: a masked value is never masked again, so nothing around it is lost", () => {
  for (const text of [`pwd=${SECRET}&page=2`, `{"token": "${SECRET}", "n": 1}`, "Cookie: a=b", "card 4111 1111 1111 1111 ok"]) {
    const once = maskText(text);
    assert.equal(maskText(once), once, once);
  }
});

test("a learned URL (a GET form's submission) has every query value masked wherever it appears", () => {
  const rule = learnedUrlRule("http://127.0.0.1:8000/login?user=bob&pw=hunter%20two#x");
  assert.ok(rule !== null);
  const ctx = { urls: [rule] };
  const out = maskText("at http://127.0.0.1:8000/login?user=bob&pw=hunter%20two, titled 127.0.0.1:8000/login?user=bob&pw=hunter%20two", ctx);
  assert.ok(!out.includes("hunter") && !out.includes("bob"), out);
  assert.ok(out.includes("http://127.0.0.1:8000/login?user=[masked: 3 chars, letters]&pw=[masked: 10 chars"), out);
  // Another query on the same path is not the learned URL.
  assert.equal(maskText("http://127.0.0.1:8000/login?user=ann", ctx), "http://127.0.0.1:8000/login?user=ann");
  assert.equal(learnedUrlRule("http://127.0.0.1:8000/login"), null);
  assert.equal(learnedUrlRule("not a url"), null);
});

test("network URLs keep readable query values and lose secret-named and token-like ones", () => {
  const url = maskUrl("https://a.test/api?page=2&pwd=a+b&pin=1234&key=k&spinner=3&code=xyz");
  assert.ok(!url.includes("a+b") && !url.includes("1234") && !url.includes("xyz"), url);
  assert.ok(url.includes("page=2") && url.includes("spinner=3"), url);
});

test("every string of a result is masked, at any depth, keys too; errors' messages as well", () => {
  const result = { tabs: [{ url: `http://a.test/?token=${SECRET}`, title: "t" }], nested: { deep: [[`pin=${SECRET}`]] }, [`pwd=${SECRET}`]: 1, n: 5, ok: true, none: null };
  const out = maskOutcome("tab_list", { ok: true, result });
  assert.ok(!JSON.stringify(out).includes("horse"), JSON.stringify(out));
  assert.equal(out.ok && out.result.n, 5);
  assert.equal(out.ok && out.result.tabs[0].title, "t");
  const err = maskOutcome("page_click", { ok: false, error: { code: "dialog_open", message: `alert says: card 4111 1111 1111 1111 token=${SECRET}` } });
  assert.ok(!err.ok && !err.error.message.includes("4111") && !err.error.message.includes("horse"), JSON.stringify(err));
  assert.equal(!err.ok && err.error.code, "dialog_open");
});

test("only the top-level base64 data of a binary reply is exempt; text in it, or anywhere else, is not", () => {
  const png = "iVBORw0KGgo4111111111111111AAAAAElFTkSuQmCC";
  for (const action of ["page_screenshot", "page_pdf", "page_fetch"]) {
    const out = maskOutcome(action, { ok: true, result: { data: png, mimeType: "image/png" } });
    assert.equal(out.ok && out.result.data, png, action);
  }
  // Not base64: masked like any text.
  const text = maskOutcome("page_fetch", { ok: true, result: { data: `pwd=${SECRET}` } });
  assert.ok(!JSON.stringify(text).includes("horse"));
  // The same base64 in another field, or another action's data, is masked (its card run).
  const other = maskOutcome("page_eval", { ok: true, result: { data: "x 4111 1111 1111 1111" } });
  assert.ok(!JSON.stringify(other).includes("4111"));
  const field = maskOutcome("page_screenshot", { ok: true, result: { data: png, note: "4111 1111 1111 1111" } });
  assert.ok(field.ok && !String(field.result.note).includes("4111"));
  const nested = maskOutcome("page_screenshot", { ok: true, result: { inner: { data: "pwd=x y" } } });
  assert.ok(!JSON.stringify(nested).includes("x y"));
});

test("linear on 10 MB of input built to make a regex backtrack (or overflow its stack)", () => {
  // Each would take minutes with a pattern that restarts inside a run, or throw RangeError with
  // a greedy regex run over megabytes. The densest cases (a masked value every few characters)
  // are a megabyte only to keep this suite quick: their cost is per value, as linear as the rest.
  const size = 10 * 1024 * 1024;
  const dense = 1024 * 1024;
  const nasty = [
    "a-".repeat(size / 2), "x".repeat(size), `${"pass".repeat(size / 4)}=`, " ".repeat(size), "eyJ-".repeat(size / 4),
    `eyJ${"a".repeat(size)}.${"b".repeat(size)}`, `Bearer ${"A".repeat(size)}!`, "4 ".repeat(size / 2), "4-".repeat(size / 2),
    `Cookie:${" ".repeat(size)}x`, `"${"k".repeat(63)}":`.repeat(size / 66), `pwd="${"\\".repeat(size / 2)}`,
    `${"pwd=\"".repeat(dense / 5)}`, `${"a=\"".repeat(dense / 3)}`, "Bearer ".repeat(dense / 7), `${"token: ".repeat(dense / 7)}`,
  ];
  for (const text of nasty) {
    const out = maskText(text, { urls: [{ find: "h/p?q=1", replace: "h/p?q=[masked]" }] });
    assert.equal(typeof out, "string");
  }
});

test("the dispatcher masks every reply: ok results, BridgeError messages, with learned rules; a failing context masks every query value", async () => {
  const rule = learnedUrlRule("http://a.test/login?user=bob&pwd=hunter2");
  const handlers = [
    ["tab_list", async () => ({ tabs: [{ url: "http://a.test/login?user=bob&pwd=hunter2", title: `pwd=${SECRET}` }] })],
    ["page_click", async () => { throw new BridgeError(CODE.DIALOG_OPEN, `a dialog is open: "token=${SECRET}"`); }],
  ];
  const d = createDispatcher(handlers, { log: fakeLog(), maskContext: async () => ({ urls: [rule] }) });
  const req = (action) => ({ type: "request", id: "r", action, args: action === "page_click" ? { tabId: 1, ref: "@e1" } : {}, session: "s", policy: {} });
  const listed = JSON.stringify(await d.dispatch(req("tab_list")));
  assert.ok(!listed.includes("hunter2") && !listed.includes("horse") && !listed.includes("user=bob"), listed);
  const failed = JSON.stringify(await d.dispatch(req("page_click")));
  assert.ok(failed.includes("dialog_open") && !failed.includes("horse"), failed);
  const broken = createDispatcher(handlers, { log: fakeLog(), maskContext: () => { throw new Error("storage gone"); } });
  const fixed = JSON.stringify(await broken.dispatch(req("tab_list")));
  assert.ok(!fixed.includes("hunter2") && !fixed.includes("horse") && !fixed.includes("user=bob"), `fails closed: ${fixed}`);
});

test("failing closed (everyQuery): every URL's query values masked, linear on 10 MB built against it", () => {
  const out = maskText('see http://a.test/p?user=bob&next=%2Fhome#top and "h/q?x=1", then?', { everyQuery: true });
  assert.ok(!out.includes("bob") && !out.includes("%2Fhome") && !out.includes("x=1"), out);
  assert.ok(out.includes("#top") && out.endsWith("then?"), out);
  assert.equal(maskText(out, { everyQuery: true }), out, "idempotent");
  const size = 10 * 1024 * 1024;
  const dense = 1024 * 1024;
  for (const text of ["?".repeat(size), `?${"a".repeat(size)}`, "?a&".repeat(size / 3), "?a=[masked".repeat(dense / 10),
    `?a=[masked${"]".repeat(size)}`, "?=".repeat(dense / 2), "&=".repeat(size / 2)]) {
    assert.equal(typeof maskText(text, { everyQuery: true }), "string");
  }
});
