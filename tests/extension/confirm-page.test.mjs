import { test } from "node:test";
import assert from "node:assert/strict";
import { countdownText, fieldItems, runConfirmPage } from "../../extension/lib/confirm-page.js";
import { flush } from "./helpers/fakes.mjs";

/** A tiny document: elements by id with textContent, disabled, click listeners, focus. */
function fakeDoc() {
  const els = new Map();
  const keys = [];
  const make = (id) => {
    const listeners = [];
    const classes = new Set();
    return {
      id, textContent: "", disabled: false, focused: false, hidden: false, children: [],
      classList: { toggle: (c, on) => (on ? classes.add(c) : classes.delete(c)), contains: (c) => classes.has(c) },
      replaceChildren(...nodes) { this.children = nodes; },
      addEventListener: (type, fn) => { if (type === "click") listeners.push(fn); },
      click() { for (const fn of listeners) fn(); },
      focus() { this.focused = true; },
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
    };
  };
  for (const id of ["heading", "client", "tool", "origin", "detail", "fields-box", "fields", "countdown", "status", "allow", "deny"]) {
    els.set(id, make(id));
  }
  return {
    getElementById: (id) => els.get(id) ?? null, el: (id) => els.get(id), createElement: () => make(null),
    addEventListener: (type, fn) => { if (type === "keydown") keys.push(fn); },
    key: (key) => { for (const fn of keys) fn({ key }); },
  };
}

function make(details, { permission = true, throwOnRequest = false, clock } = {}) {
  const doc = fakeDoc();
  const sent = [];
  const requested = [];
  const api = {
    sendMessage: async (m) => { sent.push(m); return m.type === "confirm_details" ? (details ? { ok: true, details } : { ok: false }) : { ok: true }; },
    requestPermission: (p) => { requested.push({ p, answeredBefore: sent.some((m) => m.type === "confirm_answer") }); if (throwOnRequest) throw new Error("no gesture"); return Promise.resolve(permission); },
  };
  return { doc, sent, requested, run: () => runConfirmPage({ doc, search: "?id=c7", api, clock }) };
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

/** A clock the test moves; `every` callbacks run on each advance. */
function testClock(start) {
  let t = start;
  const timers = new Set();
  return {
    now: () => t,
    every: (fn) => { timers.add(fn); return fn; },
    stop: (fn) => timers.delete(fn),
    advance(ms) { t += ms; for (const fn of [...timers]) fn(); },
    running: () => timers.size,
  };
}

test("who asks, the submit's field names with masked values, and a countdown to the timeout", async () => {
  const clock = testClock(1_000_000);
  const h = make({ ...ACTION, tool: "page_click", client: "claude-code", expiresAt: 1_000_000 + 40_000,
    fields: { names: ["email", "password (password)"], more: 2 } }, { clock });
  await h.run();
  assert.equal(h.doc.el("client").textContent, "claude-code");
  assert.equal(h.doc.el("fields-box").hidden, false);
  assert.deepEqual(h.doc.el("fields").children.map((li) => li.textContent), ["email = •••", "password (password) = •••", "and 2 more"]);
  assert.equal(h.doc.el("countdown").textContent, "Denies itself in 40 s");
  clock.advance(31_500);
  assert.equal(h.doc.el("countdown").textContent, "Denies itself in 9 s");
  assert.equal(h.doc.el("countdown").classList.contains("soon"), true);
  clock.advance(9_000);
  assert.match(h.doc.el("status").textContent, /Timed out/);
  assert.equal(h.doc.el("allow").disabled, true, "nothing to answer after the timeout");
  assert.equal(clock.running(), 0);
  h.doc.el("allow").click();
  await flush();
  assert.equal(h.sent.length, 1, "no answer is sent after the timeout");
  assert.equal(countdownText(0), null);
  assert.equal(countdownText(300_000), "Denies itself in 5 min");
  assert.equal(fieldItems({ names: [], more: 0 }), null);
  assert.equal(fieldItems(null), null);
});

test("no client label: said plainly; not a submit: no field list; Esc denies", async () => {
  const clock = testClock(0);
  const h = make({ ...ACTION, client: null, fields: null, expiresAt: 5_000 }, { clock });
  await h.run();
  assert.match(h.doc.el("client").textContent, /not paired/);
  assert.equal(h.doc.el("fields-box").hidden, true);
  h.doc.key("a");
  h.doc.key("Escape");
  h.doc.key("Escape");
  await flush();
  assert.deepEqual(h.sent.slice(1), [{ type: "confirm_answer", id: "c7", decision: "deny" }]);
  assert.equal(clock.running(), 0, "the countdown stops once answered");
  assert.equal(h.doc.el("countdown").textContent, "");
});
