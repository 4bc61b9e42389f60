// Presence-confirm mode end to end: page_eval / page_upload (handlers/eval-upload.js) → the real confirm
// broker and window (shared/confirm-window.js, "presence" mode) → the real confirm page logic
// (ui/confirm-page.js) tapping through the worker's presence relay (shared/presence-confirm.js) →
// a fake host answering presence_begin / presence_complete.
import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createConfirmBroker } from "../../extension/worker/confirm-broker.js";
import { INPUT_DELAY_MS, runConfirmPage } from "../../extension/ui/confirm-page.js";
import { confirmWindowMessages, createConfirmer } from "../../extension/shared/confirm-window.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createPresenceConfirm } from "../../extension/shared/presence-confirm.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { readHandlers } from "../../extension/handlers/read.js";
import { fakeConfirmDoc, fakeLog, fakeTimers, flush, testClock, pageRouter } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const EXT_ID = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const PAGE = `chrome-extension://${EXT_ID}/confirm.html`;
const OK = "https://a.test";
const POLICY = { origins: [OK], eval: true, upload: true, presenceConfirm: true, confirmTimeoutSeconds: 30 };
const CTX = { session: "s1", policy: parsePolicy(POLICY) };

/**
 * @param {{host?: (action: string, args: object) => any, onWindow?: (h: any, url: string, windowId: number) => void}} opts
 */
function harness({ host, onWindow } = {}) {
  const timers = fakeTimers();
  let n = 0;
  const broker = createConfirmBroker({ ...timers, newId: () => `c${++n}` });
  const hostCalls = [];
  const hostCall = async (action, args) => {
    hostCalls.push([action, structuredClone(args)]);
    if (host) return host(action, args);
    if (action === "presence_begin") return { challengeId: `ch${hostCalls.length}`, options: { publicKey: { challenge: "AAAA" } } };
    if (action === "presence_complete") return { done: true };
    throw new BridgeError("bad_request", "unexpected");
  };
  const relay = createPresenceConfirm({ broker, hostCall });
  const windows = [];
  const assertions = [];
  const h = {
    timers, broker, hostCalls, windows, assertions, relay, pages: [],
    /** What the SW's onMessage does for a message from the page at `url`. */
    async route(msg, url) {
      const sender = { id: EXT_ID, url: `chrome-extension://${EXT_ID}/${url}` };
      return pageRouter(EXT_ID, [...relay.messages, ...confirmWindowMessages(broker)])(msg, sender);
    },
    /** Open the confirm page for a window and run its logic. */
    async openPage(url, { getAssertion } = {}) {
      const doc = fakeConfirmDoc();
      const search = url.slice(url.indexOf("?"));
      const api = {
        sendMessage: (m) => h.route(structuredClone(m), url),
        requestPermission: async () => false,
        getAssertion: getAssertion ?? (async (opts) => { assertions.push(opts); return { id: "cred", response: { signature: "sig" } }; }),
      };
      const clock = testClock();
      const shown = await runConfirmPage({ doc, search, api, clock });
      clock.advance(INPUT_DELAY_MS); // the input delay, then the person's click
      h.pages.push(doc);
      return { doc, shown };
    },
  };
  const confirm = createConfirmer({
    broker,
    windows: {
      createWindow: async (opts) => {
        const windowId = 100 + windows.length;
        windows.push(opts.url);
        setImmediate(() => onWindow?.(h, opts.url, windowId));
        return { id: windowId };
      },
      removeWindow: async () => {},
    },
    log: fakeLog(),
  });
  const ownership = createOwnership();
  ownership.claim("s1", 1);
  const scripts = [];
  // The page code (the file input's probe) and Chrome's debugger (what runs): each recorded.
  const browser = {
    getTab: async () => ({ id: 1, windowId: 7, url: `${OK}/x`, status: "complete" }),
    executeFiles: async () => [],
    executeScriptArgs: async (tabId, func, [op]) => {
      scripts.push([op]);
      return [{ result: { tag: "input", type: "file", target: { role: "button", name: "f", docToken: "d", lastRef: 1 } } }];
    },
  };
  const listeners = new Set();
  const cdp = {
    ensure: async () => {},
    listen: (_tabId, fn) => { listeners.add(fn); return () => listeners.delete(fn); },
    children: () => [],
    send: async (_ctx, _tabId, method, params = {}) => {
      if (method === "Runtime.evaluate") {
        scripts.push(["evaluate"]);
        return { result: { type: "number", value: 42 } };
      }
      if (method === "DOM.setFileInputFiles") scripts.push([method]);
      if (method === "Runtime.enable") {
        for (const fn of listeners) fn("Runtime.executionContextCreated", { context: { id: 7, origin: "chrome-extension://x", auxData: { type: "isolated", frameId: "F" } } });
      }
      const decl = String(params.functionDeclaration ?? "");
      if (decl.includes("__tabwardenRefs")) return { result: { value: "d" } };
      if (decl.includes("tabwardenLocate.resolve")) return { result: { objectId: "el" } };
      if (decl.includes("this.type === 'file'")) return { result: { value: { file: true, multiple: false } } };
      return {};
    },
  };
  const ensureOrigin = async (url) => new URL(url).origin;
  const routes = new Map(readHandlers({ browser, ownership, loads: createLoadWatcher(timers), ensureOrigin, confirm, cdp }));
  h.scripts = scripts;
  h.call = (action, args) => routes.get(action)(args, CTX);
  return h;
}

/** The person clicks #tap as soon as the window shows. */
const tapper = async (h, url) => {
  const { doc } = await h.openPage(url);
  doc.el("tap").click();
};

test("eval happy path: the window opens in presence mode, the tap is verified by the host, then the code runs", async () => {
  let pageDoc = null;
  const h = harness({ onWindow: async (hh, url) => { const { doc } = await hh.openPage(url); pageDoc = doc; doc.el("tap").click(); } });
  const code = "document.title.length * 2";
  assert.deepEqual(await h.call("page_eval", { tabId: 1, code }), { result: 42 });
  assert.deepEqual(h.windows, ["confirm.html?id=c1&mode=presence"]);
  assert.equal(pageDoc.el("allow").hidden, true, "no Allow click in presence mode");
  assert.equal(pageDoc.el("tap").hidden, false);
  assert.ok(pageDoc.el("detail").textContent.endsWith(code), "the window shows the full code");
  assert.equal(pageDoc.el("origin").textContent, OK);
  const detail = JSON.stringify({ code, origin: OK }); // canonical: keys sorted, compact
  assert.deepEqual(h.hostCalls[0], ["presence_begin", { action: "confirm.eval", detail }]);
  assert.equal(h.hostCalls[1][0], "presence_complete");
  assert.deepEqual(h.hostCalls[1][1], { challengeId: "ch1", action: "confirm.eval", detail, response: { id: "cred", response: { signature: "sig" } } });
  assert.deepEqual(h.assertions, [{ challenge: "AAAA" }], "the page ran credentials.get with the host's options");
  assert.deepEqual(h.scripts.map((s) => s[0]), ["evaluate"], "the code ran once, through the debugger");
  await flush();
  assert.match(pageDoc.el("status").textContent, /Allowed/);
});

test("host refuses the tap -> confirm_denied and nothing runs", async () => {
  for (const refusal of [() => { throw new BridgeError("presence_refused", "bad signature"); }, () => ({ done: false }), () => null]) {
    const h = harness({
      onWindow: tapper,
      host: (action) => (action === "presence_begin" ? { challengeId: "chX", options: { publicKey: {} } } : refusal()),
    });
    await assert.rejects(h.call("page_eval", { tabId: 1, code: "1" }), (e) => e.code === "confirm_denied");
    assert.deepEqual(h.hostCalls.map((c) => c[0]), ["presence_begin", "presence_complete"]);
    assert.equal(h.scripts.length, 0);
  }
});

test("presence_begin refused (no enrolled credential) or the person cancels the key prompt -> denied", async () => {
  const h1 = harness({ onWindow: tapper, host: () => { throw new BridgeError("presence_refused", "no credential"); } });
  await assert.rejects(h1.call("page_eval", { tabId: 1, code: "1" }), (e) => e.code === "confirm_denied");
  assert.equal(h1.scripts.length, 0);
  const h2 = harness({
    onWindow: async (h, url) => {
      const { doc } = await h.openPage(url, { getAssertion: async () => { throw new Error("NotAllowedError"); } });
      doc.el("tap").click();
    },
  });
  await assert.rejects(h2.call("page_upload", { tabId: 1, selector: "input", paths: ["/p/f.txt"], files: [{ name: "f.txt", size: 1 }] }),
    (e) => e.code === "confirm_denied");
  assert.deepEqual(h2.hostCalls.map((c) => c[0]), ["presence_begin"], "no complete without an assertion");
  assert.deepEqual(h2.hostCalls[0][1], { action: "confirm.upload", detail: JSON.stringify({ origin: OK, path: "/p/f.txt" }) });
  assert.deepEqual(h2.scripts.map((s) => s[0]), ["getState", "getState"], "only the probes ran; the file was never set");
});

test("closing the window denies, a timeout answers confirm_timeout; a click-style allow cannot stand in for the tap", async () => {
  const h = harness({ onWindow: (hh, _url, windowId) => hh.broker.closed(windowId) });
  await assert.rejects(h.call("page_eval", { tabId: 1, code: "1" }), (e) => e.code === "confirm_denied");
  assert.equal(h.scripts.length, 0);

  const t = harness({ onWindow: (hh) => hh.timers.advance(30_000) });
  await assert.rejects(t.call("page_eval", { tabId: 1, code: "1" }), (e) => e.code === "confirm_timeout");
  assert.equal(t.scripts.length, 0);

  const c = harness({ onWindow: async (hh, url) => assert.deepEqual(await hh.route({ type: "confirm_answer", id: "c1", decision: "allow" }, url), { ok: false }) });
  await assert.rejects(c.call("page_eval", { tabId: 1, code: "1" }), (e) => e.code === "confirm_denied");
  assert.equal(c.hostCalls.length, 0);
  assert.equal(c.scripts.length, 0);
});

test("no grace: every call taps again, with a fresh challenge", async () => {
  const h = harness({ onWindow: tapper });
  await h.call("page_eval", { tabId: 1, code: "1" });
  await h.call("page_eval", { tabId: 1, code: "1" });
  await h.call("page_eval", { tabId: 1, code: "2" });
  assert.equal(h.windows.length, 3);
  assert.deepEqual(h.hostCalls.map((c) => c[0]), ["presence_begin", "presence_complete", "presence_begin", "presence_complete", "presence_begin", "presence_complete"]);
  assert.deepEqual(h.hostCalls.filter((c) => c[0] === "presence_complete").map((c) => c[1].challengeId), ["ch1", "ch3", "ch5"]);
  assert.equal(h.scripts.length, 3);
  assert.equal(h.relay.size(), 0);
});

test("the relay answers only the confirm page for its own id, never takes action/detail from the page, taps once", async () => {
  const h = harness();
  const { id } = h.broker.open({ kind: "action", tool: "page_eval", origin: OK, detail: "Run?", presence: { action: "confirm.eval", detail: "{}" }, timeoutMs: 1000 });
  const plain = h.broker.open({ kind: "action", tool: "tab_close", origin: OK, detail: "Close?", timeoutMs: 1000 });
  const ctx = { extensionId: EXT_ID, pageUrl: PAGE };
  assert.equal(pageRouter(ctx.extensionId, h.relay.messages)({ type: "confirm_details", id }, {}), undefined);
  for (const sender of [{ id: "other", url: `${PAGE}?id=${id}` }, { id: EXT_ID, url: `chrome-extension://${EXT_ID}/options.html?id=${id}` },
    { id: EXT_ID, url: `${PAGE}?id=${plain.id}` }, { id: EXT_ID, url: "https://evil.test/confirm.html" }]) {
    assert.deepEqual(await pageRouter(ctx.extensionId, h.relay.messages)({ type: "confirm_presence_begin", id }, sender), { ok: false, code: "bad_request" });
  }
  assert.deepEqual(await h.route({ type: "confirm_presence_begin", id: plain.id }, `confirm.html?id=${plain.id}`), { ok: false, code: "bad_request" },
    "no tap for a click-style confirmation");
  const begun = await h.route({ type: "confirm_presence_begin", id, action: "policy.widen", detail: '{"eval":true}' }, `confirm.html?id=${id}`);
  assert.equal(begun.ok, true);
  assert.deepEqual(h.hostCalls[0], ["presence_begin", { action: "confirm.eval", detail: "{}" }]);
  assert.deepEqual(await h.route({ type: "confirm_presence_begin", id }, `confirm.html?id=${id}`), { ok: false, code: "bad_request" });
  assert.equal(h.broker.details(id), null, "a second begin denies the confirmation");
});
