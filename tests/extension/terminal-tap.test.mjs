// terminal_tap (handlers/terminal-tap.js) end to end in Node: the terminal's request →
// the real confirm broker and window (presence mode) → the real confirm page logic tapping
// through the worker's presence relay (shared/presence-confirm.js), which hands the page exactly the
// terminal's options and carries the assertion back — the host is never asked to verify or act.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createConfirmBroker } from "../../extension/worker/confirm-broker.js";
import { INPUT_DELAY_MS, runConfirmPage } from "../../extension/ui/confirm-page.js";
import { confirmWindowMessages, createConfirmer } from "../../extension/shared/confirm-window.js";
import { createPresenceConfirm } from "../../extension/shared/presence-confirm.js";
import { terminalTapHandlers } from "../../extension/handlers/terminal-tap.js";
import { fakeConfirmDoc, fakeLog, fakeTimers, flush, testClock, pageRouter } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const EXT_ID = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const PAGE = `chrome-extension://${EXT_ID}/confirm.html`;
const TERMINAL = { session: "terminal", policy: parsePolicy({}) };
const OPTIONS = { challenge: "Q0hBTExFTkdF", rpId: EXT_ID, allowCredentials: [{ type: "public-key", id: "Y3JlZA" }] };
const ARGS = { challengeId: "AbCdEfGhIjKlMnOpQrStUv", command: "unkill", summary: "Release the kill switch.", options: OPTIONS };
const ASSERTION = { id: "Y3JlZA", type: "public-key", response: { signature: "c2ln" } };

/** @param {{onWindow?: (h: any, url: string, windowId: number) => void, getAssertion?: (o: object) => Promise<object>}} opts */
function harness({ onWindow, getAssertion } = {}) {
  const timers = fakeTimers();
  let n = 0;
  const broker = createConfirmBroker({ ...timers, newId: () => `c${++n}` });
  const hostCalls = [];
  const relay = createPresenceConfirm({ broker, hostCall: async (action, args) => { hostCalls.push([action, args]); throw new Error("no host call expected"); } });
  const windows = [];
  const assertions = [];
  const h = {
    timers, broker, hostCalls, windows, assertions, relay, docs: [],
    async route(msg, url) {
      const sender = { id: EXT_ID, url: `chrome-extension://${EXT_ID}/${url}` };
      return pageRouter(EXT_ID, [...relay.messages, ...confirmWindowMessages(broker)])(msg, sender);
    },
    async openPage(url) {
      const doc = fakeConfirmDoc();
      const api = {
        sendMessage: (m) => h.route(structuredClone(m), url),
        requestPermission: async () => false,
        getAssertion: getAssertion ?? (async (opts) => { assertions.push(opts); return ASSERTION; }),
      };
      h.docs.push(doc);
      const clock = testClock();
      await runConfirmPage({ doc, search: url.slice(url.indexOf("?")), api, clock });
      clock.advance(INPUT_DELAY_MS); // the window's input delay, then the person's tap
      return doc;
    },
  };
  const confirm = createConfirmer({
    broker,
    windows: {
      createWindow: async (opts) => {
        windows.push(opts.url);
        const windowId = 100 + windows.length;
        setImmediate(() => onWindow?.(h, opts.url, windowId));
        return { id: windowId };
      },
      removeWindow: async () => {},
    },
    log: fakeLog(),
  });
  const routes = new Map(terminalTapHandlers({ confirm, presenceConfirm: relay }));
  h.call = (args, ctx2 = TERMINAL) => routes.get("terminal_tap")(args, ctx2);
  return h;
}

const tapper = async (h, url) => (await h.openPage(url)).el("tap").click();

test("terminal_tap: the window asks for a tap with exactly the terminal's options and hands back the assertion", async () => {
  const h = harness({ onWindow: tapper });
  assert.deepEqual(await h.call(ARGS), { response: ASSERTION });
  assert.deepEqual(h.windows, ["confirm.html?id=c1&mode=presence"]);
  assert.deepEqual(h.assertions, [OPTIONS], "credentials.get ran with the terminal's options");
  assert.deepEqual(h.hostCalls, [], "the host neither verifies nor acts: the terminal does");
  const doc = h.docs[0];
  assert.equal(doc.el("allow").hidden, true, "a click can never answer it");
  assert.equal(doc.el("detail").textContent, "Release the kill switch.");
  assert.equal(doc.el("tool").textContent, "tabwarden unkill");
  assert.equal(h.relay.takeTerminal(ARGS.challengeId), null, "nothing is left behind");
  await flush();
  const status = doc.el("status").textContent;
  assert.match(status, /terminal/, "the window says who verifies the tap: the terminal");
  assert.doesNotMatch(status, /host/, status);
  assert.doesNotMatch(status, /^Allowed/, "the terminal decides, after verifying; the window cannot say allowed");
});

test("terminal_tap is unknown to every session but the terminal, and opens nothing", async () => {
  const h = harness({ onWindow: tapper });
  await assert.rejects(h.call(ARGS, { session: "s-42-0123456789abcdef0123", policy: parsePolicy({}) }), (e) => e.code === "unknown_action");
  assert.deepEqual(h.windows, []);
});

test("malformed requests are refused before any window opens", async () => {
  const h = harness({ onWindow: tapper });
  for (const bad of [{}, { ...ARGS, challengeId: "short" }, { ...ARGS, challengeId: "../../x/y/zzzzzzzzzzzzz" }, { ...ARGS, command: "" },
    { ...ARGS, summary: "" }, { ...ARGS, summary: "x".repeat(2001) }, { ...ARGS, options: null }, { ...ARGS, options: [] }]) {
    await assert.rejects(h.call(bad), (e) => e.code === "bad_request");
  }
  assert.deepEqual(h.windows, []);
});

test("closed, timed out or no assertion: refused, and no response leaves the extension", async () => {
  const closed = harness({ onWindow: (hh, _url, windowId) => hh.broker.closed(windowId) });
  await assert.rejects(closed.call(ARGS), (e) => e.code === "confirm_denied");
  assert.equal(closed.relay.takeTerminal(ARGS.challengeId), null);

  const late = harness({ onWindow: (hh) => hh.timers.advance(90_000) });
  await assert.rejects(late.call(ARGS), (e) => e.code === "confirm_timeout");

  const cancelled = harness({ onWindow: tapper, getAssertion: async () => { throw new Error("NotAllowedError"); } });
  await assert.rejects(cancelled.call(ARGS), (e) => e.code === "confirm_denied");
});

test("a page cannot complete a terminal tap it did not begin, nor begin one the terminal did not ask", async () => {
  const h = harness();
  h.relay.expectTerminal(ARGS.challengeId, OPTIONS);
  const { id } = h.broker.open({ kind: "action", tool: "tabwarden unkill", detail: "x", presence: { action: "terminal", detail: ARGS.challengeId }, timeoutMs: 1000 });
  const url = `confirm.html?id=${id}`;
  assert.deepEqual(await h.route({ type: "confirm_presence_complete", id, response: ASSERTION }, url), { ok: false, code: "bad_request" });
  assert.equal(h.broker.details(id), null, "a complete before a begin denies the confirmation");
  const other = h.broker.open({ kind: "action", tool: "tabwarden unkill", detail: "x", presence: { action: "terminal", detail: "NotRegisteredChallengeId" }, timeoutMs: 1000 });
  assert.deepEqual(await h.route({ type: "confirm_presence_begin", id: other.id }, `confirm.html?id=${other.id}`), { ok: false, code: "bad_request" });
  assert.equal(h.relay.takeTerminal(ARGS.challengeId), null, "no assertion was recorded");
});
