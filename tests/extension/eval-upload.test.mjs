// page_eval and page_upload (handlers/eval-upload.js) through a fake Chrome debugger
// (helpers/eval-upload-harness.mjs): off unless the policy enables them, confirmed on every call
// with everything shown, run only on the confirmed origin, through CDP only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parsePolicy } from "../../extension/worker/policy.js";
import { MAX_RESULT_CHARS, argFiles, resultValue, thrownText } from "../../extension/handlers/eval-upload.js";
import { OK, harness } from "./helpers/eval-upload-harness.mjs";

const POLICY = { origins: [OK], confirm: [], confirmTimeoutSeconds: 30 };
const S1 = { session: "s1", policy: parsePolicy(POLICY) };
const EVAL_ON = { session: "s1", policy: parsePolicy({ ...POLICY, eval: true }) };
const UPLOAD_ON = { session: "s1", policy: parsePolicy({ ...POLICY, upload: true }) };
const TAP = { session: "s1", policy: parsePolicy({ ...POLICY, eval: true, upload: true, presenceConfirm: true }) };
const CV = "/home/p/uploads/cv.pdf";
const PHOTO = "/home/p/uploads/photo.png";
const FILES = new Map([[CV, 5], [PHOTO, 150 * 1024 * 1024]]);
const UPLOAD = { tabId: 1, selector: "#file", paths: [CV], files: [{ name: "cv.pdf", size: 5 }] };

test("page_eval is refused unless the policy says eval: true (presenceConfirm alone does not enable it); nothing asked, nothing run", async () => {
  const h = harness();
  h.open(1, `${OK}/a`);
  for (const policy of [POLICY, { ...POLICY, eval: false }, { ...POLICY, eval: "true" }, { ...POLICY, eval: 1 },
    { ...POLICY, eval: false, presenceConfirm: true }]) {
    await assert.rejects(h.call("page_eval", { tabId: 1, code: "marker = 'ran'" }, { session: "s1", policy: parsePolicy(policy) }),
      (e) => e.code === "policy_denied" && e.message.includes('"eval"') && e.message.includes("`tabwarden policy set eval=true`")
        && e.message.includes('"Page scripts (page_eval)" on the extension\'s options page'));
  }
  assert.equal(h.calls.confirm.length + h.calls.cdp.length, 0);
  assert.equal(h.page.marker, "untouched");
});

test("page_eval enabled: every call confirms showing the FULL code, then runs through CDP Runtime.evaluate", async () => {
  const h = harness();
  h.open(1, `${OK}/a`);
  const code = `/* ${"x".repeat(5000)} */ ({answer: 6 * 7, list: [1, "two"]})`;
  assert.deepEqual(await h.call("page_eval", { tabId: 1, code }, EVAL_ON), { result: { answer: 42, list: [1, "two"] } });
  const req = h.calls.confirm[0];
  assert.deepEqual([req.kind, req.tool, req.origin, req.timeoutMs, req.presence], ["action", "page_eval", OK, 30_000, null]);
  assert.ok(req.detail.endsWith(`\n\n${code}`), "the detail carries the whole code");
  const ran = h.calls.cdp.find(([m]) => m === "Runtime.evaluate");
  assert.deepEqual(ran, ["Runtime.evaluate", { expression: code, awaitPromise: true, returnByValue: false, objectGroup: "tabwarden-eval-upload" }]);
  assert.deepEqual(await h.call("page_eval", { tabId: 1, code: "undefined" }, EVAL_ON), { result: null });
  assert.deepEqual(await h.call("page_eval", { tabId: 1, code: "(function f() {})" }, EVAL_ON), { result: "function f() {}" });
  assert.deepEqual(await h.call("page_eval", { tabId: 1, code: "Promise.resolve(3)" }, EVAL_ON), { result: 3 });
  assert.deepEqual(await h.call("page_eval", { tabId: 1, code: "10n" }, EVAL_ON), { result: "10n" });
  assert.deepEqual(await h.call("page_eval", { tabId: 1, code: "title" }, EVAL_ON), { result: "Shop" });
  assert.equal(h.calls.confirm.length, 6, "no grace: one confirmation per call");
  assert.ok(h.calls.cdp.some(([m]) => m === "Runtime.releaseObjectGroup"), "the call's objects are released");
});

test("page_eval with ref and args: the window names the element and the args; the function gets the element (main world) and the args", async () => {
  const h = harness();
  h.open(1, `${OK}/a`);
  const code = "(el, n, opts) => el.textContent.slice(0, n) + opts.tail";
  const out = await h.call("page_eval", { tabId: 1, code, ref: "@e3", args: [5, { tail: "!" }] }, EVAL_ON);
  assert.deepEqual(out, { result: "Price!" });
  const detail = h.calls.confirm[0].detail;
  assert.ok(detail.includes(code) && detail.includes('On the element @e3: paragraph "Price: 12"') && detail.includes('With the arguments: [5,{"tail":"!"}]'), detail);
  // Resolved in tabwarden's isolated world, then handed to the main world by its backend node.
  const methods = h.calls.cdp.map(([m]) => m);
  assert.ok(methods.indexOf("DOM.describeNode") < methods.indexOf("DOM.resolveNode"), methods.join());
  const call = h.calls.cdp.find(([m, p]) => m === "Runtime.callFunctionOn" && p.functionDeclaration === code);
  assert.deepEqual(call[1].arguments.slice(1), [{ value: 5 }, { value: { tail: "!" } }]);
  // args alone: the function runs on the page's window.
  assert.deepEqual(await h.call("page_eval", { tabId: 1, code: "function (a, b) { return this.title + (a + b); }", args: [1, 2] }, EVAL_ON), { result: "Shop3" });
  // A stale ref asks nothing and runs nothing.
  const asked = h.calls.confirm.length;
  await assert.rejects(h.call("page_eval", { tabId: 1, code, ref: "@e9" }, EVAL_ON), (e) => e.code === "bad_ref");
  assert.equal(h.calls.confirm.length, asked);
  // Not a function with ref/args: script_error naming the form.
  await assert.rejects(h.call("page_eval", { tabId: 1, code: "1 + 1", args: [] }, EVAL_ON),
    (e) => e.code === "script_error" && /must be a function/.test(e.message));
});

test("page_eval: deny runs nothing; a navigation while the person looks is refused before it runs; a throw is script_error", async () => {
  const h = harness({ decision: "deny" });
  h.open(1, `${OK}/a`);
  await assert.rejects(h.call("page_eval", { tabId: 1, code: "marker = 'ran'" }, EVAL_ON), (e) => e.code === "confirm_denied");
  assert.equal(h.calls.cdp.length, 0);
  h.decision = "allow";
  h.onConfirm = () => { h.tabs.get(1).url = "https://evil.test/"; };
  await assert.rejects(h.call("page_eval", { tabId: 1, code: "marker = 'ran'" }, EVAL_ON), (e) => e.code === "origin_not_approved");
  assert.equal(h.calls.cdp.length, 0);
  assert.equal(h.page.marker, "untouched");
  h.onConfirm = () => {};
  h.tabs.get(1).url = `${OK}/a`;
  await assert.rejects(h.call("page_eval", { tabId: 1, code: "null.x" }, EVAL_ON),
    (e) => e.code === "script_error" && /^the code threw: TypeError: /.test(e.message) && !e.message.includes("\n"));
  await assert.rejects(h.call("page_eval", { tabId: 1, code: "" }, EVAL_ON), (e) => e.code === "bad_request");
});

test("page_eval on a tab the session does not own: tab_not_owned, nothing asked, nothing run", async () => {
  const h = harness();
  h.open(1, `${OK}/a`, null);
  h.open(2, `${OK}/a`, "s2");
  for (const tabId of [1, 2, 99]) {
    await assert.rejects(h.call("page_eval", { tabId, code: "marker = 'ran'" }, EVAL_ON), (e) => e.code === "tab_not_owned");
  }
  assert.equal(h.calls.confirm.length + h.calls.cdp.length, 0);
  assert.equal(h.page.marker, "untouched");
});

test("page_eval results: JSON by value, descriptions otherwise, too large refused", async () => {
  const none = async () => undefined;
  assert.equal(await resultValue({ type: "undefined" }, none), null);
  assert.equal(await resultValue({ type: "object", subtype: "null", value: null }, none), null);
  assert.equal(await resultValue({ type: "number", unserializableValue: "NaN" }, none), "NaN");
  assert.equal(await resultValue({ type: "object", subtype: "node", objectId: "1", description: "div#x" }, none), "div#x");
  assert.equal(await resultValue({ type: "object", objectId: "1", description: "Window" }, none), "Window", "not by value: its description");
  assert.deepEqual(await resultValue({ type: "object", objectId: "1" }, async () => ({ a: 1 })), { a: 1 });
  assert.equal(thrownText({ text: "Uncaught", exception: { description: "Error: boom\n    at x" } }), "Error: boom");
  const h = harness();
  h.open(1, `${OK}/a`);
  await assert.rejects(h.call("page_eval", { tabId: 1, code: `"x".repeat(${MAX_RESULT_CHARS + 1})` }, EVAL_ON), (e) => e.code === "result_too_large");
});

test("page_upload: refused unless policy.upload; file inputs only; the person sees every path and size; Chrome gets the paths", async () => {
  const h = harness({ files: FILES });
  h.open(1, `${OK}/form`);
  await assert.rejects(h.call("page_upload", UPLOAD, S1), (e) => e.code === "policy_denied");
  await assert.rejects(h.call("page_upload", UPLOAD, { session: "s1", policy: parsePolicy({ ...POLICY, presenceConfirm: true }) }), (e) => e.code === "policy_denied");
  assert.equal(h.calls.cdp.length + h.calls.confirm.length, 0);
  await assert.rejects(h.call("page_upload", { ...UPLOAD, selector: "#pw" }, UPLOAD_ON), (e) => e.code === "bad_request" && /type=file/.test(e.message));
  await assert.rejects(h.call("page_upload", { ...UPLOAD, selector: ".none" }, UPLOAD_ON), (e) => e.code === "element_not_found");
  await assert.rejects(h.call("page_upload", { ...UPLOAD, paths: ["relative/cv.pdf"] }, UPLOAD_ON), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_upload", { ...UPLOAD, paths: ["/etc/passwd"] }, UPLOAD_ON), (e) => e.code === "bad_request", "a path that is not its checked file's");
  await assert.rejects(h.call("page_upload", { ...UPLOAD, paths: [CV, PHOTO] }, UPLOAD_ON), (e) => e.code === "bad_request", "paths and files pair up");
  await assert.rejects(h.call("page_upload", { ...UPLOAD, data: "JVBERi0=" }, UPLOAD_ON), (e) => e.code === "bad_request", "no bytes on the wire");
  assert.equal(h.calls.confirm.length + h.calls.cdp.filter(([m]) => m === "DOM.setFileInputFiles").length, 0, "no prompt for a request that cannot work");
  const { selector: _, ...byRef } = UPLOAD;
  const two = { ...byRef, ref: "@e1", paths: [CV, PHOTO], files: [{ name: "cv.pdf", size: 5 }, { name: "photo.png", size: 150 * 1024 * 1024 }] };
  const out = await h.call("page_upload", two, UPLOAD_ON);
  assert.deepEqual(out, { uploaded: true, files: two.files });
  const req = h.calls.confirm[0];
  assert.equal(req.tool, "page_upload");
  assert.ok(req.detail.includes(`${CV} (5 bytes)\n${PHOTO} (157286400 bytes)`), req.detail);
  assert.deepEqual(h.calls.cdp.find(([m]) => m === "DOM.setFileInputFiles")[1], { files: [CV, PHOTO], objectId: "iso-el" });
  // One file into an input without `multiple`: fine; two: refused before anything is set.
  h.input.multiple = false;
  h.input.files = [];
  const asked = h.calls.confirm.length;
  await assert.rejects(h.call("page_upload", two, UPLOAD_ON), (e) => e.code === "bad_request" && /takes one file/.test(e.message));
  assert.deepEqual(h.input.files, []);
  assert.equal(h.calls.confirm.length, asked, "refused before asking");
  h.decision = "deny";
  await assert.rejects(h.call("page_upload", UPLOAD, UPLOAD_ON), (e) => e.code === "confirm_denied");
  assert.deepEqual(h.input.files, []);
});

test("page_upload: files that are not what the sandbox checked (changed since) are cleared and refused", async () => {
  const h = harness({ files: new Map([[CV, 999]]) });
  h.open(1, `${OK}/form`);
  await assert.rejects(h.call("page_upload", UPLOAD, UPLOAD_ON), (e) => e.code === "policy_denied" && /differ/.test(e.message));
  assert.deepEqual(h.input.files, [], "the input was cleared");
});

test("presenceConfirm: page_eval / page_upload ask for a tap on exactly what the window shows", async () => {
  const h = harness({ files: FILES });
  h.open(1, `${OK}/form`);
  assert.deepEqual(await h.call("page_eval", { tabId: 1, code: "6 * 7" }, TAP), { result: 42 });
  assert.deepEqual(h.calls.confirm[0].presence, { action: "confirm.eval", detail: `{"code":"6 * 7","origin":"${OK}"}` });
  await h.call("page_eval", { tabId: 1, code: "(a) => a", args: ["é"] }, TAP);
  assert.equal(h.calls.confirm[1].presence.detail, JSON.stringify({ code: '(a) => a\n\nWith the arguments: ["é"]', origin: OK }));
  const two = { ...UPLOAD, paths: [CV, PHOTO], files: [{ name: "cv.pdf", size: 5 }, { name: "photo.png", size: 150 * 1024 * 1024 }] };
  await h.call("page_upload", two, TAP);
  assert.deepEqual(h.calls.confirm[2].presence, { action: "confirm.upload", detail: JSON.stringify({ origin: OK, path: `${CV}\n${PHOTO}` }) });
  const before = h.calls.confirm.length;
  await assert.rejects(h.call("page_eval", { tabId: 1, code: "'\ud800'" }, TAP), (e) => e.code === "bad_request");
  assert.equal(h.calls.confirm.length, before, "a lone surrogate cannot be tapped for: refused before asking");
});

test("argFiles: absolute, one-line paths, each ending with its checked file's name", () => {
  assert.deepEqual(argFiles({ paths: [CV], files: [{ name: "cv.pdf", size: 5 }] }), [{ path: CV, name: "cv.pdf", size: 5 }]);
  for (const paths of [["cv.pdf"], ["/a/b\n/c/cv.pdf"], ["/a/other.pdf"], []]) {
    assert.throws(() => argFiles({ paths, files: [{ name: "cv.pdf", size: 5 }] }), (e) => e.code === "bad_request", JSON.stringify(paths));
  }
});
