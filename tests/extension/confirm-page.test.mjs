import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createConfirmBroker } from "../../extension/worker/confirm-broker.js";
import { INPUT_DELAY_MS, countdownText, fieldItems, fieldsLabel, graceTitle, graceWords, neededGrowth, runConfirmPage, tapRefusal } from "../../extension/ui/confirm-page.js";
import { confirmWindowMessages, createConfirmer } from "../../extension/shared/confirm-window.js";
import { createPresenceConfirm } from "../../extension/shared/presence-confirm.js";
import { REASON_TEXT } from "../../extension/shared/presence-reasons.js";
import { fakeTimers, flush, testClock, pageRouter } from "./helpers/fakes.mjs";

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
  for (const id of ["heading", "client", "tool", "origin", "source-label", "source", "detail", "fields-box", "fields-label", "fields",
    "countdown", "status", "hint", "allow", "deny", "tap", "close"]) {
    els.set(id, make(id));
  }
  const attrs = new Map();
  const visibility = [];
  return {
    getElementById: (id) => els.get(id) ?? null, el: (id) => els.get(id), createElement: () => make(null),
    body: { setAttribute: (k, v) => attrs.set(k, v), getAttribute: (k) => attrs.get(k) ?? null },
    visibilityState: "visible",
    addEventListener(type, fn) { if (type === "keydown") keys.push(fn); if (type === "visibilitychange") visibility.push(fn); },
    key: (key) => { for (const fn of keys) fn({ key }); },
    setVisible(on) { this.visibilityState = on ? "visible" : "hidden"; for (const fn of visibility) fn(); },
  };
}

/** The window's focus and blur (confirm.js passes `window`). */
function fakeWin() {
  const on = { focus: [], blur: [], resize: [] };
  return { addEventListener: (type, fn) => on[type]?.push(fn), fire: (type) => { for (const fn of on[type]) fn(); } };
}

/** The page with these details; `run` waits out the input delay unless `armed: false` or the
 *  test brings its own clock (then it moves time itself). */
function make(details, { permission = true, throwOnRequest = false, clock, armed = true } = {}) {
  const doc = fakeDoc();
  const win = fakeWin();
  const own = clock === undefined;
  const time = clock ?? testClock(0);
  const sent = [];
  const requested = [];
  const api = {
    sendMessage: async (m) => { sent.push(m); return m.type === "confirm_details" ? (details ? { ok: true, details } : { ok: false }) : { ok: true }; },
    requestPermission: (p) => { requested.push({ p, answeredBefore: sent.some((m) => m.type === "confirm_answer") }); if (throwOnRequest) throw new Error("no gesture"); return Promise.resolve(permission); },
  };
  const run = async () => {
    const shown = await runConfirmPage({ doc, search: "?id=c7", api, clock: time, win });
    if (own && armed) time.advance(INPUT_DELAY_MS);
    return shown;
  };
  return { doc, win, clock: time, sent, requested, run };
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

// A refused tap, through the worker's real presence relay and broker: the window says why in the
// options page's words, with the next step, next to the tap control; the agent learns only "deny".
const EXT_ID = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const PAGE = `chrome-extension://${EXT_ID}/confirm.html`;

/**
 * The confirm page of one presence confirmation, talking to the real relay and broker; `host`
 * answers presence_begin / presence_complete as the host would (throwing its BridgeError).
 */
function tapWindow(host, { getAssertion } = {}) {
  const broker = createConfirmBroker({ ...fakeTimers(), newId: () => "c1" });
  const asked = broker.open({ kind: "action", tool: "page_eval", origin: "https://a.test", detail: "1+1", timeoutMs: 30_000,
    presence: { action: "confirm.eval", detail: '{"code":"1+1","origin":"https://a.test"}' } });
  const decision = { value: null };
  asked.promise.then((d) => { decision.value = d; });
  const relay = createPresenceConfirm({ broker, hostCall: async (action, args) => host(action, args) });
  const doc = fakeDoc();
  const sender = { id: EXT_ID, url: `${PAGE}?id=c1&mode=presence` };
  const api = {
    sendMessage: async (m) => {
      const msg = structuredClone(m);
      const viaRelay = pageRouter(EXT_ID, relay.messages)(msg, sender);
      if (viaRelay !== undefined) return viaRelay;
      if (msg.type === "confirm_details") return { ok: true, details: broker.details(msg.id) };
      if (msg.type === "confirm_answer") return { ok: broker.answer(msg.id, msg.decision) };
      return { ok: false };
    },
    requestPermission: async () => false,
    getAssertion: getAssertion ?? (async () => ({ id: "cred", response: { signature: "sig" } })),
    closeWindow: () => { closed.n += 1; },
  };
  const closed = { n: 0 };
  const clock = testClock(0);
  const run = async () => {
    const shown = await runConfirmPage({ doc, search: "?id=c1&mode=presence", api, clock });
    clock.advance(INPUT_DELAY_MS);
    return shown;
  };
  return { doc, decision, broker, closed, run };
}

const begun = { challengeId: "ch1", options: { publicKey: { challenge: "AAAA" } } };
/** @param {string} reason */
const refusing = (reason) => (action) => {
  if (action === "presence_begin") return begun;
  const err = new BridgeError("presence_refused", "presence refused");
  err.reason = reason;
  throw err;
};

test("a refused tap says why next to the control: the host's reason in plain words, then what to do", async () => {
  const w = tapWindow(refusing("counter_not_increased"));
  await w.run();
  assert.equal(w.doc.el("tap").hidden, false);
  w.doc.el("tap").click();
  for (let i = 0; i < 20 && w.decision.value === null; i += 1) await flush();
  await flush();
  const status = w.doc.el("status").textContent;
  assert.equal(status, `refused: presence_refused — ${REASON_TEXT.counter_not_increased}`, "the options page's words");
  assert.match(status, /sign counter did not increase/);
  assert.match(w.doc.el("hint").textContent, /try the tap again/, "the code's next step");
  assert.match(w.doc.el("hint").textContent, /The agent has to ask again/);
  assert.match(w.doc.el("heading").textContent, /Not allowed/);
  assert.equal(w.doc.el("status").classList.contains("refused"), true);
  assert.equal(w.decision.value, "deny", "the agent's answer is a bare deny: no reason travels to it");
  assert.equal(w.doc.el("tap").disabled, true, "one tap per confirmation");
  // The window stays open saying so, until the person closes it (the button, or Esc).
  assert.equal(w.broker.keepsWindow("c1"), true);
  assert.equal(w.doc.el("close").hidden, false);
  assert.equal(w.doc.el("close").focused, true);
  w.doc.el("close").click();
  w.doc.key("Escape");
  assert.equal(w.closed.n, 2);
});

test("only a deny keeps its window: a refused tap's stays, every other settled window is removed", async () => {
  const run = async (answerWith) => {
    let n = 0;
    const broker = createConfirmBroker({ ...fakeTimers(), newId: () => `c${++n}` });
    const removed = [];
    const confirm = createConfirmer({
      broker,
      windows: { createWindow: async () => ({ id: 9 }), removeWindow: async (wid) => { removed.push(wid); } },
      log: { warn() {} },
    });
    const asking = confirm({ kind: "action", tool: "page_eval", origin: "https://a.test", detail: "1", timeoutMs: 30_000 });
    await flush();
    const sender = { id: EXT_ID, url: `${PAGE}?id=c1` };
    const reply = pageRouter(EXT_ID, confirmWindowMessages(broker))({ type: "confirm_answer", id: "c1", ...answerWith }, sender);
    return { decision: await asking, removed, reply, leftover: broker.keepsWindow("c1") };
  };
  assert.deepEqual(await run({ decision: "deny", keepWindow: true }), { decision: "deny", removed: [], reply: { ok: true }, leftover: false });
  assert.deepEqual(await run({ decision: "deny" }), { decision: "deny", removed: [9], reply: { ok: true }, leftover: false });
  assert.deepEqual(await run({ decision: "allow", keepWindow: true }), { decision: "allow", removed: [9], reply: { ok: true }, leftover: false },
    "an allow never keeps a window");
});

test("each kind of refusal reads as a sentence, never a bare presence_refused", async () => {
  for (const reason of ["wrong_origin", "not_enrolled", "no_presence", "not_verified", "challenge_stale", "signature_invalid"]) {
    const w = tapWindow(refusing(reason));
    await w.run();
    w.doc.el("tap").click();
    for (let i = 0; i < 20 && w.decision.value === null; i += 1) await flush();
    await flush();
    assert.equal(w.doc.el("status").textContent, `refused: presence_refused — ${REASON_TEXT[reason]}`, reason);
    assert.equal(w.decision.value, "deny", reason);
  }
  // Refused before any tap (presence_begin: e.g. no credential enrolled any more).
  const early = tapWindow(() => { const e = new BridgeError("presence_refused", "x"); e.reason = "not_enrolled"; throw e; });
  await early.run();
  early.doc.el("tap").click();
  for (let i = 0; i < 20 && early.decision.value === null; i += 1) await flush();
  await flush();
  assert.equal(early.doc.el("status").textContent, `refused: presence_refused — ${REASON_TEXT.not_enrolled}`);
  assert.equal(early.decision.value, "deny");
  // The person cancelled the key's prompt, or it timed out, or no key answered.
  const cancelled = tapWindow(refusing("unspecified"), { getAssertion: async () => { throw new Error("NotAllowedError"); } });
  await cancelled.run();
  cancelled.doc.el("tap").click();
  for (let i = 0; i < 20 && cancelled.decision.value === null; i += 1) await flush();
  await flush();
  assert.equal(cancelled.doc.el("status").textContent, `refused: presence_refused — ${REASON_TEXT.no_answer}`);
  assert.equal(cancelled.decision.value, "deny");
  // A host without a reason, or one the page does not know: still a sentence; page text never shows.
  assert.equal(tapRefusal("presence_refused", undefined).status, `refused: presence_refused — ${REASON_TEXT.unspecified}`);
  assert.equal(tapRefusal("presence_refused", "<b>evil</b>").status, `refused: presence_refused — ${REASON_TEXT.unspecified}`);
  assert.equal(tapRefusal("<img src=x>", "counter_not_increased").status.startsWith("refused: internal_error"), true);
  assert.match(tapRefusal("confirm_denied", undefined).hint, /denied/);
});

// Input protection: keys typed for the page underneath (Tab, Enter) or a click aimed where the
// window pops up must not answer it. Chrome's own permission prompts ignore input for a moment
// after they show; so does this window, after it shows and after every return of focus.
test("input is ignored for INPUT_DELAY_MS after the window shows: buttons inactive, clicks dropped", async () => {
  const h = make(ACTION, { armed: false });
  assert.equal(await h.run(), "shown");
  assert.equal(INPUT_DELAY_MS >= 500, true, "at least as long as Chrome's permission prompts");
  assert.equal(h.doc.el("allow").disabled, true, "visibly inactive");
  assert.equal(h.doc.el("deny").disabled, true);
  assert.equal(h.doc.body.getAttribute("data-armed"), "false");
  h.doc.el("allow").click(); // a click (or Enter on a focused button) that lands too early
  h.clock.advance(INPUT_DELAY_MS - 1);
  h.doc.el("allow").click();
  await flush();
  assert.equal(h.sent.length, 1, "nothing answered during the delay");
  h.clock.advance(1);
  assert.equal(h.doc.body.getAttribute("data-armed"), "true");
  assert.equal(h.doc.el("allow").disabled, false);
  assert.equal(h.doc.el("deny").focused, true, "then Deny has the focus");
  h.doc.el("allow").click();
  await flush();
  assert.deepEqual(h.sent.slice(1), [{ type: "confirm_answer", id: "c7", decision: "allow" }]);
});

test("losing focus disarms at once; regaining it (or becoming visible) waits the delay again", async () => {
  const h = make(ACTION);
  await h.run();
  assert.equal(h.doc.el("allow").disabled, false);
  for (const [leave, back] of [[() => h.win.fire("blur"), () => h.win.fire("focus")], [() => h.doc.setVisible(false), () => h.doc.setVisible(true)]]) {
    leave();
    assert.equal(h.doc.el("allow").disabled, true);
    assert.equal(h.doc.body.getAttribute("data-armed"), "false");
    back();
    h.doc.el("allow").click();
    h.clock.advance(INPUT_DELAY_MS / 2);
    h.doc.el("allow").click();
    await flush();
    assert.equal(h.sent.length, 1, "nothing answered right after the window came back");
    h.clock.advance(INPUT_DELAY_MS / 2);
    assert.equal(h.doc.el("allow").disabled, false);
  }
  // Focus back again before the delay ran out starts it over.
  h.win.fire("focus");
  h.clock.advance(INPUT_DELAY_MS - 1);
  h.win.fire("focus");
  h.clock.advance(INPUT_DELAY_MS - 1);
  assert.equal(h.doc.el("allow").disabled, true);
  h.clock.advance(1);
  h.doc.el("allow").click();
  await flush();
  assert.deepEqual(h.sent.slice(1), [{ type: "confirm_answer", id: "c7", decision: "allow" }]);
  h.win.fire("focus");
  h.clock.advance(INPUT_DELAY_MS);
  assert.equal(h.doc.el("allow").disabled, true, "an answered window never wakes again");
});

test("Esc denies even during the delay (refusing is free); a tap waits for the delay too", async () => {
  const h = make(ACTION, { armed: false });
  await h.run();
  h.doc.key("Escape");
  await flush();
  assert.deepEqual(h.sent.slice(1), [{ type: "confirm_answer", id: "c7", decision: "deny" }]);
  const p = make({ ...ACTION, presence: { action: "confirm.eval", detail: "{}" } }, { armed: false });
  await p.run();
  p.doc.el("tap").click();
  await flush();
  assert.equal(p.sent.length, 1, "no tap begins during the delay");
});

test("names where an address came from, and says when a form is sent by GET", async () => {
  const h = make({ ...ACTION, tool: "page_navigate", source: "a page on https://evil.test" });
  await h.run();
  assert.equal(h.doc.el("source").textContent, "a page on https://evil.test");
  assert.equal(h.doc.el("source").hidden, false);
  assert.equal(h.doc.el("source-label").hidden, false);
  const plain = make(ACTION);
  await plain.run();
  assert.equal(plain.doc.el("source").hidden, true, "no source row without lineage");
  const get = make({ ...ACTION, tool: "page_click", fields: { names: ["user", "pwd (password)"], more: 0, method: "get" } });
  await get.run();
  assert.match(get.doc.el("fields-label").textContent, /^Sent by GET: the values go into the address/);
  const post = make({ ...ACTION, tool: "page_click", fields: { names: ["user"], more: 0, method: "post" } });
  await post.run();
  assert.doesNotMatch(post.doc.el("fields-label").textContent, /GET/);
  assert.equal(fieldsLabel(null), "The form will send these fields (values not shown):");
});

test("neededGrowth: the window grows by what the page lacks, never past the screen, never for bad sizes", () => {
  const m = { contentHeight: 360, innerHeight: 304, outerHeight: 360, availHeight: 1000 };
  assert.equal(neededGrowth(m), 56, "the debugging bar's 56 px taken back");
  assert.equal(neededGrowth({ ...m, contentHeight: 304 }), 0, "fits: no change");
  assert.equal(neededGrowth({ ...m, contentHeight: 200 }), 0, "shorter than the window: never shrinks");
  assert.equal(neededGrowth({ ...m, contentHeight: 5000 }), 640, "capped at the screen's available height");
  assert.equal(neededGrowth({ ...m, outerHeight: 1200 }), 0, "already past the screen: no growth");
  for (const bad of [NaN, -1, Infinity]) assert.equal(neededGrowth({ ...m, contentHeight: bad }), 0);
  assert.equal(neededGrowth({ ...m, contentHeight: 360.4 }), 57, "a fraction of a pixel still needs a pixel");
});

test("the page asks its window to grow when its rows do not fit, and not when they do", async () => {
  for (const [content, want] of [[420, [116]], [300, []]]) {
    const h = make(ACTION);
    const grown = [];
    h.doc.documentElement = { scrollHeight: content };
    Object.assign(h.win, { innerHeight: 304, outerHeight: 360, screen: { availHeight: 1000 } });
    const run = runConfirmPage;
    const api = { sendMessage: async (m) => (m.type === "confirm_details" ? { ok: true, details: ACTION } : { ok: true }),
      requestPermission: async () => true, growWindow: async (n) => { grown.push(n); } };
    assert.equal(await run({ doc: h.doc, search: "?id=c7", api, clock: h.clock, win: h.win }), "shown");
    assert.deepEqual(grown, want, `content ${content}`);
  }
});

test("a debugging bar that appears after the page is shown makes the window grow then, once", async () => {
  const h = make(ACTION);
  const grown = [];
  h.doc.documentElement = { scrollHeight: 304 };
  Object.assign(h.win, { innerHeight: 304, outerHeight: 360, screen: { availHeight: 1000 } });
  const api = { sendMessage: async (m) => (m.type === "confirm_details" ? { ok: true, details: ACTION } : { ok: true }),
    requestPermission: async () => true,
    growWindow: async (n) => { grown.push(n); h.win.outerHeight += n; h.win.innerHeight += n; h.win.fire("resize"); } };
  assert.equal(await runConfirmPage({ doc: h.doc, search: "?id=c7", api, clock: h.clock, win: h.win }), "shown");
  assert.deepEqual(grown, [], "fits when shown");
  h.win.innerHeight -= 56; // the bar arrives
  h.win.fire("resize");
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(grown, [56], "grown by the bar's height, and the growth's own resize asks for nothing more");
  h.win.fire("resize");
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(grown, [56], "a resize that leaves it fitting changes nothing");
});

test("a window that cannot grow still shows its question (the failure is swallowed)", async () => {
  const h = make(ACTION);
  h.doc.documentElement = { scrollHeight: 500 };
  Object.assign(h.win, { innerHeight: 304, outerHeight: 360, screen: { availHeight: 1000 } });
  const api = { sendMessage: async (m) => (m.type === "confirm_details" ? { ok: true, details: ACTION } : { ok: true }),
    requestPermission: async () => true, growWindow: async () => { throw new Error("no window"); } };
  assert.equal(await runConfirmPage({ doc: h.doc, search: "?id=c7", api, clock: h.clock, win: h.win }), "shown");
  assert.equal(h.doc.el("tool").textContent, "tab_close");
});

test("graceWords: an allow that opens a grace says so in one line, and the title says it whole; none says nothing", () => {
  assert.equal(graceWords(30, "https://a.test"), "Allow: no new questions on this site in this tab for 30 s");
  const title = graceTitle(30, "https://a.test");
  assert.match(title, /for 30 seconds/);
  assert.match(title, /https:\/\/a\.test in this tab are not asked again/);
  assert.match(title, /page scripts, requests, uploads, dialogs and closing a tab still are/);
  for (const s of [0, -1, NaN, "30", null, undefined]) {
    assert.equal(graceWords(s, "https://a.test"), "", String(s));
    assert.equal(graceTitle(s, "https://a.test"), "", String(s));
  }
});
