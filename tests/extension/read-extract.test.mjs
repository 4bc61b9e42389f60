// page_markdown's main mode and page_scrape's addresses through the real handlers:
// the page-side functions run against a small fake page, as Chrome would run them in the page,
// and the reply is what dispatch masks (maskOutcome) before it leaves the extension.
import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { mapSrcset, readHandlers, URL_ATTRS } from "../../extension/handlers/read.js";
import { maskOutcome } from "../../extension/worker/mask.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const OK = "http://127.0.0.1:8000";
const S1 = { session: "s1", policy: parsePolicy({ origins: [OK], confirm: [], confirmTimeoutSeconds: 30 }) };
const EVIL = "https://alice:hunter2@evil.test/cb?session=s3cr3tvalue&q=ok&t=a8f5f167f44f4964e6c998dee827110c#access_token=abcdef123456";
const SECRETS = ["alice", "hunter2", "s3cr3tvalue", "a8f5f167f44f4964e6c998dee827110c", "abcdef123456", "Zm9vYmFy0123456789abcdef"];

const text = (data) => ({ nodeType: 3, data });
function el(tag, props = {}, ...children) {
  const attrs = props.attrs ?? {};
  const node = {
    nodeType: 1, tagName: tag.toUpperCase(), childNodes: children, href: props.href, src: props.src, parentElement: null,
    innerText: props.innerText ?? children.map((c) => c.data ?? c.innerText ?? "").join(""),
    get textContent() { return children.map((c) => c.data ?? c.textContent ?? "").join(""); },
    hasAttribute: (n) => Object.hasOwn(attrs, n), getAttribute: (n) => attrs[n] ?? null,
    checkVisibility: () => true,
  };
  for (const c of children) if (c.nodeType === 1) c.parentElement = node;
  return node;
}

/** The article page: chrome around <main>; the page's base URL is /docs/. */
function page() {
  const links = [
    el("a", { href: `${OK}/docs/guide`, attrs: { href: "guide" } }, text("guide")),
    el("a", { href: EVIL, attrs: { href: EVIL } }, text("Sign in")),
  ];
  const img = el("img", { src: "https://cdn.test/x.png?sig=Zm9vYmFy0123456789abcdef&w=2", attrs: {
    src: "https://cdn.test/x.png?sig=Zm9vYmFy0123456789abcdef&w=2", alt: "pic",
    srcset: "x1.png 1x, https://cdn.test/x2.png?token=abcdef123456 2x", "data-src": "lazy.png" } });
  const body = el("body", {},
    el("nav", {}, el("a", { href: `${OK}/menu` }, text("Menu"))),
    el("main", {}, el("h1", {}, text("Title")), el("p", {}, text("Read the "), links[0], text(" or "), links[1], text(".")), el("p", {}, img)),
    el("footer", {}, text("Copyright")));
  const document = {
    body, baseURI: `${OK}/docs/`,
    querySelectorAll: (sel) => ({ a: links, img: [img] })[sel] ?? [],
  };
  return { document, location: { href: `${OK}/docs/page` }, origin: OK };
}

function harness() {
  const ownership = createOwnership();
  const tabs = new Map([[1, { id: 1, windowId: 7, url: `${OK}/docs/page`, title: "Docs", status: "complete" }]]);
  const calls = [];
  const run = (func, args) => {
    const globals = page();
    const saved = {};
    for (const k of Object.keys(globals)) saved[k] = Object.getOwnPropertyDescriptor(globalThis, k);
    for (const [k, v] of Object.entries(globals)) Object.defineProperty(globalThis, k, { value: v, configurable: true, writable: true });
    try {
      return [{ result: structuredClone(func(...structuredClone(args))) }];
    } finally {
      for (const [k, d] of Object.entries(saved)) {
        if (d) Object.defineProperty(globalThis, k, d);
        else delete globalThis[k];
      }
    }
  };
  const browser = {
    getTab: async (id) => ({ ...tabs.get(id) }),
    executeScript: async (tabId, func) => { calls.push([func.name, "no args"]); return run(func, []); },
    executeScriptArgs: async (tabId, func, args) => { calls.push([func.name, args]); return run(func, args); },
    getAllFrames: async () => [{ frameId: 0, parentFrameId: -1, url: tabs.get(1).url }],
  };
  const ensureOrigin = async (url, ctx) => {
    const o = new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const routes = new Map(readHandlers({ browser, ownership, loads: createLoadWatcher(fakeTimers()), ensureOrigin, confirm: async () => "allow" }));
  ownership.claim("s1", 1);
  const checked = schemaChecked((a) => routes.get(a));
  /** The reply as it leaves the extension (dispatch runs maskOutcome over every reply). */
  const call = async (action, args) => maskOutcome(action, { ok: true, result: await checked(action, args, S1) }).result;
  return { call, calls };
}

test("page_markdown main: the <main> element only, its links and image absolute and masked", async () => {
  const h = harness();
  const whole = await h.call("page_markdown", { tabId: 1 });
  assert.deepEqual(h.calls.at(-1), ["readPageBlocks", "no args"]);
  assert.ok(whole.text.startsWith("[Menu](http://127.0.0.1:8000/menu)\n\n# Title") && whole.text.endsWith("Copyright"), whole.text);
  const main = await h.call("page_markdown", { tabId: 1, main: true });
  assert.deepEqual(h.calls.at(-1), ["readPageBlocks", [{ main: true }]]);
  assert.equal(main.text, "# Title\n\nRead the [guide](http://127.0.0.1:8000/docs/guide) or [Sign in](https://evil.test/cb?session=[masked:%2011%20chars,%20letters+digits]"
    + "&q=ok&t=[masked:%2032%20chars,%20hex]#access_token=[masked:%2012%20chars,%20letters+digits]).\n\n"
    + "![pic](https://cdn.test/x.png?sig=[masked:%2024%20chars,%20base64]&w=2)");
  assert.deepEqual({ url: main.url, title: main.title, nextOffset: main.nextOffset }, { url: `${OK}/docs/page`, title: "Docs", nextOffset: null });
  for (const reply of [whole, main]) for (const s of SECRETS) assert.ok(!JSON.stringify(reply).includes(s), s);
  await assert.rejects(h.call("page_markdown", { tabId: 1, main: "yes" }), (e) => e.code === "bad_request");
});

test("page_scrape: address attributes absolute against the document's base URL, masked as links are", async () => {
  const h = harness();
  const a = await h.call("page_scrape", { tabId: 1, selector: "a", attrs: ["href"] });
  assert.deepEqual(a.items.map((i) => i.attrs.href), [`${OK}/docs/guide`,
    "https://evil.test/cb?session=[masked: 11 chars, letters+digits]&q=ok&t=[masked: 32 chars, hex]#access_token=[masked: 12 chars, letters+digits]"]);
  const img = await h.call("page_scrape", { tabId: 1, selector: "img", attrs: ["src", "srcset", "data-src", "alt"] });
  assert.deepEqual(img.items[0].attrs, {
    src: "https://cdn.test/x.png?sig=[masked: 24 chars, base64]&w=2",
    srcset: `${OK}/docs/x1.png 1x, https://cdn.test/x2.png?token=[masked: 12 chars, letters+digits] 2x`,
    "data-src": "lazy.png", // not an address attribute: as written
    alt: "pic",
  });
  for (const reply of [a, img]) for (const s of SECRETS) assert.ok(!JSON.stringify(reply).includes(s), s);
});

test("mapSrcset keeps each candidate's descriptor; the address attributes are lower-case names", () => {
  assert.equal(mapSrcset(" a.png 1x,b.png  640w , ", (u) => u.toUpperCase()), "A.PNG 1x, B.PNG 640w, ");
  assert.ok(URL_ATTRS.every((n) => n === n.toLowerCase()) && URL_ATTRS.includes("href") && URL_ATTRS.includes("src"));
});
