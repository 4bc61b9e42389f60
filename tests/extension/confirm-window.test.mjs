import { test } from "node:test";
import assert from "node:assert/strict";
import { createConfirmBroker } from "../../extension/worker/confirm-broker.js";
import { CONFIRM_WINDOW, confirmWindowMessages, createConfirmer } from "../../extension/shared/confirm-window.js";
import { fakeLog, fakeTimers, flush, pageRouter } from "./helpers/fakes.mjs";

const EXT_ID = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const PAGE = `chrome-extension://${EXT_ID}/confirm.html`;

function make({ createWindow } = {}) {
  const timers = fakeTimers();
  let n = 0;
  const broker = createConfirmBroker({ ...timers, newId: () => `id${++n}` });
  const created = [];
  const removed = [];
  const windows = {
    createWindow: createWindow ?? (async (opts) => { created.push(opts); return { id: 100 + created.length }; }),
    removeWindow: async (id) => { removed.push(id); },
  };
  const confirm = createConfirmer({ broker, windows, log: fakeLog() });
  // What the worker's one message door does with the confirm page's messages.
  const route = pageRouter(EXT_ID, confirmWindowMessages(broker));
  const fromPage = (id) => ({ id: EXT_ID, url: `${PAGE}?id=${id}` });
  return { timers, broker, confirm, created, removed, route, fromPage };
}
const REQ = { kind: "action", tool: "tab_close", origin: "https://a.test", detail: "Close?", timeoutMs: 60_000 };

test("opens the popup with the id, answers from the page, then closes the window", async () => {
  const h = make();
  const p = h.confirm(REQ);
  await flush();
  assert.deepEqual(h.created, [{ url: "confirm.html?id=id1", ...CONFIRM_WINDOW }]);
  assert.deepEqual(CONFIRM_WINDOW, { type: "popup", focused: true, width: 460, height: 360 });
  const details = h.route({ type: "confirm_details", id: "id1" }, h.fromPage("id1"));
  assert.equal(details.ok, true);
  assert.equal(details.details.tool, "tab_close");
  assert.deepEqual(h.route({ type: "confirm_answer", id: "id1", decision: "allow" }, h.fromPage("id1")), { ok: true });
  assert.equal(await p, "allow");
  await flush();
  assert.deepEqual(h.removed, [101]);
});

test("closing the window denies", async () => {
  const h = make();
  const p = h.confirm(REQ);
  await flush();
  h.broker.closed(101);
  assert.equal(await p, "deny");
});

test("a timeout refuses as \"timeout\" and closes the window", async () => {
  const h = make();
  const p = h.confirm({ ...REQ, timeoutMs: 5000 });
  await flush();
  h.timers.advance(5000);
  assert.equal(await p, "timeout");
  await flush();
  assert.deepEqual(h.removed, [101]);
});

test("no window possible -> deny", async () => {
  const h = make({ createWindow: async () => { throw new Error("no display"); } });
  assert.equal(await h.confirm(REQ), "deny");
  const h2 = make({ createWindow: async () => ({}) });
  assert.equal(await h2.confirm(REQ), "deny");
});

test("only this extension's confirm page, for its own id, may read or answer", async () => {
  const h = make();
  const p = h.confirm(REQ);
  await flush();
  const answer = { type: "confirm_answer", id: "id1", decision: "allow" };
  const bad = [
    undefined,
    { url: "https://evil.test/confirm.html?id=id1" }, // a web page (no extension id)
    { id: "otherextensionidxxxxxxxxxxxxxxxx", url: `chrome-extension://otherextensionidxxxxxxxxxxxxxxxx/confirm.html?id=id1` },
    { id: EXT_ID, url: `chrome-extension://${EXT_ID}/options.html?id=id1` }, // another page of ours
    { id: EXT_ID, url: `${PAGE}?id=id2` }, // the page of another confirmation
    { id: EXT_ID, url: `${PAGE}.evil?id=id1` },
    { id: EXT_ID }, // the service worker itself / no url
  ];
  for (const sender of bad) {
    assert.deepEqual(h.route(answer, sender), { ok: false }, JSON.stringify(sender));
    assert.deepEqual(h.route({ type: "confirm_details", id: "id1" }, sender), { ok: false });
  }
  assert.equal(h.broker.size(), 1, "still pending");
  h.route({ ...answer, decision: "deny" }, h.fromPage("id1"));
  assert.equal(await p, "deny");
  // settled: a second answer and a details request both fail
  assert.deepEqual(h.route(answer, h.fromPage("id1")), { ok: false });
  assert.deepEqual(h.route({ type: "confirm_details", id: "id1" }, h.fromPage("id1")), { ok: false });
});

test("other messages are not ours (undefined)", () => {
  const h = make();
  for (const m of [null, "x", {}, { type: "hello" }]) assert.equal(h.route(m, h.fromPage("id1")), undefined);
});

test("the page gets who asks, a submit's field names and when the window times out (the worker's clock)", async () => {
  const timers = fakeTimers();
  const broker = createConfirmBroker({ ...timers, newId: () => "id1" });
  const windows = { createWindow: async () => ({ id: 7 }), removeWindow: async () => {} };
  const confirm = createConfirmer({ broker, windows, log: fakeLog(), now: () => 1_000 });
  const p = confirm({ ...REQ, client: "claude-code", fields: { names: ["email"], more: 0 } });
  await flush();
  const { details } = pageRouter(EXT_ID, confirmWindowMessages(broker))({ type: "confirm_details", id: "id1" }, { id: EXT_ID, url: `${PAGE}?id=id1` });
  assert.equal(details.client, "claude-code");
  assert.deepEqual(details.fields, { names: ["email"], more: 0 });
  assert.equal(details.expiresAt, 1_000 + REQ.timeoutMs);
  broker.answer("id1", "deny");
  assert.equal(await p, "deny");
});
