import { test } from "node:test";
import assert from "node:assert/strict";
import { runConfirmPage } from "../../extension/lib/confirm-page.js";
import { flush } from "./helpers/fakes.mjs";

/** A tiny document: elements by id with textContent, disabled, click listeners, focus. */
function fakeDoc() {
  const els = new Map();
  for (const id of ["heading", "tool", "origin", "detail", "status", "allow", "deny"]) {
    const listeners = [];
    els.set(id, {
      id, textContent: "", disabled: false, focused: false,
      addEventListener: (type, fn) => { if (type === "click") listeners.push(fn); },
      click() { for (const fn of listeners) fn(); },
      focus() { this.focused = true; },
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
    });
  }
  return { getElementById: (id) => els.get(id) ?? null, el: (id) => els.get(id) };
}

function make(details, { permission = true, throwOnRequest = false } = {}) {
  const doc = fakeDoc();
  const sent = [];
  const requested = [];
  const api = {
    sendMessage: async (m) => { sent.push(m); return m.type === "confirm_details" ? (details ? { ok: true, details } : { ok: false }) : { ok: true }; },
    requestPermission: (p) => { requested.push({ p, answeredBefore: sent.some((m) => m.type === "confirm_answer") }); if (throwOnRequest) throw new Error("no gesture"); return Promise.resolve(permission); },
  };
  return { doc, sent, requested, run: () => runConfirmPage({ doc, search: "?id=c7", api }) };
}
const ORIGIN = { id: "c7", kind: "origin", tool: "tab_open", origin: "http://127.0.0.1:8000", detail: "Allow tabwarden's agent on http://127.0.0.1:8000?", pattern: "http://127.0.0.1:8000/*" };
const ACTION = { id: "c7", kind: "action", tool: "tab_close", origin: "https://a.test", detail: '<img src=x onerror=alert(1)> "Close"?', pattern: null };

test("shows the details as text and focuses Deny", async () => {
  const h = make(ACTION);
  assert.equal(await h.run(), "shown");
  assert.deepEqual(h.sent[0], { type: "confirm_details", id: "c7" });
  assert.equal(h.doc.el("tool").textContent, "tab_close");
  assert.equal(h.doc.el("origin").textContent, "https://a.test");
  assert.equal(h.doc.el("detail").textContent, ACTION.detail, "markup stays text");
  assert.equal(h.doc.el("deny").focused, true);
  assert.equal(h.doc.el("allow").disabled, false);
});

test("action: Allow answers allow once; later clicks change nothing", async () => {
  const h = make(ACTION);
  await h.run();
  h.doc.el("allow").click();
  h.doc.el("deny").click();
  await flush();
  assert.deepEqual(h.sent.slice(1), [{ type: "confirm_answer", id: "c7", decision: "allow" }]);
  assert.equal(h.requested.length, 0, "actions request no permission");
});

test("origin: Allow requests the host permission first, then answers allow", async () => {
  const h = make(ORIGIN);
  await h.run();
  h.doc.el("allow").click();
  assert.deepEqual(h.requested, [{ p: "http://127.0.0.1:8000/*", answeredBefore: false }], "requested synchronously in the click");
  await flush();
  assert.deepEqual(h.sent.slice(1), [{ type: "confirm_answer", id: "c7", decision: "allow" }]);
});

test("origin: Chrome permission refused or throwing -> deny", async () => {
  for (const opts of [{ permission: false }, { throwOnRequest: true }]) {
    const h = make(ORIGIN, opts);
    await h.run();
    h.doc.el("allow").click();
    await flush();
    assert.deepEqual(h.sent.slice(1), [{ type: "confirm_answer", id: "c7", decision: "deny" }], JSON.stringify(opts));
  }
});

test("Deny answers deny; expired confirmations keep the buttons disabled", async () => {
  const h = make(ORIGIN);
  await h.run();
  h.doc.el("deny").click();
  await flush();
  assert.deepEqual(h.sent.slice(1), [{ type: "confirm_answer", id: "c7", decision: "deny" }]);
  const gone = make(null);
  assert.equal(await gone.run(), "expired");
  assert.equal(gone.doc.el("allow").disabled, true);
  gone.doc.el("allow").click();
  await flush();
  assert.equal(gone.sent.length, 1);
});
