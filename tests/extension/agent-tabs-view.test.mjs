import { test } from "node:test";
import assert from "node:assert/strict";
import { rowText, runAgentTabsView } from "../../extension/ui/agent-tabs-view.js";

function fakeDoc(ids) {
  const make = (tag, id = null) => {
    const listeners = [];
    const el = {
      tagName: tag.toUpperCase(), id, children: [], _text: "", className: "", disabled: false, attrs: {},
      get textContent() { return this._text + this.children.map((c) => (typeof c === "string" ? c : c.textContent)).join(""); },
      set textContent(v) { this.children = []; this._text = String(v); },
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
      replaceChildren(...nodes) { this.children = [...nodes]; this._text = ""; },
      append(...nodes) { this.children.push(...nodes); },
      setAttribute(k, v) { this.attrs[k] = String(v); },
      addEventListener: (type, fn) => { if (type === "click") listeners.push(fn); },
      click() { if (!el.disabled) for (const fn of listeners) fn(); },
    };
    return el;
  };
  const els = new Map(ids.map((id) => [id, make("div", id)]));
  return { getElementById: (id) => els.get(id) ?? null, createElement: (tag) => make(tag), el: (id) => els.get(id) };
}

const ROWS = [
  { id: 7, session: "s-1-aa", origin: "https://a.test", title: "<b>Inbox</b>", orphaned: true, orphanedAt: 1_700_000_000_000, viewed: false,
    client: "claude-code", lastCallAt: 1_699_999_990_000 },
  { id: 8, session: "s-2-bb", origin: "https://b.test", title: "", orphaned: false, orphanedAt: null, viewed: true,
    client: null, lastCallAt: 1_700_000_100_000 },
];

const flush = () => new Promise((r) => setImmediate(r));

test("rows as text; a Close button on each row; an orphan's closes that orphan and re-lists", async () => {
  const doc = fakeDoc(["agent-tabs", "close-orphans", "agent-tabs-status"]);
  const sent = [];
  let rows = ROWS;
  const api = {
    sendMessage: async (msg) => {
      sent.push(msg);
      if (msg.type === "agent_tabs_list") return { ok: true, tabs: rows };
      rows = rows.filter((r) => r.id !== msg.tabId);
      return { ok: true, closed: 1 };
    },
  };
  await runAgentTabsView({ doc, api });
  const list = doc.el("agent-tabs");
  assert.equal(list.children.length, 2);
  // A client label and a readable time, never the raw session name.
  const at = (ms) => new Date(ms).toLocaleTimeString();
  assert.equal(list.children[0].textContent.startsWith(`tab 7 · claude-code · orphaned since ${at(1_700_000_000_000)} · https://a.test — <b>Inbox</b>`), true);
  assert.equal(list.children[1].textContent.startsWith(`tab 8 · agent · in use, last call ${at(1_700_000_100_000)} · https://b.test — (no title)`), true);
  assert.doesNotMatch(list.textContent, /s-1-aa|s-2-bb/);
  const buttons = (li) => li.children.filter((c) => typeof c !== "string" && c.tagName === "BUTTON");
  assert.equal(buttons(list.children[0]).length, 1);
  assert.equal(buttons(list.children[1]).length, 1, "a live session's tab can be closed too");
  assert.equal(buttons(list.children[1])[0].className, "close-tab");
  assert.equal(doc.el("close-orphans").disabled, false);
  buttons(list.children[0])[0].click();
  await flush(); await flush();
  assert.deepEqual(sent[1], { type: "agent_tabs_close_orphan", tabId: 7 });
  assert.equal(doc.el("agent-tabs-status").textContent, "done: closed 1 tab");
  assert.equal(list.children.length, 1);
  assert.equal(doc.el("close-orphans").disabled, true, "no orphan left");
});

test("an unavailable worker is said, not shown as an empty list", async () => {
  const doc = fakeDoc(["agent-tabs", "close-orphans", "agent-tabs-status"]);
  await runAgentTabsView({ doc, api: { sendMessage: async () => { throw new Error("no worker"); } } });
  assert.match(doc.el("agent-tabs").textContent, /unavailable/);
  assert.equal(rowText(null), "agent · in use · (no site) — (no title)");
});

test("a live session's tab: its Close sends agent_tabs_close for that tab and re-lists", async () => {
  const doc = fakeDoc(["agent-tabs", "close-orphans", "agent-tabs-status"]);
  const sent = [];
  let rows = ROWS;
  const api = {
    sendMessage: async (msg) => {
      sent.push(msg);
      if (msg.type === "agent_tabs_list") return { ok: true, tabs: rows };
      rows = rows.filter((r) => r.id !== msg.tabId);
      return { ok: true, closed: 1 };
    },
  };
  await runAgentTabsView({ doc, api });
  const live = doc.el("agent-tabs").children[1];
  live.children.find((c) => typeof c !== "string" && c.tagName === "BUTTON").click();
  await flush(); await flush();
  assert.deepEqual(sent[1], { type: "agent_tabs_close", tabId: 8 });
  assert.equal(doc.el("agent-tabs-status").textContent, "done: closed 1 tab");
  assert.deepEqual(doc.el("agent-tabs").children.map((li) => li.className), ["orphaned"]);
});
