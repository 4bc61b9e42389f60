import { test } from "node:test";
import assert from "node:assert/strict";
import { runPolicyPage } from "../../extension/ui/policy-page.js";

/** A tiny document: elements with children, text, attributes, click and keydown listeners. */
function fakeDoc(ids) {
  const make = (tag, id) => {
    const listeners = { click: [], keydown: [] };
    const el = {
      tagName: tag.toUpperCase(), id, children: [], attrs: {}, value: "", disabled: false, type: "", className: "", _text: "",
      get textContent() { return this.children.length ? this.children.map((c) => (typeof c === "string" ? c : c.textContent)).join("") : this._text; },
      set textContent(v) { this.children = []; this._text = String(v); },
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
      append(...nodes) { this.children.push(...nodes); },
      replaceChildren(...nodes) { this.children = [...nodes]; this._text = ""; },
      setAttribute(k, v) { this.attrs[k] = String(v); },
      getAttribute(k) { return this.attrs[k] ?? null; },
      addEventListener(type, fn) { listeners[type]?.push(fn); },
      click() { if (!this.disabled) for (const fn of listeners.click) fn(); },
      key(k) { for (const fn of listeners.keydown) fn({ key: k }); },
      querySelectorAll(sel) {
        const out = [];
        const walk = (n) => { for (const c of n.children) if (typeof c !== "string") { if (c.tagName === sel.toUpperCase()) out.push(c); walk(c); } };
        walk(this);
        return out;
      },
    };
    return el;
  };
  const els = new Map(ids.map((id) => [id, make(id === "policy" ? "dl" : "div", id)]));
  return { getElementById: (id) => els.get(id) ?? null, createElement: (tag) => make(tag, null), el: (id) => els.get(id) };
}

const IDS = ["policy", "sites-list", "policy-hint", "policy-feedback", "killed", "enrolled", "credentials", "policy-summary", "policy-status", "origin", "approve-origin",
  "enable-eval", "enable-upload", "restrict-eval", "restrict-upload", "kill", "unkill",
  "grace", "set-grace", "confirm-timeout", "set-timeout", "presence-on", "presence-off", "close-tabs-on", "close-tabs-off",
  "dialog-arming-on", "dialog-arming-off", "enable-fetch", "restrict-fetch",
  "console-capture-on", "console-capture-off", "network-capture-on", "network-capture-off",
  "provenance-strict", "provenance-confirm", "provenance-off"];

function harness({ policy = { origins: ["https://a.test"], eval: false, upload: false, confirm: true }, killed = false, enrolled = true,
  windowOnly = false, credentials = [], begin, complete, assertion, restrict, kill } = {}) {
  const doc = fakeDoc(IDS);
  const sent = [];
  const assertions = [];
  let state = { policy, killed };
  const api = {
    sendMessage: async (m) => {
      sent.push(m);
      if (m.type === "policy_get") return { ok: true, policy: state.policy, killed: state.killed, epoch: 3, browsers: ["chromium"], enrolled, windowOnly, credentials };
      if (m.type === "presence_begin") return begin ?? { ok: true, challengeId: "ch1", options: { publicKey: { challenge: "AA" } } };
      if (m.type === "presence_complete") {
        if (complete) return complete;
        if (m.action === "unkill") state = { ...state, killed: false };
        else state = { ...state, policy: { ...state.policy, ...JSON.parse(m.detail) } };
        return { ok: true, done: true, epoch: 4 };
      }
      if (m.type === "policy_restrict") {
        if (restrict) return restrict;
        state = { ...state, policy: { ...state.policy, [m.key]: m.value } };
        return { ok: true };
      }
      if (m.type === "kill") {
        if (kill) return kill;
        state = { ...state, killed: true };
        return { ok: true };
      }
      return undefined;
    },
    getAssertion: assertion ?? (async (o) => { assertions.push(o); return { id: "c", type: "public-key", response: { signature: "s" } }; }),
  };
  return { doc, sent, assertions, api, run: () => runPolicyPage({ doc, api }) };
}
const flush = () => new Promise((r) => setImmediate(r));
const types = (sent) => sent.map((m) => m.type);

test("renders every policy key in plain words, the kill state and enrolment; sites get remove buttons", async () => {
  const h = harness({ policy: { origins: ["https://a.test"], eval: false, upload: false, confirm: ["submit"], clickGraceSeconds: 30, dialogArming: true, newKey: true } });
  await h.run();
  assert.deepEqual(h.sent, [{ type: "policy_get" }]);
  const dl = h.doc.el("policy");
  const dts = dl.children.filter((c) => c.tagName === "DT");
  // Every key the host's policy has (a key without words, e.g. a new one, by its own name); the sites apart.
  assert.deepEqual(dts.map((c) => c.getAttribute("title")), ["clickGraceSeconds", "confirm", "dialogArming", "eval", "newKey", "upload"]);
  assert.deepEqual(dts.map((c) => c.textContent), ["No new question on that tab and site after an allowed action for", "Actions that ask you first",
    "Agents may arm an answer to a page's next dialog", "Page scripts (page_eval)", "newKey", "File uploads"]);
  assert.deepEqual(dl.children.filter((c) => c.tagName === "DD").map((c) => c.textContent), ["30 s", "submit", "yes", "no", "yes", "no"]);
  const [, asks] = dl.children.filter((c) => c.tagName === "DD");
  assert.deepEqual(asks.children.map((c) => c.tagName), ["CODE"], "a list of action names is shown as code, not prose");
  assert.doesNotMatch(dl.textContent, /Policy epoch|window-only/);
  const remove = h.doc.el("sites-list").querySelectorAll("button");
  assert.equal(remove.length, 1);
  assert.equal(remove[0].getAttribute("aria-label"), "Remove https://a.test");
  assert.equal(h.doc.el("killed").textContent, "released");
  assert.match(h.doc.el("enrolled").textContent, /^yes/);
  assert.equal(h.doc.el("enable-eval").disabled, false);
  assert.equal(h.doc.el("restrict-eval").disabled, true, "eval is already off");
  assert.equal(h.doc.el("kill").disabled, false);
  assert.equal(h.doc.el("unkill").disabled, true);
  const h2 = harness({ killed: true, enrolled: false });
  await h2.run();
  assert.equal(h2.doc.el("killed").textContent, "engaged");
  assert.match(h2.doc.el("enrolled").textContent, /^no/);
  // Not enrolled (e.g. revoked after a lost authenticator): say how it confirms and how to re-enrol.
  assert.match(h2.doc.el("enrolled").textContent, /software confirmation.*`tabwarden pair --browser LABEL`/);
});

test("host text goes in as text, never as HTML", async () => {
  const h = harness({ policy: { origins: ["https://<b>x</b>.test"], note: "<img src=x onerror=alert(1)>" } });
  await h.run();
  assert.match(h.doc.el("policy").textContent, /<img src=x onerror=alert\(1\)>/);
  assert.match(h.doc.el("sites-list").textContent, /https:\/\/<b>x<\/b>\.test/);
});

test("policy_get failure is shown and disables the controls", async () => {
  const h = harness();
  const doc = h.doc;
  await runPolicyPage({ doc, api: { sendMessage: async () => ({ ok: false, code: "extension_not_connected" }), getAssertion: async () => ({}) } });
  assert.equal(doc.el("policy-summary").textContent, "Policy unavailable: extension_not_connected");
  assert.equal(doc.el("enable-eval").disabled, true);
  assert.equal(doc.el("killed").textContent, "unknown");
});

test("widen eval: presence_begin with canonical detail -> get() -> presence_complete, then re-render", async () => {
  const h = harness();
  const page = await h.run();
  h.doc.el("enable-eval").click();
  await flush(); await flush(); await flush();
  assert.deepEqual(types(h.sent), ["policy_get", "presence_begin", "presence_complete", "policy_get"]);
  assert.deepEqual(h.sent[1], { type: "presence_begin", action: "policy.widen", detail: "{\"eval\":true}" });
  assert.deepEqual(h.assertions, [{ challenge: "AA" }], "options.publicKey is what get() parses");
  assert.deepEqual(h.sent[2], { type: "presence_complete", challengeId: "ch1", action: "policy.widen", detail: "{\"eval\":true}",
    response: { id: "c", type: "public-key", response: { signature: "s" } } });
  assert.equal(h.doc.el("policy-status").textContent, "done: policy.widen");
  assert.equal(h.doc.el("enable-eval").disabled, true, "eval is on now");
  assert.equal(h.doc.el("restrict-eval").disabled, false);
  assert.equal(await page.widen({ upload: true }), "done: policy.widen");
  assert.equal(h.sent.at(-3).detail, "{\"upload\":true}");
});

test("widen refusals: the host's code, or presence_refused when the authenticator fails", async () => {
  const a = harness({ begin: { ok: false, code: "presence_refused" } });
  assert.equal(await (await a.run()).widen({ eval: true }), "refused: presence_refused");
  assert.equal(a.doc.el("policy-status").textContent, "refused: presence_refused");
  assert.equal(a.assertions.length, 0);
  const b = harness({ assertion: async () => { throw new DOMException("no", "NotAllowedError"); } });
  assert.equal(await (await b.run()).widen({ eval: true }), "refused: presence_refused — no authenticator answered (cancelled, timed out, or none present)");
  assert.equal(b.sent.some((m) => m.type === "presence_complete"), false);
  const c = harness({ complete: { ok: false, code: "host_compromised" } });
  assert.equal(await (await c.run()).widen({ eval: true }), "refused: host_compromised");
  assert.equal(c.doc.el("policy-status").textContent, "refused: host_compromised");
  const d = harness({ begin: { ok: true, challengeId: "x", options: { challenge: "BB" } } });
  await (await d.run()).widen({ eval: true });
  assert.deepEqual(d.assertions, [{ challenge: "BB" }], "options without a publicKey wrapper are used as is");
});

test("approve an origin: normalised, appended to the existing list, widened with a tap", async () => {
  const h = harness();
  const page = await h.run();
  h.doc.el("origin").value = "  https://B.test/ ";
  assert.equal(await page.approveOrigin(), "done: policy.widen");
  const begin = h.sent.find((m) => m.type === "presence_begin");
  assert.equal(begin.detail, "{\"origins\":[\"https://a.test\",\"https://b.test\"]}");
  assert.equal(h.doc.el("origin").value, "");
  assert.equal(h.doc.el("sites-list").querySelectorAll("button").length, 2);
  const before = h.sent.length;
  h.doc.el("origin").value = "https://a.test";
  assert.equal(await page.approveOrigin(), "already approved");
  h.doc.el("origin").value = "https://c.test/path";
  assert.equal(await page.approveOrigin(), "refused: bad_request");
  assert.equal(h.sent.length, before, "nothing sent for a bad or known origin");
  h.doc.el("origin").value = "https://d.test";
  h.doc.el("origin").key("Enter");
  await flush(); await flush(); await flush();
  assert.equal(h.sent.filter((m) => m.type === "presence_begin").at(-1).detail, "{\"origins\":[\"https://a.test\",\"https://b.test\",\"https://d.test\"]}");
});

test("narrowing is free: restrict eval and remove an origin send policy_restrict, no tap", async () => {
  const h = harness({ policy: { origins: ["https://a.test", "https://b.test"], eval: true, upload: false } });
  await h.run();
  h.doc.el("restrict-eval").click();
  await flush(); await flush();
  assert.deepEqual(h.sent[1], { type: "policy_restrict", key: "eval", value: false });
  assert.equal(h.doc.el("policy-status").textContent, "done: policy_restrict");
  const [removeA] = h.doc.el("sites-list").querySelectorAll("button");
  removeA.click();
  await flush(); await flush();
  assert.deepEqual(h.sent.filter((m) => m.type === "policy_restrict")[1], { type: "policy_restrict", key: "origins", value: ["https://b.test"] });
  assert.equal(h.sent.some((m) => m.type === "presence_begin"), false);
  assert.equal(h.assertions.length, 0);
  const r = harness({ policy: { eval: true }, restrict: { ok: false, code: "internal_error" } });
  assert.equal(await (await r.run()).restrict("eval", false), "refused: internal_error");
});

test("kill is free; unkill needs a tap with action unkill and empty detail", async () => {
  const h = harness();
  const page = await h.run();
  h.doc.el("kill").click();
  await flush(); await flush();
  assert.deepEqual(types(h.sent), ["policy_get", "kill", "policy_get"]);
  assert.equal(h.doc.el("policy-status").textContent, "done: kill");
  assert.equal(h.doc.el("killed").textContent, "engaged");
  assert.equal(h.assertions.length, 0);
  assert.equal(h.doc.el("unkill").disabled, false);
  h.doc.el("unkill").click();
  await flush(); await flush(); await flush();
  assert.deepEqual(h.sent.find((m) => m.type === "presence_begin"), { type: "presence_begin", action: "unkill", detail: "" });
  assert.equal(h.sent.find((m) => m.type === "presence_complete").action, "unkill");
  assert.equal(h.assertions.length, 1);
  assert.equal(h.doc.el("policy-status").textContent, "done: unkill");
  assert.equal(h.doc.el("killed").textContent, "released");
  const refused = harness({ killed: true, begin: { ok: false, code: "presence_refused", reason: "not_enrolled" } });
  assert.equal(await (await refused.run()).unkill(), "refused: presence_refused — this authenticator is not the one enrolled for this browser");
  assert.equal(refused.doc.el("killed").textContent, "engaged");
  void page;
});

test("one operation at a time", async () => {
  let release;
  const h = harness({ assertion: () => new Promise((r) => { release = r; }) });
  const page = await h.run();
  const first = page.widen({ eval: true });
  await flush();
  assert.equal(h.doc.el("kill").disabled, true, "controls are disabled while a tap is pending");
  assert.equal(await page.kill(), "busy");
  release({ id: "c" });
  assert.equal(await first, "done: policy.widen");
  assert.equal(h.doc.el("kill").disabled, false);
});

test("enrolled credentials are listed with their user-verification mode; window-only says software confirmation", async () => {
  const h = harness({ credentials: [{ credentialId: "abcdefghijklmnopqrstuvwxyz", enrolledAt: 0, uv: true }, { credentialId: "<b>x</b>", enrolledAt: 60, uv: false }] });
  await h.run();
  assert.match(h.doc.el("enrolled").textContent, /^yes \(2 credentials\)/);
  const items = h.doc.el("credentials").children.map((li) => li.textContent);
  assert.equal(items.length, 2);
  // Words first, in the person's local time; the credential id last, as small secondary text.
  assert.match(items[0], new RegExp(`^Enrolled ${new Date(0).toLocaleString()}; verifies the user .* · id abcdefghijklmnop…$`));
  assert.match(items[1], /^Enrolled .*; presence only .* · id <b>x<\/b>…$/, "host text stays text");
  const id = h.doc.el("credentials").children[1].children.at(-1);
  assert.equal(id.className, "code");
  assert.equal(id.textContent, "<b>x</b>…");
  const w = harness({ enrolled: false, windowOnly: true });
  await w.run();
  assert.match(w.doc.el("enrolled").textContent, /^none: confirmations are a click in a window \(software confirmation\)/);
  assert.deepEqual(w.doc.el("credentials").children, []);
});


/** A policy with the keys that go either way (trust/policy.py DEFAULT_POLICY's values). */
const FULL = { origins: [], eval: true, upload: false, clickGraceSeconds: 30, confirmTimeoutSeconds: 60, presenceConfirm: false };
const settle = async () => { for (let i = 0; i < 4; i += 1) await flush(); };

test("the grace and timeout fields are pre-filled from the policy; no policy disables the new buttons", async () => {
  const h = harness({ policy: FULL });
  await h.run();
  assert.equal(h.doc.el("grace").value, "30");
  assert.equal(h.doc.el("confirm-timeout").value, "60");
  assert.equal(h.doc.el("set-grace").disabled, false);
  assert.equal(h.doc.el("set-timeout").disabled, false);
  assert.equal(h.doc.el("presence-on").disabled, false, "presenceConfirm is off: turning it on is offered");
  assert.equal(h.doc.el("presence-off").disabled, true, "presenceConfirm is already off");
  const doc = fakeDoc(IDS);
  await runPolicyPage({ doc, api: { sendMessage: async () => ({ ok: false, code: "not_paired" }), getAssertion: async () => ({}) } });
  for (const id of ["set-grace", "set-timeout", "presence-on", "presence-off"]) assert.equal(doc.el(id).disabled, true, id);
});

test("lowering the click grace period is free: policy_restrict, no tap", async () => {
  const h = harness({ policy: FULL });
  await h.run();
  h.doc.el("grace").value = "10";
  h.doc.el("set-grace").click();
  await settle();
  assert.deepEqual(types(h.sent), ["policy_get", "policy_restrict", "policy_get"]);
  assert.deepEqual(h.sent[1], { type: "policy_restrict", key: "clickGraceSeconds", value: 10 });
  assert.equal(h.assertions.length, 0);
  assert.equal(h.doc.el("policy-status").textContent, "done: policy_restrict");
  assert.equal(h.doc.el("grace").value, "10", "re-rendered from the host's answer");
  // 0 is the floor and still a narrowing.
  h.doc.el("grace").value = "0";
  h.doc.el("grace").key("Enter");
  await settle();
  assert.deepEqual(h.sent.at(-2), { type: "policy_restrict", key: "clickGraceSeconds", value: 0 });
  assert.equal(h.sent.some((m) => m.type === "presence_begin"), false);
});

test("raising the click grace period needs a tap with the canonical detail", async () => {
  const h = harness({ policy: FULL });
  const page = await h.run();
  h.doc.el("grace").value = "45";
  h.doc.el("set-grace").click();
  await settle();
  assert.deepEqual(types(h.sent), ["policy_get", "presence_begin", "presence_complete", "policy_get"]);
  assert.deepEqual(h.sent[1], { type: "presence_begin", action: "policy.widen", detail: "{\"clickGraceSeconds\":45}" });
  assert.equal(h.sent[2].detail, "{\"clickGraceSeconds\":45}");
  assert.equal(h.assertions.length, 1);
  assert.equal(h.doc.el("policy-status").textContent, "done: policy.widen");
  assert.equal(h.doc.el("grace").value, "45");
  h.doc.el("grace").value = "600";
  assert.equal(await page.setGrace(), "done: policy.widen");
  assert.equal(h.sent.at(-3).detail, "{\"clickGraceSeconds\":600}");
  assert.equal(h.sent.some((m) => m.type === "policy_restrict"), false);
});

test("the confirmation timeout: shorter is a free restrict, longer is a tap", async () => {
  const h = harness({ policy: FULL });
  const page = await h.run();
  h.doc.el("confirm-timeout").value = "5";
  h.doc.el("set-timeout").click();
  await settle();
  assert.deepEqual(h.sent[1], { type: "policy_restrict", key: "confirmTimeoutSeconds", value: 5 });
  assert.equal(h.assertions.length, 0);
  assert.equal(h.doc.el("confirm-timeout").value, "5");
  h.doc.el("confirm-timeout").value = "120";
  h.doc.el("confirm-timeout").key("Enter");
  await settle();
  const begin = h.sent.filter((m) => m.type === "presence_begin");
  assert.deepEqual(begin, [{ type: "presence_begin", action: "policy.widen", detail: "{\"confirmTimeoutSeconds\":120}" }]);
  assert.equal(h.assertions.length, 1);
  assert.equal(h.doc.el("confirm-timeout").value, "120");
  assert.equal(h.sent.filter((m) => m.type === "policy_restrict").length, 1);
  void page;
});

test("presenceConfirm: on is a free restrict, off is a tap with {\"presenceConfirm\":false}", async () => {
  const h = harness({ policy: FULL });
  const page = await h.run();
  h.doc.el("presence-on").click();
  await settle();
  assert.deepEqual(types(h.sent), ["policy_get", "policy_restrict", "policy_get"]);
  assert.deepEqual(h.sent[1], { type: "policy_restrict", key: "presenceConfirm", value: true });
  assert.equal(h.assertions.length, 0);
  assert.equal(h.doc.el("presence-on").disabled, true, "already on");
  assert.equal(h.doc.el("presence-off").disabled, false);
  h.doc.el("presence-off").click();
  await settle();
  assert.deepEqual(h.sent.slice(3).map((m) => m.type), ["presence_begin", "presence_complete", "policy_get"]);
  assert.deepEqual(h.sent[3], { type: "presence_begin", action: "policy.widen", detail: "{\"presenceConfirm\":false}" });
  assert.equal(h.assertions.length, 1);
  assert.equal(h.doc.el("policy-status").textContent, "done: policy.widen");
  assert.equal(h.doc.el("presence-off").disabled, true);
  assert.equal(await page.setPresenceConfirm(false), "unchanged");
});

test("bad input is refused in the page and nothing is sent", async () => {
  const h = harness({ policy: FULL });
  const page = await h.run();
  const before = h.sent.length;
  for (const raw of ["", "  ", "abc", "-1", "-0", "+5", "1.5", "30.0", "1e2", "0x10", "601", "99999", "Infinity", "NaN"]) {
    h.doc.el("grace").value = raw;
    assert.equal(await page.setGrace(), "refused: bad_request", JSON.stringify(raw));
    assert.equal(h.doc.el("policy-status").textContent,
      "refused: bad_request (enter the click grace period as a whole number of seconds from 0 to 600)", JSON.stringify(raw));
  }
  for (const raw of ["4", "0", "601", "1.5", ""]) {
    h.doc.el("confirm-timeout").value = raw;
    assert.equal(await page.setConfirmTimeout(), "refused: bad_request", JSON.stringify(raw));
    assert.match(h.doc.el("policy-status").textContent, /^refused: bad_request \(enter the confirmation timeout as a whole number of seconds from 5 to 600\)$/);
  }
  h.doc.el("grace").value = "700";
  h.doc.el("set-grace").click();
  h.doc.el("grace").key("Enter");
  await settle();
  assert.equal(h.sent.length, before, "nothing went to the worker");
  assert.equal(h.assertions.length, 0);
});

test("an equal value does nothing and says so", async () => {
  const h = harness({ policy: { ...FULL, presenceConfirm: true } });
  const page = await h.run();
  h.doc.el("grace").value = "30";
  assert.equal(await page.setGrace(), "unchanged");
  assert.equal(h.doc.el("policy-status").textContent, "unchanged: No new question on that tab and site after an allowed action for: already 30 s");
  h.doc.el("confirm-timeout").value = "060";
  assert.equal(await page.setConfirmTimeout(), "unchanged");
  assert.equal(h.doc.el("policy-status").textContent, "unchanged: Unanswered confirmations refused after: already 60 s");
  assert.equal(await page.setPresenceConfirm(true), "unchanged");
  assert.equal(h.doc.el("policy-status").textContent, "unchanged: Page scripts and uploads confirmed with a tap: already yes");
  assert.deepEqual(h.sent, [{ type: "policy_get" }]);
});

test("refusals: the host's restrict refusal and a failed tap are shown; the field shows the policy in force", async () => {
  const r = harness({ policy: FULL, restrict: { ok: false, code: "policy_invalid" } });
  const page = await r.run();
  r.doc.el("grace").value = "5";
  assert.equal(await page.setGrace(), "refused: policy_invalid");
  assert.equal(r.doc.el("policy-status").textContent, "refused: policy_invalid");
  assert.equal(r.doc.el("grace").value, "30");
  const t = harness({ policy: FULL, assertion: async () => { throw new DOMException("no", "NotAllowedError"); } });
  const tapPage = await t.run();
  t.doc.el("grace").value = "90";
  assert.equal(await tapPage.setGrace(), "refused: presence_refused — no authenticator answered (cancelled, timed out, or none present)");
  assert.equal(t.sent.some((m) => m.type === "presence_complete" || m.type === "policy_restrict"), false);
  assert.equal(t.doc.el("grace").value, "30");
  assert.equal(await tapPage.setPresenceConfirm(true), "done: policy_restrict", "a narrowing needs no authenticator");
});

test("one operation at a time: a pending tap blocks the new controls too", async () => {
  let release;
  const h = harness({ policy: FULL, assertion: () => new Promise((r) => { release = r; }) });
  const page = await h.run();
  h.doc.el("grace").value = "45";
  const first = page.setGrace();
  await flush();
  for (const id of ["set-grace", "set-timeout", "presence-on"]) assert.equal(h.doc.el(id).disabled, true, id);
  h.doc.el("confirm-timeout").value = "10";
  assert.equal(await page.setConfirmTimeout(), "busy");
  assert.equal(await page.setPresenceConfirm(true), "busy");
  release({ id: "c" });
  assert.equal(await first, "done: policy.widen");
  assert.equal(h.sent.some((m) => m.type === "policy_restrict"), false);
});

test("a new operation replaces the last outcome at once (a stale 'done' never stands for it)", async () => {
  let release;
  const h = harness({ restrict: new Promise((r) => { release = r; }) });
  await h.run();
  h.doc.el("policy-status").textContent = "done: policy.widen";
  h.doc.el("restrict-eval").disabled = false;
  h.doc.el("restrict-eval").click();
  assert.equal(h.doc.el("policy-status").textContent, "working…", "set synchronously by the click");
  release({ ok: true });
  await flush(); await flush(); await flush();
  assert.equal(h.doc.el("policy-status").textContent, "done: policy_restrict");
});

test("the outcome shows only after the re-render: a value typed after 'done' stays, and the page is busy until then", async () => {
  // The options page once said "done" and then re-rendered: the late policy_get answer
  // overwrote a number typed in between, so the next set read the old value back.
  let answerGet = null;
  const h = harness({ policy: FULL });
  const api = {
    sendMessage: (m) => (m.type === "policy_get" && answerGet !== null ? new Promise((r) => { answerGet.push(r); }) : h.api.sendMessage(m)),
    getAssertion: h.api.getAssertion,
  };
  const page = await runPolicyPage({ doc: h.doc, api });
  answerGet = [];
  h.doc.el("grace").value = "10";
  const narrowing = page.setGrace();
  for (let i = 0; i < 5 && answerGet.length === 0; i++) await flush();
  assert.equal(answerGet.length, 1, "the re-render's policy_get is in flight");
  assert.equal(h.doc.el("policy-status").textContent, "working…", "no outcome before the re-render");
  assert.equal(h.doc.el("set-timeout").disabled, true, "still busy");
  assert.equal(await page.setConfirmTimeout(), "busy");
  const pending = answerGet;
  answerGet = null;
  pending[0](await h.api.sendMessage({ type: "policy_get" }));
  assert.equal(await narrowing, "done: policy_restrict");
  assert.equal(h.doc.el("policy-status").textContent, "done: policy_restrict");
  assert.equal(h.doc.el("grace").value, "10");
  assert.equal(h.doc.el("set-timeout").disabled, false);
  // Typed after "done": nothing re-renders over it any more.
  h.doc.el("confirm-timeout").value = "20";
  await flush(); await flush();
  assert.equal(h.doc.el("confirm-timeout").value, "20");
  assert.equal(await page.setConfirmTimeout(), "done: policy_restrict");
});

test("closeTabsOnSessionEnd: on is a free restrict, off (keep orphans) is a tap", async () => {
  const h = harness({ policy: { ...FULL, closeTabsOnSessionEnd: false } });
  const page = await h.run();
  assert.equal(h.doc.el("close-tabs-off").disabled, true, "already keeping orphans");
  h.doc.el("close-tabs-on").click();
  await settle();
  assert.deepEqual(h.sent[1], { type: "policy_restrict", key: "closeTabsOnSessionEnd", value: true });
  assert.equal(h.assertions.length, 0);
  assert.equal(h.doc.el("close-tabs-on").disabled, true);
  h.doc.el("close-tabs-off").click();
  await settle();
  assert.deepEqual(h.sent[3], { type: "presence_begin", action: "policy.widen", detail: "{\"closeTabsOnSessionEnd\":false}" });
  assert.equal(h.assertions.length, 1);
  assert.equal(await page.setCloseTabsOnSessionEnd(false), "unchanged");
});

test("dialogArming: on is a tap (a widening), off is a free restrict", async () => {
  const h = harness({ policy: { ...FULL, dialogArming: false } });
  const page = await h.run();
  assert.equal(h.doc.el("dialog-arming-off").disabled, true, "already off");
  h.doc.el("dialog-arming-on").click();
  await settle();
  assert.deepEqual(h.sent[1], { type: "presence_begin", action: "policy.widen", detail: "{\"dialogArming\":true}" });
  assert.equal(h.assertions.length, 1);
  assert.equal(h.doc.el("dialog-arming-on").disabled, true);
  h.doc.el("dialog-arming-off").click();
  await settle();
  assert.deepEqual(h.sent.at(-2), { type: "policy_restrict", key: "dialogArming", value: false });
  assert.equal(h.assertions.length, 1, "turning it off needs no tap");
  assert.equal(await page.setDialogArming(false), "unchanged");
});

test("pageFetch: on is a tap (a widening), off is a free restrict", async () => {
  const h = harness({ policy: { ...FULL, pageFetch: false } });
  await h.run();
  assert.equal(h.doc.el("restrict-fetch").disabled, true, "already off");
  h.doc.el("enable-fetch").click();
  await settle();
  assert.deepEqual(h.sent[1], { type: "presence_begin", action: "policy.widen", detail: "{\"pageFetch\":true}" });
  assert.equal(h.assertions.length, 1);
  assert.equal(h.doc.el("enable-fetch").disabled, true);
  h.doc.el("restrict-fetch").click();
  await settle();
  assert.deepEqual(h.sent.at(-2), { type: "policy_restrict", key: "pageFetch", value: false });
  assert.equal(h.assertions.length, 1, "turning it off needs no tap");
});

test("consoleCapture / networkCapture: on is a tap (a widening), off is a free restrict", async () => {
  for (const [key, on, off] of [["consoleCapture", "console-capture-on", "console-capture-off"], ["networkCapture", "network-capture-on", "network-capture-off"]]) {
    const h = harness({ policy: { ...FULL, [key]: false } });
    await h.run();
    assert.equal(h.doc.el(off).disabled, true, "already off");
    h.doc.el(on).click();
    await settle();
    assert.deepEqual(h.sent[1], { type: "presence_begin", action: "policy.widen", detail: JSON.stringify({ [key]: true }) });
    assert.equal(h.assertions.length, 1);
    assert.equal(h.doc.el(on).disabled, true);
    h.doc.el(off).click();
    await settle();
    assert.deepEqual(h.sent.at(-2), { type: "policy_restrict", key, value: false });
    assert.equal(h.assertions.length, 1, "turning it off needs no tap");
  }
});

test("provenance: towards strict is a free restrict, towards off a tap", async () => {
  const h = harness({ policy: { ...FULL, provenance: "confirm" } });
  const page = await h.run();
  assert.equal(h.doc.el("provenance-confirm").disabled, true, "already confirm");
  h.doc.el("provenance-strict").click();
  await settle();
  assert.deepEqual(h.sent.at(-2), { type: "policy_restrict", key: "provenance", value: "strict" });
  assert.equal(h.assertions.length, 0, "tightening needs no tap");
  h.doc.el("provenance-off").click();
  await settle();
  assert.ok(h.sent.some((m) => m.type === "presence_begin" && m.detail === "{\"provenance\":\"off\"}"));
  assert.equal(h.assertions.length, 1, "loosening is a tap");
  assert.equal(await page.setProvenance("off"), "unchanged");
});

test("a refusal is said under the control that asked, with what to do about it", async () => {
  const h = harness({ begin: { ok: false, code: "presence_refused", reason: "counter_not_increased" } });
  await h.run();
  const moved = [];
  const group = { nextSibling: null, after: (box) => { moved.push(box.id); group.nextSibling = box; } };
  h.doc.el("enable-eval").closest = (sel) => (sel.includes(".buttons") ? group : null);
  h.doc.el("enable-eval").click();
  for (let i = 0; i < 6; i += 1) await flush();
  assert.deepEqual(moved, ["policy-feedback"], "the outcome moved under the asking control");
  // The host's reason for the person, in words, next to the control (never a counter value).
  assert.match(h.doc.el("policy-status").textContent, /^refused: presence_refused — this authenticator's sign counter did not increase \(a cloned key\?\)/);
  assert.match(h.doc.el("policy-hint").textContent, /did not prove presence/);
  h.doc.el("origin").value = "not a site";
  h.doc.el("approve-origin").click();
  await flush();
  assert.match(h.doc.el("policy-hint").textContent, /malformed/);
});

test("a subdomain approval is listed in plain words beside its pattern; one over a public suffix says it approves nothing", async () => {
  const h = harness({ policy: { origins: ["https://*.example.com", "https://*.github.io", "https://a.test"], eval: false } });
  await h.run();
  const [wild, refused, exact] = h.doc.el("sites-list").children;
  assert.equal(wild.className, "wildcard");
  assert.equal(wild.children[0].children[0].textContent, "example.com and every subdomain (https)");
  assert.equal(wild.children[0].children[2].textContent, "https://*.example.com");
  assert.equal(refused.className, "refused");
  assert.match(refused.textContent, /refused, approves nothing: github\.io is a public suffix/);
  assert.equal(exact.children[0].textContent, "https://a.test");
  // Removing the wildcard is a free narrowing.
  h.doc.el("sites-list").querySelectorAll("button")[0].click();
  await flush(); await flush();
  assert.deepEqual(h.sent.find((m) => m.type === "policy_restrict"), { type: "policy_restrict", key: "origins", value: ["https://*.github.io", "https://a.test"] });
  assert.equal(h.sent.some((m) => m.type === "presence_begin"), false);
});

test("approving a subdomain wildcard is a tap over the normalised entry; a wildcard over a suffix, a bare * or a mid-label * is refused and nothing is sent", async () => {
  const h = harness();
  const page = await h.run();
  h.doc.el("origin").value = "HTTPS://*.Example.COM:443";
  assert.equal(await page.approveOrigin(), "done: policy.widen");
  assert.equal(h.sent.find((m) => m.type === "presence_begin").detail, "{\"origins\":[\"https://a.test\",\"https://*.example.com\"]}");
  const before = h.sent.length;
  for (const [raw, why] of [["https://*.com", /com is a public suffix/], ["https://*.co.uk", /public suffix/], ["https://*.github.io", /public suffix/],
    ["*", /whole leftmost label/], ["https://*", /whole leftmost label/], ["https://*.*.example.com", /whole leftmost label/], ["https://a*.example.com", /whole leftmost label/],
    ["https://*.amazonaws.com", /holds one/]]) {
    h.doc.el("origin").value = raw;
    assert.equal(await page.approveOrigin(), "refused: policy_invalid", raw);
    assert.match(h.doc.el("policy-status").textContent, why, raw);
  }
  assert.equal(h.sent.length, before, "nothing sent for a refused wildcard");
  // A site under the approved wildcard is already approved: nothing to sign.
  h.doc.el("origin").value = "https://shop.example.com";
  assert.equal(await page.approveOrigin(), "already approved");
  assert.match(h.doc.el("policy-status").textContent, /under example\.com and every subdomain/);
  h.doc.el("origin").value = "https://evilexample.com";
  assert.equal(await page.approveOrigin(), "done: policy.widen");
});
