// The options page's state at a glance and the plain words the popup and the options page show
// for a host that cannot be reached: words first, a raw code only as small secondary text, and
// nothing about reconnecting after a named cause.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setGlance } from "../../extension/ui/glance.js";
import { glanceOf } from "../../extension/ui/options-page.js";
import { runPopupPage, stateText } from "../../extension/ui/popup-page.js";
import { NOT_FOUND, FAILED_TO_START, hostProblem, problemParts, problemText, showProblem } from "../../extension/shared/host-problem.js";

const SNAKE = /^[a-z]+_[a-z0-9_]+/;

/** A tiny document: elements with text, children, attributes and classes; innerHTML throws. */
function fakeDoc(ids = []) {
  const make = (tag, id = null) => ({
    tagName: tag.toUpperCase(), id, children: [], attrs: {}, _text: "", className: "", hidden: false,
    get textContent() { return this._text + this.children.map((c) => (typeof c === "string" ? c : c.textContent)).join(""); },
    set textContent(v) { this.children = []; this._text = String(v); },
    set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
    classList: { toggle() {}, contains() { return false; } },
    append(...n) { this.children.push(...n); },
    replaceChildren(...n) { this.children = [...n]; this._text = ""; },
    setAttribute(k, v) { this.attrs[k] = String(v); },
    addEventListener() {},
  });
  const els = new Map(ids.map((id) => [id, make("div", id)]));
  return { getElementById: (id) => els.get(id) ?? null, createElement: (tag) => make(tag), el: (id) => els.get(id) };
}

const missing = hostProblem({ reason: NOT_FOUND, welcomed: false }, ["chromium"]);
const cannot = hostProblem({ reason: FAILED_TO_START, welcomed: false }, ["chromium"]);

test("a named cause is the whole popup line in every phase but ready: no 'reconnecting', no 'next try'", () => {
  for (const phase of ["reconnect_wait", "awaiting_welcome", "idle", "stopped", "mismatch", "something_new"]) {
    for (const problem of [missing, cannot]) {
      const s = { ok: true, phase, gate: "trusted", killed: null, reconnectInMs: 4000, lastDisconnectAt: 0,
        lastDisconnectReason: NOT_FOUND, workerStartedAt: 0, hostProblem: problem };
      const line = stateText(s);
      assert.equal(line, problemText(problem), phase);
      assert.doesNotMatch(line, /reconnect|next try|disconnected/i, phase);
      assert.doesNotMatch(line, SNAKE, "never leads with a code");
    }
  }
});

test("a phase the popup has no words for is 'state unknown', never its raw name", () => {
  const line = stateText({ ok: true, phase: "brand_new_phase", gate: "trusted", killed: false });
  assert.match(line, /^state unknown · host key proven/);
  assert.doesNotMatch(line, /brand_new_phase/);
});

test("problemParts / showProblem: the sentences, then the code as small secondary text", () => {
  assert.deepEqual(problemParts(null), null);
  const parts = problemParts(missing);
  assert.equal(parts.bracketed, "[host_not_installed]");
  assert.equal(`${parts.words} ${parts.bracketed}`, problemText(missing));
  assert.doesNotMatch(parts.words, /host_not_installed/);
  const doc = fakeDoc(["p"]);
  const el = doc.el("p");
  assert.equal(showProblem(doc, el, missing), true);
  assert.equal(el.children.length, 2);
  assert.equal(el.children[0], `${parts.words} `);
  assert.equal(el.children[1].tagName, "SMALL");
  assert.equal(el.children[1].className, "code");
  assert.equal(el.children[1].textContent, "[host_not_installed]");
  assert.equal(el.textContent, problemText(missing));
  assert.equal(showProblem(doc, el, null), false);
  assert.equal(el.textContent, "");
  assert.equal(showProblem(doc, el, { cause: "<b>x</b>", next: "y", code: "c" }), true);
  assert.equal(el.children[0], "<b>x</b>. Y. ", "host text stays text");
});

test("the popup shows a named cause as words with its code small, and the line otherwise", async () => {
  const doc = fakeDoc(["state", "state-word", "indicator", "kill", "kill-engaged", "recent", "popup-status", "rollback"]);
  let answer = { ok: true, phase: "reconnect_wait", gate: "unpinned", killed: null, hostProblem: missing, recent: [] };
  const page = await runPopupPage({ doc, api: { sendMessage: async () => answer } });
  const state = doc.el("state");
  assert.equal(state.children[1].className, "code");
  assert.ok(state.textContent.startsWith("The tabwarden host is not registered for this browser"));
  assert.ok(state.textContent.endsWith("[host_not_installed]"));
  answer = { ok: true, phase: "ready", gate: "trusted", killed: false, hostProblem: null, recent: [] };
  await page.refresh();
  assert.equal(state.textContent, "connected · host key proven · kill switch off");
});

test("glanceOf: connection and browser in words with a colour cue, most alarming first", () => {
  const base = { ok: true, gate: "trusted", paired: true, browser: "chromium", windowOnly: false, rolledBack: null, hostProblem: null };
  assert.deepEqual(glanceOf(base), {
    connection: ["good", "Connected", "the host proved its key"],
    browser: ["good", "Paired as chromium", "confirms with your authenticator"],
  });
  assert.deepEqual(glanceOf({ ...base, gate: "verifying" }).connection[0], "warn");
  assert.deepEqual(glanceOf({ ...base, gate: "verifying", hostProblem: missing }).connection,
    ["bad", "Not connected", "the host is not installed for this browser"]);
  assert.deepEqual(glanceOf({ ...base, gate: "verifying", hostProblem: cannot }).connection[2], "the host cannot start");
  assert.deepEqual(glanceOf({ ...base, gate: "compromised" }).connection, ["bad", "Host key not proven", "every request is refused"]);
  assert.equal(glanceOf({ ...base, rolledBack: { epoch: 1, seen: 2 } }).connection[1], "Refusing everything");
  assert.deepEqual(glanceOf({ ...base, gate: "unpinned", paired: false }), {
    connection: ["warn", "Not paired yet", "pair this browser below"],
    browser: ["warn", "Not paired", "run `tabwarden pair` in a terminal"],
  });
  assert.equal(glanceOf({ ...base, windowOnly: true }).browser[2], "confirms in a window (no authenticator)");
  assert.equal(glanceOf(null).connection[0], "unknown");
  for (const s of [base, { ...base, gate: "verifying", hostProblem: missing }, null]) {
    for (const [, value, note] of Object.values(glanceOf(s))) {
      assert.doesNotMatch(value, SNAKE);
      assert.doesNotMatch(note, SNAKE);
    }
  }
});

test("setGlance: the tile's state, word and note, as text; a page without the tile is left alone", () => {
  const doc = fakeDoc(["glance-kill", "glance-kill-value", "glance-kill-note"]);
  setGlance(doc, "kill", "bad", "Engaged", "<i>every</i> agent request is refused");
  assert.equal(doc.el("glance-kill").attrs["data-state"], "bad");
  assert.equal(doc.el("glance-kill-value").textContent, "Engaged");
  assert.equal(doc.el("glance-kill-note").textContent, "<i>every</i> agent request is refused");
  setGlance(doc, "sites", "good", "1 allowed");
  setGlance(fakeDoc([]), "kill", "good", "Off");
});
