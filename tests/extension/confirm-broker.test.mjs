import { test } from "node:test";
import assert from "node:assert/strict";
import { createConfirmBroker } from "../../extension/worker/confirm-broker.js";
import { fakeTimers } from "./helpers/fakes.mjs";

function make() {
  const timers = fakeTimers();
  let n = 0;
  return { timers, broker: createConfirmBroker({ ...timers, newId: () => `c${++n}` }) };
}
const REQ = { kind: "origin", tool: "tab_open", origin: "http://127.0.0.1:8000", detail: "Allow?", pattern: "http://127.0.0.1:8000/*", timeoutMs: 60_000 };

test("open gives an id and details; allow resolves allow", async () => {
  const { broker, timers } = make();
  const { id, promise } = broker.open(REQ);
  assert.equal(id, "c1");
  assert.deepEqual(broker.details(id), { id: "c1", kind: "origin", tool: "tab_open", origin: "http://127.0.0.1:8000", detail: "Allow?", pattern: "http://127.0.0.1:8000/*", presence: null,
    client: null, fields: null, source: null, expiresAt: null, grace: 0 });
  assert.equal(broker.answer(id, "allow"), true);
  assert.equal(await promise, "allow");
  assert.equal(timers.pending(), 0);
  assert.equal(broker.details(id), null);
});

test("only the first answer counts", async () => {
  const { broker } = make();
  const { id, promise } = broker.open(REQ);
  assert.equal(broker.answer(id, "deny"), true);
  assert.equal(broker.answer(id, "allow"), false);
  assert.equal(await promise, "deny");
});

test("unknown ids are ignored; anything but 'allow' is deny", async () => {
  const { broker } = make();
  assert.equal(broker.answer("nope", "allow"), false);
  const { id, promise } = broker.open(REQ);
  broker.answer(id, "ALLOW");
  assert.equal(await promise, "deny");
  const b = broker.open(REQ);
  broker.answer(b.id, true);
  assert.equal(await b.promise, "deny");
});

test("a timeout refuses as \"timeout\" (told apart from a deny)", async () => {
  const { broker, timers } = make();
  const { id, promise } = broker.open({ ...REQ, timeoutMs: 5000 });
  timers.advance(4999);
  assert.equal(broker.size(), 1);
  timers.advance(1);
  assert.equal(await promise, "timeout");
  assert.equal(broker.answer(id, "allow"), false, "a late click changes nothing");
});

test("closing its window denies; other windows' confirmations stay pending", async () => {
  const { broker } = make();
  const a = broker.open(REQ);
  const b = broker.open(REQ);
  broker.attachWindow(a.id, 40);
  broker.attachWindow(b.id, 41);
  assert.equal(broker.closed(99), 0);
  assert.equal(broker.closed(40), 1);
  assert.equal(await a.promise, "deny");
  assert.equal(broker.size(), 1);
  broker.answer(b.id, "allow");
  assert.equal(await b.promise, "allow");
});

test("bad requests are refused", () => {
  const { broker } = make();
  assert.throws(() => broker.open({ ...REQ, kind: "eval" }), TypeError);
  assert.throws(() => broker.open({ ...REQ, timeoutMs: 0 }), RangeError);
  const fixed = createConfirmBroker({ ...fakeTimers(), newId: () => "same" });
  fixed.open(REQ);
  assert.throws(() => fixed.open(REQ));
});

test("presence: carried in the details; only for kind action with string action and detail", () => {
  const { broker } = make();
  const presence = { action: "confirm.eval", detail: '{"code":"1","origin":"https://a.test"}' };
  const { id } = broker.open({ kind: "action", tool: "page_eval", origin: "https://a.test", detail: "Run?", presence, timeoutMs: 1000 });
  assert.deepEqual(broker.details(id).presence, presence);
  assert.throws(() => broker.open({ ...REQ, presence }), TypeError);
  assert.throws(() => broker.open({ kind: "action", tool: "x", presence: { action: "confirm.eval" }, timeoutMs: 1000 }), TypeError);
});

test("presence for kind origin: only policy.widen (an enrolled browser's new origin)", () => {
  const broker = createConfirmBroker({ ...fakeTimers(), newId: () => "c9" });
  const presence = { action: "policy.widen", detail: '{"origins":["https://a.test"]}' };
  const { id } = broker.open({ kind: "origin", tool: "tab_open", origin: "https://a.test", pattern: "https://a.test/*", presence, timeoutMs: 1000 });
  assert.deepEqual(broker.details(id).presence, presence);
  assert.throws(() => broker.open({ kind: "origin", tool: "tab_open", presence: { action: "unkill", detail: "" }, timeoutMs: 1000 }), TypeError);
});

test("display details: the asking client's label, a submit's field names (strings only, bounded), the expiry", () => {
  const { broker } = make();
  const names = [...Array.from({ length: 25 }, (_, i) => `f${i}`), 7, "x".repeat(500)];
  const { id } = broker.open({ kind: "action", tool: "page_click", timeoutMs: 1000, client: "claude-code",
    fields: { names, more: 3 }, expiresAt: 123_456 });
  const d = broker.details(id);
  assert.equal(d.client, "claude-code");
  assert.equal(d.expiresAt, 123_456);
  assert.equal(d.fields.names.length, 20);
  assert.equal(d.fields.more, 3 + 6);
  d.fields.names.push("mutated");
  assert.equal(broker.details(id).fields.names.length, 20, "details are a copy");
  for (const fields of ["user", { names: "user" }, 5]) {
    assert.equal(broker.details(broker.open({ kind: "action", tool: "t", timeoutMs: 1, fields }).id).fields, null);
  }
});

test("a submit's method and an address's source reach the page, checked (display only)", () => {
  const { broker } = make();
  const get = broker.open({ ...REQ, kind: "action", fields: { names: ["q"], more: 0, method: "get" }, source: "a page on https://evil.test" });
  assert.deepEqual(broker.details(get.id).fields, { names: ["q"], more: 0, method: "get" });
  assert.equal(broker.details(get.id).source, "a page on https://evil.test");
  const odd = broker.open({ ...REQ, kind: "action", fields: { names: ["q"], more: 0, method: "<b>x</b>" }, source: 42 });
  assert.deepEqual(broker.details(odd.id).fields, { names: ["q"], more: 0 }, "an unknown method is dropped");
  assert.equal(broker.details(odd.id).source, null, "a non-string source is dropped");
  const long = broker.open({ ...REQ, kind: "action", source: "x".repeat(5000) });
  assert.equal(broker.details(long.id).source.length, 300);
});

test("grace: an action's window says how long an allow covers; a site question, a tap or a bad value says none", () => {
  const { broker } = make();
  const ACTION = { kind: "action", tool: "page_select", origin: "http://127.0.0.1:8000", detail: "Select?", timeoutMs: 60_000 };
  assert.equal(broker.details(broker.open({ ...ACTION, grace: 30 }).id)?.grace, 30);
  assert.equal(broker.details(broker.open({ ...ACTION, grace: 10_000 }).id)?.grace, 600);
  for (const g of [0, -1, NaN, Infinity, "30", null, undefined]) assert.equal(broker.details(broker.open({ ...ACTION, grace: g }).id)?.grace, 0, String(g));
  assert.equal(broker.details(broker.open({ ...REQ, grace: 30 }).id)?.grace, 0, "a new site's question opens no grace");
  const tap = { ...ACTION, tool: "page_eval", presence: { action: "confirm.eval", detail: "{}" }, grace: 30 };
  assert.equal(broker.details(broker.open(tap).id)?.grace, 0);
});
