import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { base64Bytes, readHandlers } from "../../extension/handlers/read.js";
import { imageSize } from "../../extension/shared/screenshot.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";
import { ACTION_ARGS } from "../../extension/worker/catalogue.js";
import { parsePolicy } from "../../extension/worker/policy.js";

const OK = "http://127.0.0.1:8000";
const POLICY = { origins: [OK], confirm: [], confirmTimeoutSeconds: 30 };
const S1 = { session: "s1", policy: parsePolicy(POLICY) };

/** A 3x2 PNG header (enough for pngSize) as base64. */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), Buffer.from("IHDR"),
  Buffer.from([0, 0, 0, 3, 0, 0, 0, 2, 8, 6, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef])]).toString("base64");

class FakeInput {
  constructor(type, attrs = {}) { this.tagName = "INPUT"; this.type = type; this.attrs = { type, ...attrs }; this.files = null; this.events = []; }
  getAttribute(n) { return this.attrs[n] ?? null; }
  dispatchEvent(e) { this.events.push(e.type); return true; }
}
class FakeDataTransfer {
  constructor() { const files = []; this.files = files; this.items = { add: (f) => files.push(f) }; }
}
const node = (tag, innerText, attrs = {}) => ({ tagName: tag, innerText, getAttribute: (n) => attrs[n] ?? null });

/**
 * Fake browser: executeScriptArgs really runs the page-side function against fake page globals
 * (location, storage, document) of the tab, like Chrome would in the page.
 */
function harness({ decision = "allow" } = {}) {
  const ownership = createOwnership();
  const loads = createLoadWatcher(fakeTimers());
  const tabs = new Map();
  const pages = new Map();
  const calls = { confirm: [], script: [], update: [], capture: [], cookies: [], frames: [] };
  /** frameId -> url of the tab's subframes (page_upload with frame). */
  const frameUrls = new Map();
  let answer = decision;
  let beforeRun = () => {};
  let captureError = null;
  let onCapture = () => {};
  const browser = {
    getTab: async (id) => { const t = tabs.get(id); if (!t) throw new Error("No tab"); return { ...t }; },
    updateTab: async (id, props) => {
      calls.update.push([id, props]);
      for (const t of tabs.values()) if (t.windowId === tabs.get(id).windowId) t.active = t.id === id;
    },
    capturePage: async (tabId, opts) => {
      calls.capture.push([tabId, opts]);
      if (captureError) throw captureError;
      onCapture();
      return opts.fullPage ? { data: PNG, width: 800, height: 9000 } : { data: PNG };
    },
    cookiesForUrl: async (url) => {
      calls.cookies.push(url);
      return [
        { name: "sid", value: "9f86d081884c7d659a2feaa0c55ad015", domain: "127.0.0.1", path: "/", httpOnly: true, secure: false },
        { name: "jwt", value: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ", domain: "127.0.0.1", path: "/app", httpOnly: false, secure: true },
        { name: "lang", value: "en", domain: "127.0.0.1", path: "/" },
      ];
    },
    executeScript: async (tabId, func) => {
      calls.script.push([tabId, func.name, "ISOLATED"]);
      return [{ result: pages.get(tabId).blocks(tabs.get(tabId)) }];
    },
    getAllFrames: async (tabId) => [{ frameId: 0, parentFrameId: -1, url: tabs.get(tabId).url },
      ...[...frameUrls].map(([frameId, url]) => ({ frameId, parentFrameId: 0, url }))],
    executeScriptArgs: async (tabId, func, args, world = "ISOLATED", frameId = 0) => {
      calls.script.push([tabId, func.name, world, args]);
      calls.frames.push(frameId);
      beforeRun(tabId);
      const page = pages.get(tabId);
      const saved = {};
      const globals = {
        location: { href: frameId === 0 ? tabs.get(tabId).url : frameUrls.get(frameId) }, localStorage: page.local, sessionStorage: page.session,
        document: page.document, HTMLInputElement: FakeInput, DataTransfer: FakeDataTransfer,
      };
      for (const k of Object.keys(globals)) saved[k] = Object.getOwnPropertyDescriptor(globalThis, k);
      for (const [k, v] of Object.entries(globals)) Object.defineProperty(globalThis, k, { value: v, configurable: true, writable: true });
      try {
        const result = await func(...structuredClone(args));
        return [{ result: structuredClone(result) }];
      } finally {
        for (const [k, d] of Object.entries(saved)) {
          if (d) Object.defineProperty(globalThis, k, d);
          else delete globalThis[k];
        }
      }
    },
  };
  const ensureOrigin = async (url, ctx) => {
    const o = url && new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const confirm = async (req) => { calls.confirm.push(req); return answer; };
  const routes = new Map(readHandlers({ browser, ownership, loads, ensureOrigin, confirm }));
  const storage = (entries) => ({
    get length() { return Object.keys(entries).length; },
    key: (i) => Object.keys(entries)[i] ?? null,
    getItem: (k) => (Object.hasOwn(entries, k) ? entries[k] : null),
  });
  const open = (id, url, session = "s1") => {
    tabs.set(id, { id, windowId: 7, active: false, url, title: `T ${url}`, status: "complete" });
    const file = new FakeInput("file");
    const pass = new FakeInput("password", { value: "hunter2", name: "pw" });
    const hidden = new FakeInput("hidden", { value: "csrf-9f86d081884c7d659a2f", name: "csrf" });
    const many = Array.from({ length: 1500 }, (_, i) => node("LI", `item ${i}`));
    const bySelector = {
      "input[type=file]": [file], "#pw": [pass], "input": [pass, hidden, file], "li": many,
      ".price": [node("SPAN", "Card 4111 1111 1111 1111 ok", { "data-card": "4111-1111-1111-1111", href: "/x" })],
    };
    pages.set(id, {
      file, pass,
      local: storage({ token: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", theme: "dark" }),
      session: storage({ cart: "12345678" }),
      document: {
        querySelectorAll: (sel) => { if (sel === "[[bad") throw new Error("SyntaxError"); return bySelector[sel] ?? []; },
      },
      blocks: (tab) => ({ href: tab.url, truncated: false, blocks: [
        { type: "h", level: 1, inline: [{ text: "Shop" }] },
        { type: "p", inline: [{ text: "Pay with 4111 1111 1111 1111 at " }, { text: "checkout", href: `${OK}/pay` }] },
      ] }),
    });
    if (session) ownership.claim(session, id);
  };
  const checked = schemaChecked((a) => routes.get(a));
  const call = (action, args, ctx = S1) => checked(action, args, ctx);
  return {
    call, calls, tabs, pages, open, routes, frameUrls,
    set decision(d) { answer = d; },
    set beforeRun(fn) { beforeRun = fn; },
    set captureError(e) { captureError = e; },
    set onCapture(fn) { onCapture = fn; },
  };
}

test("routes and pure helpers", () => {
  assert.deepEqual([...harness().routes.keys()],
    ["page_screenshot", "cookie_get", "storage_get", "page_markdown", "page_scrape", "page_eval", "page_upload"]);
  assert.deepEqual(imageSize(PNG), { width: 3, height: 2, mimeType: "image/png" });
  assert.equal(imageSize("QUJD"), null);
  assert.equal(base64Bytes("QUJDRA=="), 4);
  assert.equal(base64Bytes("not base64!"), -1);
});

test("not-owned, other session's and gone tabs are refused by every tool", async () => {
  const h = harness();
  h.open(1, `${OK}/a`, null);
  h.open(2, `${OK}/a`, "s2");
  const args = { tabId: 1, area: "local", selector: "li", code: "1", paths: ["/s/f.txt"], files: [{ name: "f.txt", size: 3 }] };
  const schemas = new Map(ACTION_ARGS);
  for (const action of h.routes.keys()) {
    const ctx = { session: "s1", policy: parsePolicy({ ...POLICY, eval: true, upload: true }) };
    // Each tool's own arguments (its schema refuses the others).
    const own = Object.fromEntries(Object.entries(args).filter(([k]) => Object.hasOwn(/** @type {any} */ (schemas.get(action)).properties, k)));
    await assert.rejects(h.call(action, own, ctx), (e) => e.code === "tab_not_owned", action);
    await assert.rejects(h.call(action, { ...own, tabId: 2 }, ctx), (e) => e.code === "tab_not_owned", action);
  }
  assert.equal(h.calls.script.length + h.calls.capture.length + h.calls.cookies.length + h.calls.confirm.length, 0);
});

test("page_screenshot: activates the tab, captures it through the debugger, returns base64 and its size", async () => {
  const h = harness();
  h.open(1, `${OK}/a`);
  h.open(2, `${OK}/b`);
  h.tabs.get(2).active = true;
  const r = await h.call("page_screenshot", { tabId: 1 });
  assert.deepEqual(r, { mimeType: "image/png", data: PNG, width: 3, height: 2 });
  assert.ok(!r.data.startsWith("data:"));
  assert.deepEqual(h.calls.update, [[1, { active: true }]]);
  assert.deepEqual(h.calls.capture, [[1, { fullPage: false, format: "png" }]]);
  const captured = [h.calls.capture.length, h.calls.update.length];
  for (const bad of [{ fullPage: "yes" }, { format: "gif" }, { format: ["png"] }, { region: "0,0,5,5" }, { region: { x: 0, y: 0, width: 5 } },
    { region: { x: 0, y: 0, width: 0, height: 5 } }, { region: { x: -1, y: 0, width: 5, height: 5 } },
    { region: { x: 0, y: 0, width: 5, height: 16385 } }, { region: { x: 0, y: 0, width: 5, height: 5, z: 1 } }]) {
    await assert.rejects(h.call("page_screenshot", { tabId: 1, ...bad }), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
  assert.deepEqual([h.calls.capture.length, h.calls.update.length], captured, "a refused call captures nothing");
});

test("page_screenshot: unapproved page, a failed capture, a page that navigates away meanwhile", async () => {
  const h = harness();
  h.open(1, "https://evil.test/");
  await assert.rejects(h.call("page_screenshot", { tabId: 1 }), (e) => e.code === "origin_not_approved");
  assert.equal(h.calls.capture.length, 0); // never attached to an unapproved page
  h.open(2, `${OK}/a`);
  h.captureError = new Error("Another debugger is already attached to the tab");
  await assert.rejects(h.call("page_screenshot", { tabId: 2 }), (e) => e.code === "internal_error" && /could not capture/.test(e.message));
  h.captureError = null;
  h.onCapture = () => { h.tabs.get(2).url = "https://evil.test/"; }; // the page navigated away
  await assert.rejects(h.call("page_screenshot", { tabId: 2 }), (e) => e.code === "origin_not_approved");
});

test("page_screenshot fullPage: the whole page, gated before and re-checked after", async () => {
  const h = harness();
  h.open(1, "https://evil.test/");
  await assert.rejects(h.call("page_screenshot", { tabId: 1, fullPage: true }), (e) => e.code === "origin_not_approved");
  assert.equal(h.calls.capture.length, 0);
  h.open(2, `${OK}/long`);
  // The size is the image's own (its header), never what the capture said.
  assert.deepEqual(await h.call("page_screenshot", { tabId: 2, fullPage: true }),
    { mimeType: "image/png", data: PNG, width: 3, height: 2 });
  assert.deepEqual(h.calls.capture, [[2, { fullPage: true, format: "png" }]]);
  assert.deepEqual(h.calls.update, [], "a full-page capture needs no activation");
  h.onCapture = () => { h.tabs.get(2).url = "https://evil.test/"; };
  await assert.rejects(h.call("page_screenshot", { tabId: 2, fullPage: true }), (e) => e.code === "origin_not_approved");
});

test("cookie_get: values are never raw, only shape hints; name filter; url of the gated tab", async () => {
  const h = harness();
  h.open(1, `${OK}/app/page`);
  const r = await h.call("cookie_get", { tabId: 1 });
  assert.deepEqual(r.cookies, [
    { name: "sid", value: "[masked: 32 chars, hex]", domain: "127.0.0.1", path: "/", httpOnly: true, secure: false },
    { name: "jwt", value: "[masked: JWT]", domain: "127.0.0.1", path: "/app", httpOnly: false, secure: true },
    { name: "lang", value: "[masked: 2 chars, letters]", domain: "127.0.0.1", path: "/", httpOnly: false, secure: false },
  ]);
  const json = JSON.stringify(r);
  for (const raw of ["9f86d081884c7d659a2feaa0c55ad015", "eyJhbGciOiJIUzI1NiJ9", "\"en\""]) assert.ok(!json.includes(raw), raw);
  assert.deepEqual(h.calls.cookies, [`${OK}/app/page`]);
  assert.deepEqual((await h.call("cookie_get", { tabId: 1, name: "jwt" })).cookies.map((c) => c.name), ["jwt"]);
  await assert.rejects(h.call("cookie_get", { tabId: 1, name: 5 }), (e) => e.code === "bad_request");
  h.open(2, "https://bank.test/");
  await assert.rejects(h.call("cookie_get", { tabId: 2 }), (e) => e.code === "origin_not_approved");
  assert.equal(h.calls.cookies.length, 2);
});

test("storage_get: local/session, one key or all, values masked", async () => {
  const h = harness();
  h.open(1, `${OK}/a`);
  assert.deepEqual(await h.call("storage_get", { tabId: 1, area: "local" }),
    { items: [{ key: "token", value: "[masked: JWT]" }, { key: "theme", value: "[masked: 4 chars, letters]" }] });
  assert.deepEqual(await h.call("storage_get", { tabId: 1, area: "session", key: "cart" }),
    { items: [{ key: "cart", value: "[masked: 8 digits]" }] });
  assert.deepEqual(await h.call("storage_get", { tabId: 1, area: "local", key: "nope" }), { items: [] });
  const ran = h.calls.script.length;
  for (const bad of [{ area: "cookies" }, { area: ["local"] }, { area: "__proto__" }, { key: "" }, { key: "k".repeat(4097) }, { key: 1 }]) {
    await assert.rejects(h.call("storage_get", { tabId: 1, ...bad }), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
  assert.equal(h.calls.script.length, ran, "a refused call reads nothing");
});

test("page_markdown: Markdown, cards masked, paged like page_text, other-origin reads refused", async () => {
  const h = harness();
  h.open(1, `${OK}/shop`);
  const r = await h.call("page_markdown", { tabId: 1 });
  assert.deepEqual(r, { text: `# Shop\n\nPay with [card] at [checkout](${OK}/pay)`, nextOffset: null, totalChars: 64,
    url: `${OK}/shop`, title: `T ${OK}/shop` });
  assert.deepEqual((await h.call("page_markdown", { tabId: 1, offset: 8, maxChars: 3 })).text, "Pay");
  await assert.rejects(h.call("page_markdown", { tabId: 1, maxChars: 0 }), (e) => e.code === "bad_request");
  h.pages.get(1).blocks = () => ({ href: "https://evil.test/", blocks: [] });
  await assert.rejects(h.call("page_markdown", { tabId: 1 }), (e) => e.code === "origin_not_approved");
});

test("page_scrape: text and attrs, cards masked, password values never, hidden values masked, capped", async () => {
  const h = harness();
  h.open(1, `${OK}/a`);
  assert.deepEqual(await h.call("page_scrape", { tabId: 1, selector: ".price", attrs: ["data-card", "href", "missing"] }),
    { items: [{ text: "Card [card] ok", attrs: { "data-card": "[card]", href: `${OK}/x` } }] });
  const inputs = await h.call("page_scrape", { tabId: 1, selector: "input", attrs: ["value", "name", "type"] });
  assert.deepEqual(inputs.items, [
    { text: "", attrs: { name: "pw", type: "password" } },
    { text: "", attrs: { value: "[masked: 25 chars, base64url]", name: "csrf", type: "hidden" } },
    { text: "", attrs: { type: "file" } },
  ]);
  assert.ok(!JSON.stringify(inputs).includes("hunter2"));
  assert.equal((await h.call("page_scrape", { tabId: 1, selector: "li" })).items.length, 1000);
  await assert.rejects(h.call("page_scrape", { tabId: 1, selector: "[[bad" }), (e) => e.code === "bad_request" && /selector/.test(e.message));
  const ran = h.calls.script.length;
  await assert.rejects(h.call("page_scrape", { tabId: 1, selector: "li", attrs: ["on click"] }), (e) => e.code === "bad_request");
  for (const bad of [{ attrs: "href" }, { attrs: [1] }, { attrs: Array.from({ length: 51 }, (_, i) => `a${i}`) }, { attrs: ["1x"] },
    { attrs: ["a".repeat(101)] }, { attrs: ["href\n"] }, { selector: "" }, { selector: "a".repeat(4097) }, { selector: 3 }]) {
    await assert.rejects(h.call("page_scrape", { tabId: 1, selector: "li", ...bad }), (e) => e.code === "bad_request", JSON.stringify(bad).slice(0, 80));
  }
  assert.equal(h.calls.script.length, ran, "a refused call reads nothing");
  assert.equal((await h.call("page_scrape", { tabId: 1, selector: "li", attrs: Array.from({ length: 50 }, (_, i) => `a${i}`) })).items.length, 1000);
  await assert.rejects(h.call("page_scrape", { tabId: 1 }), (e) => e.code === "bad_request");
});
