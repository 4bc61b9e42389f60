import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { FULL_PAGE_MAX, captureClip, imageSize } from "../../extension/shared/screenshot.js";
import { createDownloadLog } from "../../extension/worker/downloads.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { filesHandlers, pdfName, viewportSettings } from "../../extension/handlers/files.js";
import { screenshotOptions } from "../../extension/handlers/read.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";
import { argsRefusal } from "../../extension/worker/dispatch.js";
import { parsePolicy } from "../../extension/worker/policy.js";

const OK = "http://127.0.0.1:8000";
const S1 = { session: "s1", policy: parsePolicy({ origins: [OK], confirm: [] }) };
const begin = (guid, url, suggestedFilename) => ["Page.downloadWillBegin", { guid, url, suggestedFilename, frameId: "F" }];
const progress = (guid, state, receivedBytes = 10, totalBytes = 10) => ["Page.downloadProgress", { guid, state, receivedBytes, totalBytes }];
/** Frame `id` navigated to a document of `origin` (what attributes a download to it). */
const nav = (id, origin) => ["Page.frameNavigated", { frame: { id, url: `${origin}/`, securityOrigin: origin } }];
/** The policy of these tests approves OK only. */
const approvedOK = (origin) => origin === OK;
/** A download log whose tabs' frame "F" is on OK. */
function okLog(timers, tabs = [1]) {
  const log = createDownloadLog({ timers, now: timers.now });
  for (const tab of tabs) log.onEvent(tab, ...nav("F", OK));
  return log;
}

// ---------------------------------------------------------------- worker/downloads.js

test("downloads: a download that began before the wait counts; each finished one is answered once", async () => {
  const timers = fakeTimers();
  const log = okLog(timers);
  log.onEvent(1, ...begin("g1", `${OK}/a.csv`, "a.csv"));
  log.onEvent(1, ...progress("g1", "completed"));
  const first = await log.wait(1, {}, 1000, approvedOK);
  assert.equal(first?.guid, "g1");
  assert.equal(first?.state, "complete");
  const again = log.wait(1, {}, 1000, approvedOK);
  timers.advance(1000);
  assert.equal(await again, null, "the same download is never handed out twice");
});

test("downloads: the filter picks by file name or URL; another tab's download is not this tab's", async () => {
  const timers = fakeTimers();
  const log = okLog(timers, [1, 2]);
  log.onEvent(2, ...begin("other", `${OK}/report.pdf`, "report.pdf"));
  log.onEvent(2, ...progress("other", "completed"));
  const waiting = log.wait(1, { filename: "REPORT" }, 5000, approvedOK);
  log.onEvent(1, ...begin("g1", `${OK}/data.json`, "data.json"));
  log.onEvent(1, ...progress("g1", "completed"));
  log.onEvent(1, ...begin("g2", `${OK}/files/report.pdf`, "report.pdf"));
  log.onEvent(1, ...progress("g2", "inProgress", 5));
  log.onEvent(1, ...progress("g2", "canceled", 5));
  const got = await waiting;
  assert.equal(got?.guid, "g2");
  assert.equal(got?.state, "failed");
  assert.equal((await log.wait(1, { url: "/data" }, 10, approvedOK))?.guid, "g1");
});

test("downloads: at the timeout a running download is reported started, and still answered later", async () => {
  const timers = fakeTimers();
  const log = okLog(timers);
  log.onEvent(1, ...begin("g1", `${OK}/big.iso`, "big.iso"));
  log.onEvent(1, ...progress("g1", "inProgress", 3, 100));
  const waiting = log.wait(1, {}, 500, approvedOK);
  timers.advance(500);
  const running = await waiting;
  assert.deepEqual([running?.state, running?.receivedBytes, running?.totalBytes], ["started", 3, 100]);
  const later = log.wait(1, {}, 500, approvedOK);
  log.onEvent(1, ...progress("g1", "completed", 100, 100));
  assert.equal((await later)?.state, "complete");
});

test("downloads: a closed tab's downloads are forgotten; unknown events and guids are ignored", async () => {
  const timers = fakeTimers();
  const log = okLog(timers);
  log.onEvent(1, ...begin("g1", `${OK}/a`, "a"));
  log.onEvent(1, ...progress("g1", "completed"));
  log.onEvent(1, "Page.downloadProgress", { guid: "nobody", state: "completed" });
  log.onEvent(1, "Page.frameNavigated", { guid: "g9" });
  log.removed(1);
  const waiting = log.wait(1, {}, 100, approvedOK);
  timers.advance(100);
  assert.equal(await waiting, null);
});

/** Whether `promise` has settled after the microtasks queued so far have run. */
async function settled(promise) {
  let done = false;
  promise.then(() => { done = true; }, () => { done = true; });
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
  return done;
}

test("downloads: a download an unapproved frame started is never matched; the wait ends as if it never began", async () => {
  /** The same wait on two logs, one of which sees the attacker's frame download a matching URL. */
  const run = async (withAttack) => {
    const timers = fakeTimers();
    const log = okLog(timers);
    log.onEvent(1, ...nav("EVIL", "http://127.0.0.1:9999"));
    const waiting = log.wait(1, { url: "token=s3cret" }, 3000, approvedOK);
    if (withAttack) {
      log.onEvent(1, "Page.downloadWillBegin", { guid: "x", frameId: "EVIL", url: `${OK}/f?token=s3cret`, suggestedFilename: "f" });
      log.onEvent(1, ...progress("x", "completed"));
    }
    const early = await settled(waiting);
    timers.advance(3000);
    return { early, answer: await waiting, pending: timers.pending() };
  };
  assert.deepEqual(await run(true), await run(false));
  assert.deepEqual(await run(true), { early: false, answer: null, pending: 0 });
  // Without a filter as well: nothing is handed out, not even as "started".
  const timers = fakeTimers();
  const log = okLog(timers);
  log.onEvent(1, ...nav("EVIL", "http://127.0.0.1:9999"));
  log.onEvent(1, "Page.downloadWillBegin", { guid: "y", frameId: "EVIL", url: `${OK}/big`, suggestedFilename: "big" });
  const any = log.wait(1, {}, 100, approvedOK);
  timers.advance(100);
  assert.equal(await any, null);
});

test("downloads: a download from a frame never seen navigating is withheld (fail closed); attribution is fixed when it begins", async () => {
  const timers = fakeTimers();
  const log = okLog(timers);
  log.onEvent(1, "Page.downloadWillBegin", { guid: "u", frameId: "UNSEEN", url: `${OK}/u`, suggestedFilename: "u" });
  log.onEvent(1, ...progress("u", "completed"));
  // A frame that started a download on another site, then navigated to an approved one.
  log.onEvent(1, ...nav("G", "http://127.0.0.1:9999"));
  log.onEvent(1, "Page.downloadWillBegin", { guid: "g", frameId: "G", url: `${OK}/g`, suggestedFilename: "g" });
  log.onEvent(1, ...progress("g", "completed"));
  log.onEvent(1, ...nav("G", OK));
  // Page.getFrameTree's later view never rewrites a frame the events already named.
  log.framesKnown(1, { frameTree: { frame: { id: "F", securityOrigin: "http://127.0.0.1:9999" }, childFrames: [{ frame: { id: "UNSEEN", securityOrigin: OK } }] } });
  const waiting = log.wait(1, {}, 100, approvedOK);
  timers.advance(100);
  assert.equal(await waiting, null);
  // A frame the tree named first is attributed from then on.
  log.onEvent(1, "Page.downloadWillBegin", { guid: "v", frameId: "UNSEEN", url: `${OK}/v`, suggestedFilename: "v" });
  log.onEvent(1, ...progress("v", "completed"));
  assert.equal((await log.wait(1, {}, 100, approvedOK))?.guid, "v");
});

test("downloads: an empty frame (just attached, about:blank, srcdoc) is its parent's; a child of an unapproved frame is withheld", async () => {
  const timers = fakeTimers();
  const log = okLog(timers);
  const kid = (id, parent) => ["Page.frameAttached", { frameId: id, parentFrameId: parent }];
  // A hidden iframe whose src is the download: attached, never navigated (measured).
  log.onEvent(1, ...kid("H", "F"));
  // An about:blank frame: Chrome states securityOrigin "://" for it (measured).
  log.onEvent(1, ...kid("B", "F"));
  log.onEvent(1, "Page.frameNavigated", { frame: { id: "B", parentId: "F", url: "about:blank", securityOrigin: "://" } });
  // An unapproved frame and the empty frame it made; a data: frame of the approved page.
  log.onEvent(1, ...nav("EVIL", "http://127.0.0.1:9999"));
  log.onEvent(1, ...kid("EK", "EVIL"));
  log.onEvent(1, "Page.frameNavigated", { frame: { id: "D", parentId: "F", url: "data:text/html,x", securityOrigin: "null" } });
  for (const [guid, frameId] of [["h", "H"], ["b", "B"], ["ek", "EK"], ["d", "D"]]) {
    log.onEvent(1, "Page.downloadWillBegin", { guid, frameId, url: `${OK}/${guid}`, suggestedFilename: guid });
    log.onEvent(1, ...progress(guid, "completed"));
  }
  const got = [];
  for (;;) {
    const waiting = log.wait(1, {}, 100, approvedOK);
    timers.advance(100);
    const d = await waiting;
    if (d === null) break;
    got.push(d.guid);
  }
  assert.deepEqual(got, ["h", "b"]);
});

test("downloads: a filter matches only what the answer shows: not a withheld URL, not an unmasked card number", async () => {
  const timers = fakeTimers();
  const log = okLog(timers);
  log.onEvent(1, ...begin("cdn", "https://cdn.test/export?id=77", "4111111111111111.csv"));
  log.onEvent(1, ...progress("cdn", "completed"));
  for (const match of [{ url: "cdn.test" }, { url: "id=77" }, { filename: "4111" }]) {
    const waiting = log.wait(1, match, 100, approvedOK);
    timers.advance(100);
    assert.equal(await waiting, null, JSON.stringify(match));
  }
  assert.equal((await log.wait(1, { filename: "[card]" }, 100, approvedOK))?.guid, "cdn");
});

test("downloads: a frame that floods downloads crowds out only its own", async () => {
  const timers = fakeTimers();
  const log = okLog(timers);
  log.onEvent(1, ...begin("mine", `${OK}/mine`, "mine"));
  log.onEvent(1, ...progress("mine", "completed"));
  for (let n = 0; n < 12; n += 1) {
    const origin = `http://127.0.0.1:${9000 + n}`;
    log.onEvent(1, ...nav(`E${n}`, origin));
    for (let i = 0; i < 30; i += 1) log.onEvent(1, "Page.downloadWillBegin", { guid: `e${n}-${i}`, frameId: `E${n}`, url: `${origin}/${i}`, suggestedFilename: "x" });
  }
  assert.equal((await log.wait(1, {}, 100, approvedOK))?.guid, "mine");
});

// ---------------------------------------------------------------- shared/screenshot.js

const METRICS = {
  cssVisualViewport: { pageX: 0, pageY: 300, clientWidth: 800, clientHeight: 600 },
  visualViewport: { clientWidth: 1600, clientHeight: 1200 },
  cssContentSize: { width: 800, height: 50_000 },
};

test("capture: the viewport, a region and the whole page, scaled to maxWidth in device pixels", () => {
  assert.deepEqual(captureClip(METRICS, { fullPage: false, maxWidth: 400 }),
    { clip: { x: 0, y: 300, width: 800, height: 600, scale: 0.25 }, beyondViewport: false });
  assert.deepEqual(captureClip(METRICS, { fullPage: false, region: { x: 5, y: 6, width: 100.2, height: 50 } }),
    { clip: { x: 5, y: 6, width: 101, height: 50, scale: 1 }, beyondViewport: true });
  const full = captureClip(METRICS, { fullPage: true, maxWidth: 3200 });
  assert.equal(full.clip.height, FULL_PAGE_MAX, "never taller than Chrome can capture");
  assert.equal(full.clip.scale, 1, "never scaled up");
});

test("capture: imageSize reads PNG and JPEG headers, and nothing else", () => {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), Buffer.from("IHDR"),
    Buffer.from([0, 0, 1, 44, 0, 0, 0, 200, 8, 6, 0, 0, 0])]);
  assert.deepEqual(imageSize(png.toString("base64")), { width: 300, height: 200, mimeType: "image/png" });
  // SOI, an APP0 segment, then SOF0 with height 480 and width 640.
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, ...Buffer.from("JFIF\0"), 1, 1, 0, 0, 1, 0, 1, 0, 0,
    0xff, 0xc0, 0, 17, 8, 0x01, 0xe0, 0x02, 0x80, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9]);
  assert.deepEqual(imageSize(jpeg.toString("base64")), { width: 640, height: 480, mimeType: "image/jpeg" });
  assert.equal(imageSize(Buffer.from("GIF89a-not-an-image-we-make").toString("base64")), null);
  assert.equal(imageSize("%%%"), null);
});

test("screenshot options: checked before anything runs", () => {
  assert.deepEqual(screenshotOptions({}), { fullPage: false, format: "png" });
  assert.deepEqual(screenshotOptions({ format: "jpeg", quality: 30, maxWidth: 500 }),
    { fullPage: false, format: "jpeg", quality: 30, maxWidth: 500 });
  for (const bad of [{ format: "gif" }, { quality: 50 }, { format: "jpeg", quality: 0 }, { maxWidth: 2 },
    { region: { x: 0, y: 0, width: 0, height: 5 } }, { region: { x: 0, y: 0, width: 5, height: 5 }, fullPage: true },
    { region: "0,0,5,5" }]) {
    // Refused by the wire schema (the dispatcher's check), or else by the handler's own rule.
    if (argsRefusal("page_screenshot", { tabId: 1, ...bad }) !== null) continue;
    assert.throws(() => screenshotOptions(bad), (e) => e instanceof BridgeError && e.code === "bad_request", JSON.stringify(bad));
  }
});

// ---------------------------------------------------------------- handlers/files.js

test("viewport settings: presets, overrides, explicit sizes and reset", () => {
  assert.deepEqual(viewportSettings({ preset: "mobile" }), { width: 390, height: 844, deviceScaleFactor: 3, mobile: true, touch: true });
  assert.deepEqual(viewportSettings({ preset: "tablet", touch: false, width: 1024 }),
    { width: 1024, height: 1180, deviceScaleFactor: 2, mobile: true, touch: false });
  assert.deepEqual(viewportSettings({ width: 500, height: 400 }), { width: 500, height: 400, deviceScaleFactor: 1, mobile: false, touch: false });
  assert.equal(viewportSettings({ reset: true }), null);
  for (const bad of [{ preset: "watch" }, { preset: "constructor" }, { width: 500 }, { preset: "mobile", deviceScaleFactor: 4 },
    { reset: true, preset: "mobile" }, { preset: "mobile", touch: "yes" }, { width: 50, height: 400 }]) {
    if (argsRefusal("page_viewport", { tabId: 1, ...bad }) !== null) continue;
    assert.throws(() => viewportSettings(bad), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
});

test("pdf names: the agent's, else the site's host, always .pdf", () => {
  assert.equal(pdfName("q3", `${OK}/x`), "q3.pdf");
  assert.equal(pdfName("Q3.PDF", `${OK}/x`), "Q3.PDF");
  assert.equal(pdfName(undefined, "https://example.test/a"), "example.test.pdf");
  assert.equal(pdfName(undefined, "not a url"), "page.pdf");
});

function harness() {
  const ownership = createOwnership();
  const timers = fakeTimers();
  const downloads = createDownloadLog({ timers, now: () => Date.now() });
  const tabs = new Map();
  const sent = [];
  let items = [];
  const browser = {
    getTab: async (id) => { const t = tabs.get(id); if (!t) throw new Error("No tab"); return { ...t }; },
    searchDownloads: async (query) => { sent.push(["search", query]); return items; },
    executeScriptArgs: async () => [{ result: { href: tabs.get(1).url, innerWidth: 390, innerHeight: 844, devicePixelRatio: 3, coarsePointer: true, maxTouchPoints: 5 } }],
  };
  const cdp = {
    ensure: async () => {},
    send: async (_ctx, tabId, method, params) => {
      sent.push([method, params]);
      if (method === "Page.getFrameTree") return { frameTree: { frame: { id: "F", securityOrigin: OK }, childFrames: [{ frame: { id: "E", securityOrigin: "https://evil.test" } }] } };
      return method === "Page.printToPDF" ? { data: "JVBERi0xLjQK" } : {};
    },
  };
  const ensureOrigin = async (url, ctx) => {
    const o = url && new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const routes = new Map(filesHandlers(/** @type {any} */ ({
    browser, ownership, loads: createLoadWatcher(timers), ensureOrigin, confirm: async () => "deny", cdp, downloads,
  })));
  const open = (id, url, session = "s1") => { tabs.set(id, { id, url, windowId: 1 }); ownership.claim(session, id); };
  return { routes, open, sent, downloads, tabs, setItems: (v) => { items = v; }, call: (a, args, ctx = S1) => schemaChecked((n) => routes.get(n))(a, args, ctx) };
}

test("page_pdf: gated on the tab's site and ownership; answers the bytes and a name for the server to write", async () => {
  const h = harness();
  h.open(1, `${OK}/report`);
  h.open(2, "https://evil.test/");
  h.open(3, `${OK}/theirs`, "s2");
  await assert.rejects(h.call("page_pdf", { tabId: 2 }), (e) => e.code === "origin_not_approved");
  await assert.rejects(h.call("page_pdf", { tabId: 3 }), (e) => e.code === "tab_not_owned");
  await assert.rejects(h.call("page_pdf", { tabId: 1, scale: 3 }), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_pdf", { tabId: 1, pageRanges: "1; rm -rf" }), (e) => e.code === "bad_request");
  for (const bad of [{ landscape: "yes" }, { printBackground: 1 }, { scale: 0.05 }, { scale: "1" }, { pageRanges: 3 },
    { pageRanges: "-1" }, { pageRanges: `1${",2".repeat(100)}` }, { name: "" }, { name: "x".repeat(201) }, { name: 7 }]) {
    await assert.rejects(h.call("page_pdf", { tabId: 1, ...bad }), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
  assert.deepEqual(h.sent, [], "nothing printed for a refused call");
  assert.deepEqual(await h.call("page_pdf", { tabId: 1, landscape: true, scale: 0.5, pageRanges: "1-2" }),
    { data: "JVBERi0xLjQK", name: "127.0.0.1.pdf" });
  assert.deepEqual(h.sent, [["Page.printToPDF", { landscape: true, printBackground: false, scale: 0.5, transferMode: "ReturnAsBase64", pageRanges: "1-2" }]]);
});

test("page_wait_download: Chrome's path for a finished one; the URL only from an approved site; failures say why", async () => {
  const h = harness();
  h.open(1, `${OK}/`);
  const started = new Date().toISOString();
  h.downloads.onEvent(1, ...nav("F", OK));
  h.downloads.onEvent(1, ...begin("g1", "https://cdn.test/4111111111111111.bin", "4111111111111111.bin"));
  h.downloads.onEvent(1, ...progress("g1", "completed", 7, 7));
  h.setItems([{ id: 1, state: "complete", filename: "/home/p/Downloads/4111111111111111.bin", fileSize: 7, startTime: started }]);
  const done = await h.call("page_wait_download", { tabId: 1, timeoutMs: 1000 });
  assert.equal(done.state, "complete");
  assert.equal(done.url, null, "another site's URL is withheld");
  assert.doesNotMatch(done.filename, /4111111111111111/, "card-like numbers are masked");
  assert.deepEqual(done.file, { source: "/home/p/Downloads/4111111111111111.bin", size: 7 });

  h.downloads.onEvent(1, ...begin("g2", `${OK}/b.zip`, "b.zip"));
  h.downloads.onEvent(1, ...progress("g2", "canceled", 2, 9));
  h.setItems([{ id: 2, state: "interrupted", error: "NETWORK_FAILED", filename: "", startTime: new Date().toISOString() }]);
  const failed = await h.call("page_wait_download", { tabId: 1, timeoutMs: 1000 });
  assert.deepEqual([failed.state, failed.reason, failed.url, failed.file], ["failed", "NETWORK_FAILED", `${OK}/b.zip`, undefined]);
  assert.ok(h.sent.every(([what]) => what === "search" || what === "Page.getFrameTree"), "only chrome.downloads.search: nothing downloaded, erased or opened");
  const searched = h.sent.length;
  for (const bad of [{ timeoutMs: 99 }, { filename: "" }, { filename: "x".repeat(501) }, { url: 5 }, { url: "x".repeat(2001) }]) {
    await assert.rejects(h.call("page_wait_download", { tabId: 1, ...bad }), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
  assert.equal(h.sent.length, searched, "a refused call searches nothing");
});

test("page_viewport: emulation then the page's own read-back; reset ends it", async () => {
  const h = harness();
  h.open(1, `${OK}/`);
  const r = await h.call("page_viewport", { tabId: 1, preset: "mobile" });
  assert.deepEqual(r.emulating, { width: 390, height: 844, deviceScaleFactor: 3, mobile: true, touch: true });
  assert.deepEqual(r.page, { innerWidth: 390, innerHeight: 844, devicePixelRatio: 3, coarsePointer: true, maxTouchPoints: 5 });
  assert.deepEqual(h.sent.map(([m]) => m), ["Emulation.setTouchEmulationEnabled", "Emulation.setEmitTouchEventsForMouse", "Emulation.setDeviceMetricsOverride"]);
  h.sent.length = 0;
  assert.equal((await h.call("page_viewport", { tabId: 1, reset: true })).emulating, null);
  assert.deepEqual(h.sent.map(([m]) => m), ["Emulation.setTouchEmulationEnabled", "Emulation.setEmitTouchEventsForMouse", "Emulation.clearDeviceMetricsOverride"]);
});

test("nothing in the extension downloads, erases, opens or redirects a download", () => {
  const ext = fileURLToPath(new URL("../../extension/", import.meta.url));
  const files = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".js") ? [join(dir, e.name)] : []);
  for (const file of files(ext)) {
    const src = readFileSync(file, "utf8");
    assert.doesNotMatch(src, /downloads\.(download|erase|removeFile|open|show|cancel|pause|resume|setShelfEnabled|setUiOptions|onDeterminingFilename)/, file);
    assert.doesNotMatch(src, /setDownloadBehavior/, file);
  }
});
