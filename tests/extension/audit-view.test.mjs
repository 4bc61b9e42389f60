import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AUDIT_LIMIT, EXPORT_NAME, entryCells, exportJson, filterEntries, formatTime, otherFields, renderAudit, downloadJson, runAuditView,
} from "../../extension/ui/audit-view.js";
import { createPolicyRelay } from "../../extension/worker/policy-relay.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { pageRouter } from "./helpers/fakes.mjs";

const EXT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "extension");
const EXT_ID = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const PAGE = `chrome-extension://${EXT_ID}/options.html`;
const CTX = { extensionId: EXT_ID, pageUrl: PAGE };
const OK_SENDER = { id: EXT_ID, url: PAGE };

const ENTRIES = [
  { ts: 1718000000, event: "browser_pair", decision: "granted", path: "webauthn", browser: "chromium", credential: "abc" },
  { ts: 1718000060, event: "kill", decision: "narrowed", path: null, reason: "engaged from the browser", browser: "chromium" },
  { ts: 1718000120, event: "policy_set", decision: "granted", path: "webauthn", changed: ["eval"], user_verified: true },
];

/** A tiny document: elements with children, text, attributes and listeners; innerHTML throws. */
function fakeDoc(ids) {
  const removed = [];
  const make = (tag, id) => {
    const listeners = {};
    const el = {
      tagName: tag.toUpperCase(), id, children: [], attrs: {}, value: "", _text: "", href: "", download: "",
      get textContent() { return this.children.length ? this.children.map((c) => c.textContent).join("|") : this._text; },
      set textContent(v) { this.children = []; this._text = String(v); },
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
      append(...nodes) { this.children.push(...nodes); },
      replaceChildren(...nodes) { this.children = [...nodes]; this._text = ""; },
      setAttribute(k, v) { this.attrs[k] = String(v); },
      remove() { removed.push(this); },
      addEventListener(type, fn) { (listeners[type] ??= []).push(fn); },
      fire(type) { for (const fn of listeners[type] ?? []) fn({}); },
      click() { this.clicked = (this.clicked ?? 0) + 1; for (const fn of listeners.click ?? []) fn({}); },
    };
    return el;
  };
  const els = new Map(ids.map((id) => [id, make(id === "audit" ? "table" : "div", id)]));
  const created = [];
  return {
    body: make("body", null), removed, created,
    getElementById: (id) => els.get(id) ?? null,
    createElement: (tag) => { const el = make(tag, null); created.push(el); return el; },
    el: (id) => els.get(id),
  };
}

function fakeUrlApi() {
  const log = [];
  return { log, createObjectURL: (b) => { log.push(["create", b]); return "blob:x/1"; }, revokeObjectURL: (u) => log.push(["revoke", u]) };
}

test("formatTime / otherFields / entryCells: compact text, never throwing on odd values", () => {
  assert.equal(formatTime(1718000000), "2024-06-10T06:13:20Z");
  assert.equal(formatTime("1718000000"), "");
  assert.equal(formatTime(undefined), "");
  assert.equal(otherFields(ENTRIES[2]), 'changed=["eval"] user_verified=true');
  assert.deepEqual(entryCells(ENTRIES[1]), ["2024-06-10T06:14:20Z", "kill", "narrowed", "", "browser=chromium reason=engaged from the browser"]);
  assert.deepEqual(entryCells({}), ["", "", "", "", ""]);
  assert.deepEqual(entryCells({ event: { x: 1 }, n: null }), ["", '{"x":1}', "", "", "n="]);
});

test("filterEntries: case-insensitive substring over event, decision and path only", () => {
  assert.deepEqual(filterEntries(ENTRIES, ""), ENTRIES);
  assert.deepEqual(filterEntries(ENTRIES, "  "), ENTRIES);
  assert.deepEqual(filterEntries(ENTRIES, "KILL"), [ENTRIES[1]]);
  assert.deepEqual(filterEntries(ENTRIES, "WebAuthn"), [ENTRIES[0], ENTRIES[2]]);
  assert.deepEqual(filterEntries(ENTRIES, "narrow"), [ENTRIES[1]]);
  assert.deepEqual(filterEntries(ENTRIES, "chromium"), [], "other fields are not searched");
  assert.deepEqual(filterEntries([null, 3, "x", [], ENTRIES[0]], ""), [ENTRIES[0]]);
  assert.deepEqual(filterEntries("nope", "x"), []);
});

test("renderAudit: newest first, one textContent cell per column, markup stays text", () => {
  const doc = fakeDoc(["audit"]);
  const table = doc.el("audit");
  const evil = { ts: 1, event: "<img src=x onerror=alert(1)>", decision: "d", path: null };
  renderAudit(doc, table, [...ENTRIES, evil]);
  assert.equal(table.children.length, 4);
  assert.equal(table.children[0].children[1].textContent, evil.event);
  assert.equal(table.children[3].children[1].textContent, "browser_pair");
  assert.ok(table.children.every((tr) => tr.tagName === "TR" && tr.children.length === 5 && tr.children.every((td) => td.tagName === "TD")));
  renderAudit(doc, table, []);
  assert.equal(table.children.length, 0);
  const tbody = { children: [], replaceChildren(...n) { this.children = n; } };
  renderAudit(doc, { tBodies: [tbody] }, ENTRIES);
  assert.equal(tbody.children.length, 3, "renders into the tbody when there is one");
});

test("exportJson / downloadJson: a Blob, an object URL, a temporary <a download>, revoked", async () => {
  assert.deepEqual(JSON.parse(exportJson(ENTRIES)), ENTRIES);
  const doc = fakeDoc([]);
  const urls = fakeUrlApi();
  const { url, blob } = downloadJson(doc, urls, [ENTRIES[1]]);
  assert.equal(url, "blob:x/1");
  assert.equal(blob.type, "application/json");
  assert.deepEqual(JSON.parse(await blob.text()), [ENTRIES[1]]);
  const [a] = doc.created;
  assert.equal(a.tagName, "A");
  assert.equal(a.href, "blob:x/1");
  assert.equal(a.download, EXPORT_NAME);
  assert.equal(a.attrs.download, "tabwarden-audit.json");
  assert.equal(a.clicked, 1);
  assert.deepEqual(doc.removed, [a]);
  assert.deepEqual(urls.log.map((e) => e[0]), ["create", "revoke"]);
});

test("runAuditView: loads via audit_tail, filters on input, refreshes, exports the filtered entries", async () => {
  const doc = fakeDoc(["audit", "audit-filter", "audit-refresh", "audit-export", "audit-status"]);
  const sent = [];
  let reply = { ok: true, entries: ENTRIES, truncated: false };
  const urls = fakeUrlApi();
  const view = await runAuditView({ doc, api: { sendMessage: async (m) => { sent.push(m); return reply; } }, urlApi: urls });
  assert.deepEqual(sent, [{ type: "audit_tail", limit: AUDIT_LIMIT }]);
  assert.equal(doc.el("audit").children.length, 3);
  assert.equal(doc.el("audit-status").textContent, "3 entries");

  doc.el("audit-filter").value = "webauthn";
  doc.el("audit-filter").fire("input");
  assert.equal(doc.el("audit").children.length, 2);
  doc.el("audit-export").click();
  const blob = urls.log[0][1];
  assert.deepEqual(JSON.parse(await blob.text()), [ENTRIES[0], ENTRIES[2]]);

  reply = { ok: true, entries: [ENTRIES[0]], truncated: true };
  doc.el("audit-refresh").click();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(sent.length, 2);
  assert.equal(doc.el("audit").children.length, 1);
  assert.match(doc.el("audit-status").textContent, /1 entries \(older entries omitted\)/);

  reply = { ok: false, code: "trust_unreadable" };
  assert.equal(await view.refresh(), false);
  assert.equal(doc.el("audit-status").textContent, "Audit log unavailable: trust_unreadable");
  assert.equal(doc.el("audit").children.length, 1, "the last good view stays");
});

test("relay: audit_tail only from this extension's options page; limit checked; reply shaped", async () => {
  const calls = [];
  let answer = { entries: [ENTRIES[0], "junk", ENTRIES[1]], truncated: false };
  const relay = createPolicyRelay({ hostCall: async (action, args) => {
    calls.push([action, args]);
    if (answer instanceof Error) throw answer;
    return answer;
  } });
  const send = (msg, ...sender) => pageRouter(CTX.extensionId, relay.messages)(msg, sender.length > 0 ? sender[0] : OK_SENDER);
  const bad = { ok: false, code: "bad_request" };
  for (const sender of [undefined, {}, { id: "other", url: PAGE }, { id: EXT_ID, url: "https://evil.test/options.html" },
    { id: EXT_ID, url: `chrome-extension://${EXT_ID}/popup.html` }, { id: EXT_ID, url: `chrome-extension://${EXT_ID}/confirm.html` },
    { id: EXT_ID, url: `${PAGE}.evil` }, { id: EXT_ID }]) {
    assert.deepEqual(await send({ type: "audit_tail", limit: 5 }, sender), bad, JSON.stringify(sender));
  }
  for (const limit of [0, -1, 1001, 2.5, "10", true, null, {}]) {
    assert.deepEqual(await send({ type: "audit_tail", limit }), bad, String(limit));
  }
  assert.equal(calls.length, 0, "nothing reached the host");

  assert.deepEqual(await send({ type: "audit_tail", limit: 200 }), { ok: true, entries: [ENTRIES[0], ENTRIES[1]], truncated: false });
  assert.deepEqual(await send({ type: "audit_tail" }), { ok: true, entries: [ENTRIES[0], ENTRIES[1]], truncated: false });
  assert.deepEqual(calls, [["audit_tail", { limit: 200 }], ["audit_tail", {}]]);

  answer = { entries: "nope" };
  assert.deepEqual(await send({ type: "audit_tail" }), { ok: false, code: "internal_error" });
  answer = new BridgeError("trust_unreadable", "the audit log is unreadable");
  assert.deepEqual(await send({ type: "audit_tail" }), { ok: false, code: "trust_unreadable" });
});

test("options.html has the Audit log section; audit-view.js never writes HTML", () => {
  const html = readFileSync(join(EXT, "options.html"), "utf8");
  assert.match(html, /<table id="audit"/);
  assert.match(html, /<input id="audit-filter"/);
  assert.match(html, /<label for="audit-filter">/);
  for (const id of ["audit-refresh", "audit-export"]) assert.match(html, new RegExp(`<button id="${id}" type="button"`));
  const src = readFileSync(join(EXT, "ui", "audit-view.js"), "utf8");
  assert.doesNotMatch(src, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|fetch\(|XMLHttpRequest/);
});
