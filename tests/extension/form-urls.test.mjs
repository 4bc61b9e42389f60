import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_FORM_URLS, createFormUrls } from "../../extension/worker/form-urls.js";
import { maskText } from "../../extension/worker/mask.js";

const LOGIN = "http://127.0.0.1:8000/login?user=bob&pwd=hunter2";

test("learned from Chrome's form-submission signals only; each saved; its query values masked in text", () => {
  const saved = [];
  const urls = createFormUrls({ save: (s) => saved.push(s) });
  assert.equal(urls.committed({ tabId: 1, frameId: 0, url: LOGIN, transitionType: "link" }), false);
  assert.equal(urls.cdpEvent("Page.frameRequestedNavigation", { url: LOGIN, reason: "scriptInitiated" }), false);
  assert.equal(urls.cdpEvent("Page.frameNavigated", { url: LOGIN, reason: "formSubmissionGet" }), false);
  assert.deepEqual(urls.rules(), []);
  assert.equal(urls.committed({ tabId: 1, frameId: 0, url: LOGIN, transitionType: "form_submit" }), true);
  assert.equal(urls.cdpEvent("Page.frameRequestedNavigation", { url: LOGIN, reason: "formSubmissionGet" }), false, "known already");
  assert.equal(saved.length, 2);
  const out = maskText(`tab at ${LOGIN}`, { urls: urls.rules() });
  assert.ok(!out.includes("hunter2") && !out.includes("bob"), out);
  assert.equal(urls.committed({ url: "http://127.0.0.1:8000/login", transitionType: "form_submit" }), false, "no query: nothing to hide");
});

test("bounded (the oldest go first) and restored from a snapshot, rejecting malformed rules", () => {
  const urls = createFormUrls();
  for (let i = 0; i < MAX_FORM_URLS + 5; i++) urls.learn(`http://a.test/f?n=${i}`);
  assert.equal(urls.rules().length, MAX_FORM_URLS);
  assert.equal(urls.rules()[0].find, "a.test/f?n=5");
  const restarted = createFormUrls();
  restarted.learn(LOGIN);
  const snap = urls.snapshot();
  snap.rules.push({ find: 7, replace: "x" }, { find: "", replace: "" }, null);
  assert.equal(restarted.load(snap), MAX_FORM_URLS);
  assert.equal(restarted.rules().length, MAX_FORM_URLS);
  assert.equal(restarted.rules().at(-1).find, "127.0.0.1:8000/login?user=bob&pwd=hunter2", "learned since the restart: newest, kept");
  assert.equal(createFormUrls().load({ v: 2, rules: [] }), 0);
  assert.equal(createFormUrls().load("junk"), 0);
});

test("a restore that fails fails closed: every query value of every URL is masked in every reply", async () => {
  const { maskOutcome } = await import("../../extension/worker/mask.js");
  const urls = createFormUrls({ log: { warn() {} } });
  urls.restore(Promise.reject(new Error("storage.session unavailable")));
  const ctx = await urls.maskContext();
  const reply = { ok: true, result: { tabs: [{ url: `${LOGIN}&next=%2Fhome`, title: "127.0.0.1:8000/login?user=bob&pwd=hunter2" }] } };
  const out = JSON.stringify(maskOutcome("tab_list", reply, ctx));
  assert.ok(!out.includes("hunter2") && !out.includes("bob") && !out.includes("%2Fhome"), out);
  assert.ok(out.includes("127.0.0.1:8000/login?user=[masked"), out);
  const fine = createFormUrls();
  await fine.restore(Promise.resolve(undefined));
  const plain = JSON.stringify(maskOutcome("tab_list", { ok: true, result: { url: "http://a.test/?q=shoes" } }, await fine.maskContext()));
  assert.ok(plain.includes("q=shoes"), "a restore that worked masks nothing more");
});
