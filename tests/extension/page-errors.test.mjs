import { test } from "node:test";
import assert from "node:assert/strict";
import { pageErrorMessage, reportPageErrors } from "../../extension/shared/page-errors.js";
import { BURST, createErrorReporter, pageErrorMessages } from "../../extension/worker/error-report.js";
import { MESSAGE_TABLE, TIER, TIER_PAGES, createMessageRouter } from "../../extension/worker/message-router.js";

const EXT = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const SELF = { extensionId: EXT, pageUrl: (page) => `chrome-extension://${EXT}/${page}` };
const SECRET = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIz";

/** A window whose error listeners the test fires. */
function fakeWin() {
  const on = { error: [], unhandledrejection: [] };
  return { addEventListener: (type, fn) => on[type]?.push(fn), fire: (type, event) => { for (const fn of on[type]) fn(event); } };
}

/** The worker's side: the real reporter (masking, cap) over a recorded host call. */
function worker() {
  const sent = [];
  const reporter = createErrorReporter({ hostCall: async (action, args) => { sent.push({ action, args }); }, now: () => 0 });
  const handlers = [...MESSAGE_TABLE.keys()].map((type) => [type, async () => ({ ok: true })]);
  const own = new Map(pageErrorMessages(reporter));
  const router = createMessageRouter({ ...SELF, handlers: handlers.map(([t, h]) => [t, own.get(t) ?? h]) });
  return { sent, router };
}

test("a page's uncaught error and unhandled rejection reach the host log, masked, named by page", async () => {
  const { sent, router } = worker();
  for (const page of ["options", "popup", "confirm"]) {
    const win = fakeWin();
    const sender = { id: EXT, url: `${SELF.pageUrl(TIER_PAGES[page])}${page === "confirm" ? "?id=c-1" : ""}` };
    const routed = [];
    const also = page === "confirm" ? { id: "c-1" } : {};
    reportPageErrors(page, win, async (msg) => { routed.push(await router.route(msg, sender)); }, also);
    win.fire("error", { error: new TypeError(`boom ${SECRET}`) });
    win.fire("unhandledrejection", { reason: new Error("lost") });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(routed, [{ ok: true }, { ok: true }], page);
  }
  assert.equal(sent.length, 6);
  assert.ok(sent.every((s) => s.action === "extension_error"));
  assert.deepEqual(sent.map((s) => s.args.where), ["page options", "page options", "page popup", "page popup", "page confirm", "page confirm"]);
  assert.match(sent[0].args.message, /^TypeError: boom /);
  assert.equal(JSON.stringify(sent).includes("eyJhbGciOiJIUzI1NiJ9"), false, "the token is masked before it leaves");
  assert.equal(sent[1].args.kind, "rejection");
});

test("a web page's content script cannot put lines in the host log; a malformed report reports nothing", async () => {
  const { sent, router } = worker();
  const msg = pageErrorMessage("options", "error", new Error("forged"));
  const contentScript = { id: EXT, url: "https://evil.test/options.html", tab: { id: 3 } };
  assert.deepEqual(await router.route(msg, contentScript), { ok: false, code: "bad_request" });
  const options = { id: EXT, url: SELF.pageUrl(TIER_PAGES[TIER.OPTIONS]) };
  for (const bad of [{ ...msg, page: "evil" }, { ...msg, kind: "warn" }, { ...msg, message: 5 }, { ...msg, stack: null }]) {
    assert.deepEqual(await router.route(bad, options), { ok: false }, JSON.stringify(bad));
  }
  assert.deepEqual(sent, [], "nothing reached the host");
  assert.equal(pageErrorMessage("background", "error", new Error("x")), null);
});

test("a flood of page errors is capped by the worker's own bound; a send that fails throws nothing", async () => {
  const { sent, router } = worker();
  const win = fakeWin();
  const sender = { id: EXT, url: SELF.pageUrl(TIER_PAGES[TIER.POPUP]) };
  const report = reportPageErrors("popup", win, (msg) => router.route(msg, sender));
  for (let i = 0; i < BURST * 5; i++) report(new Error(`e${i}`));
  await new Promise((r) => setImmediate(r));
  assert.equal(sent.length, BURST);
  const failing = fakeWin();
  reportPageErrors("popup", failing, () => Promise.reject(new Error("no worker")));
  failing.fire("error", { message: "x" });
  reportPageErrors("popup", fakeWin(), () => { throw new Error("no runtime"); })(new Error("y"));
  await new Promise((r) => setImmediate(r));
});
