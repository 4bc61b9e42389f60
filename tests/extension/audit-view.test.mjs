import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AUDIT_LIMIT, EXPORT_NAME, decisionBadge, detailFields, entryCells, eventWords, exportJson, fillSelect, filterChoices, filterEntries,
  formatTime, humanize, localTime, otherFields, renderAudit, downloadJson, runAuditView,
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

const TOOL_CALLS = [
  { ts: 1718000200, event: "tool_call", decision: "allowed", path: null, client: "/usr/bin/claude", tool: "page_click", refusal: null },
  { ts: 1718000260, event: "tool_call", decision: "refused", path: null, client: "/usr/bin/claude", tool: "page_eval", refusal: "eval_disabled" },
];
const ALL = [...ENTRIES, ...TOOL_CALLS];

test("formatTime / localTime: the exact UTC time, and the person's own format and zone", () => {
  assert.equal(formatTime(1718000000), "2024-06-10T06:13:20Z");
  assert.equal(formatTime("1718000000"), "");
  assert.equal(formatTime(undefined), "");
  assert.equal(localTime(1718000000, "en-US", "UTC"), "Jun 10, 2024, 6:13:20 AM");
  assert.equal(localTime(1718000000, "de-DE", "Europe/Berlin"), "10.06.2024, 08:13:20");
  assert.equal(localTime(1718000000, "en-GB", "UTC"), "10 Jun 2024, 06:13:20");
  for (const odd of ["1718000000", undefined, NaN, Infinity, 1e20]) assert.equal(localTime(odd), "", String(odd));
});

test("eventWords / decisionBadge / humanize: words first, never a raw code leading", () => {
  assert.equal(eventWords("tool_call"), "Agent call");
  assert.equal(eventWords("policy_restrict"), "Permissions narrowed");
  assert.equal(eventWords("kill"), "Kill switch engaged");
  assert.equal(eventWords("something_new_here"), "Something new here", "an unnamed event in words, not as a code");
  assert.equal(eventWords("toString"), "To string", "no inherited property is taken for words");
  assert.equal(eventWords(undefined), "");
  assert.deepEqual(decisionBadge("allowed"), { kind: "ok", word: "Allowed" });
  assert.deepEqual(decisionBadge("granted"), { kind: "ok", word: "Granted" });
  assert.deepEqual(decisionBadge("narrowed"), { kind: "narrowed", word: "Narrowed" });
  assert.deepEqual(decisionBadge("refused"), { kind: "refused", word: "Refused" });
  assert.deepEqual(decisionBadge("denied"), { kind: "refused", word: "Denied" });
  assert.deepEqual(decisionBadge("asked_later"), { kind: "other", word: "Asked later" });
  assert.deepEqual(decisionBadge(null), { kind: "other", word: "—" });
  assert.equal(humanize("user_verified"), "User verified");
  assert.equal(humanize("pageFetch"), "Page fetch");
});

test("detailFields / entryCells: labelled fields, not a key=value run; empty values left out", () => {
  assert.deepEqual(detailFields(ENTRIES[2]), [
    ["Confirmed by", "webauthn", true], ["Changed", "eval", false], ["User verified (PIN or biometric)", "yes", false],
  ]);
  assert.deepEqual(detailFields(TOOL_CALLS[1]), [
    ["Client", "/usr/bin/claude", true], ["Refused because", "eval_disabled", true], ["Tool", "page_eval", true],
  ]);
  assert.deepEqual(detailFields({ approved_by: "", n: null, some_flag: false }), [["Some flag", "no", false]]);
  assert.deepEqual(detailFields({ odd_value: "a_raw_code" }), [["Odd value", "a_raw_code", true]], "a code-like value is shown as code");
  const [time, event, decision, details] = entryCells(ENTRIES[1], "en-US", "UTC");
  assert.equal(time, "Jun 10, 2024, 6:14:20 AM");
  assert.equal(event, "Kill switch engaged");
  assert.equal(decision, "Narrowed");
  assert.equal(details, "Browser: chromium\nReason: engaged from the browser");
  assert.doesNotMatch(details, /=/);
  assert.equal(entryCells(TOOL_CALLS[0], "en-US", "UTC")[1], "Agent call page_click");
  assert.deepEqual(entryCells({}), ["", "", "—", ""]);
  assert.equal(otherFields(ENTRIES[2]), 'changed=["eval"] user_verified=true');
});

test("filterChoices: the decisions, events and tools the loaded entries hold", () => {
  assert.deepEqual(filterChoices(ALL), {
    decisions: ["allowed", "granted", "narrowed", "refused"],
    events: ["tool_call", "browser_pair", "kill", "policy_set"],
    tools: ["page_click", "page_eval"],
  });
  assert.deepEqual(filterChoices([null, { event: 3 }]), { decisions: [], events: [], tools: [] });
});

test("filterEntries: by decision, by event or tool, and text over event (name or words), decision, path and tool", () => {
  assert.deepEqual(filterEntries(ENTRIES, ""), ENTRIES);
  assert.deepEqual(filterEntries(ENTRIES, "  "), ENTRIES);
  assert.deepEqual(filterEntries(ENTRIES, "KILL"), [ENTRIES[1]]);
  assert.deepEqual(filterEntries(ENTRIES, "WebAuthn"), [ENTRIES[0], ENTRIES[2]]);
  assert.deepEqual(filterEntries(ENTRIES, "narrow"), [ENTRIES[1]]);
  assert.deepEqual(filterEntries(ENTRIES, "widened"), [ENTRIES[2]], "the event's words are searched too");
  assert.deepEqual(filterEntries(ALL, "page_eval"), [TOOL_CALLS[1]], "and the tool");
  assert.deepEqual(filterEntries(ENTRIES, "chromium"), [], "other fields are not searched");
  assert.deepEqual(filterEntries([null, 3, "x", [], ENTRIES[0]], ""), [ENTRIES[0]]);
  assert.deepEqual(filterEntries("nope", "x"), []);
  assert.deepEqual(filterEntries(ALL, "", { decision: "refused" }), [TOOL_CALLS[1]]);
  assert.deepEqual(filterEntries(ALL, "", { decision: "granted" }), [ENTRIES[0], ENTRIES[2]]);
  assert.deepEqual(filterEntries(ALL, "", { event: "event:tool_call" }), TOOL_CALLS);
  assert.deepEqual(filterEntries(ALL, "", { event: "tool:page_click" }), [TOOL_CALLS[0]]);
  assert.deepEqual(filterEntries(ALL, "", { event: "event:kill", decision: "granted" }), []);
  assert.deepEqual(filterEntries(ALL, "claude", { event: "event:tool_call" }), [], "the client path is not searched");
  assert.deepEqual(filterEntries(ALL, "click", { decision: "allowed", event: "event:tool_call" }), [TOOL_CALLS[0]]);
  assert.deepEqual(filterEntries(ALL, "", { event: "bogus" }), ALL, "an unknown pick filters nothing out");
});

/** The text of a fake node tree, without the fake document's "|" between children. */
const plain = (n) => (n.children?.length ? n.children.map((c) => (typeof c === "string" ? c : plain(c))).join("") : n._text ?? "");

test("renderAudit: newest first; local time, words, a badge and labelled fields; markup stays text", () => {
  const doc = fakeDoc(["audit"]);
  const table = doc.el("audit");
  const evil = { ts: 1, event: "<img src=x onerror=alert(1)>", decision: "d", path: null };
  renderAudit(doc, table, [...ALL, evil]);
  assert.equal(table.children.length, 6);
  assert.equal(table.children[0].children[1].textContent, "<img src=x onerror=alert(1)>");
  assert.ok(table.children.every((tr) => tr.tagName === "TR" && tr.children.length === 4 && tr.children.every((td) => td.tagName === "TD")));
  const [time, event, decision, details] = table.children[1].children; // the refused page_eval call
  assert.equal(time.textContent, localTime(1718000260));
  assert.equal(time.attrs.title, "2024-06-10T06:17:40Z (UTC)");
  assert.equal(plain(event), "Agent call page_eval");
  assert.equal(event.attrs.title, "tool_call", "the raw name is only a tooltip");
  const [badge] = decision.children;
  assert.equal(badge.className, "badge");
  assert.equal(badge.attrs["data-kind"], "refused");
  assert.equal(badge.textContent, "Refused");
  const [dl] = details.children;
  assert.equal(dl.tagName, "DL");
  assert.deepEqual(dl.children.map((c) => [c.tagName, plain(c)]), [
    ["DT", "Client"], ["DD", "/usr/bin/claude"], ["DT", "Refused because"], ["DD", "eval_disabled"], ["DT", "Tool"], ["DD", "page_eval"],
  ]);
  assert.equal(dl.children[3].children[0].tagName, "CODE", "a code is shown as code, never leading a sentence");
  assert.equal(table.children[5].children[1].textContent, "Browser paired");
  renderAudit(doc, table, []);
  assert.equal(table.children.length, 0);
  const tbody = { children: [], replaceChildren(...n) { this.children = n; } };
  renderAudit(doc, { tBodies: [tbody] }, ENTRIES);
  assert.equal(tbody.children.length, 3, "renders into the tbody when there is one");
});

test("fillSelect: any, the choices and a group; the person's pick kept while offered", () => {
  const doc = fakeDoc(["pick"]);
  const pick = doc.el("pick");
  fillSelect(doc, pick, "Any", [["a", "A"], ["Group", [["g1", "G one"]]]]);
  assert.deepEqual(pick.children.map((c) => c.tagName), ["OPTION", "OPTION", "OPTGROUP"]);
  assert.deepEqual(pick.children.map((c) => (c.tagName === "OPTGROUP" ? c.attrs.label : c.value)), ["", "a", "Group"]);
  pick.value = "g1";
  fillSelect(doc, pick, "Any", [["a", "A"], ["Group", [["g1", "G one"], ["g2", "G two"]]]]);
  assert.equal(pick.value, "g1");
  fillSelect(doc, pick, "Any", [["a", "A"]]);
  assert.equal(pick.value, "", "a pick no longer offered falls back to any");
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
  const doc = fakeDoc(["audit", "audit-filter", "audit-decision", "audit-event", "audit-refresh", "audit-export", "audit-status"]);
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
  assert.equal(doc.el("audit-status").textContent, "2 of 3 entries shown");
  doc.el("audit-export").click();
  const blob = urls.log[0][1];
  assert.deepEqual(JSON.parse(await blob.text()), [ENTRIES[0], ENTRIES[2]]);
  doc.el("audit-decision").value = "narrowed";
  doc.el("audit-decision").fire("change");
  assert.equal(doc.el("audit").children.length, 0, "webauthn and narrowed: none");
  doc.el("audit-filter").value = "";
  doc.el("audit-filter").fire("input");
  assert.equal(doc.el("audit").children.length, 1);
  assert.deepEqual(doc.el("audit-decision").children.map((o) => o.value), ["", "granted", "narrowed"]);
  assert.deepEqual(doc.el("audit-event").children.map((o) => o.value), ["", "event:browser_pair", "event:kill", "event:policy_set"]);
  doc.el("audit-decision").value = "";
  doc.el("audit-event").value = "event:policy_set";
  doc.el("audit-event").fire("change");
  assert.equal(doc.el("audit").children.length, 1);
  doc.el("audit-export").click();
  assert.deepEqual(JSON.parse(await urls.log[2][1].text()), [ENTRIES[2]], "export holds what the filters show");
  doc.el("audit-event").value = "";
  doc.el("audit-event").fire("change");

  reply = { ok: true, entries: [ENTRIES[0]], truncated: true };
  doc.el("audit-refresh").click();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(sent.length, 2);
  assert.equal(doc.el("audit").children.length, 1);
  assert.match(doc.el("audit-status").textContent, /1 entries \(older entries omitted\)/);

  reply = { ok: false, code: "trust_unreadable" };
  assert.equal(await view.refresh(), false);
  assert.equal(doc.el("audit-status").textContent, "Audit log unavailable (trust_unreadable)");
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
  for (const id of ["audit-decision", "audit-event"]) {
    assert.match(html, new RegExp(`<select id="${id}"`));
    assert.match(html, new RegExp(`<label for="${id}">`));
  }
  for (const id of ["audit-refresh", "audit-export"]) assert.match(html, new RegExp(`<button id="${id}" type="button"`));
  const src = readFileSync(join(EXT, "ui", "audit-view.js"), "utf8");
  assert.doesNotMatch(src, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|fetch\(|XMLHttpRequest/);
});
