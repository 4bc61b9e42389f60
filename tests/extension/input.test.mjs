import { test } from "node:test";
import assert from "node:assert/strict";
import { createProvenanceGate } from "../../extension/worker/provenance-gate.js";
import { parsePolicy } from "../../extension/worker/policy.js";
import { ORIGIN, inputHarness, mouseEvents, pointAnswer } from "./helpers/input-harness.mjs";

const POLICY = { origins: [ORIGIN], confirm: ["link_click", "press", "select", "submit", "tab_close"], clickGraceSeconds: 0, confirmTimeoutSeconds: 30 };
const S1 = { session: "s1", policy: parsePolicy(POLICY), deadline: Date.now() + 60_000 };

const harness = (options = {}) => {
  const h = inputHarness(options);
  return { ...h, call: (action, args, ctx = S1) => h.call(action, args, ctx) };
};
const at = pointAnswer;

test("page_mouse: moves, presses and releases at the point, clickCount times; reports where", async () => {
  const h = harness({ points: [at()] });
  const r = await h.call("page_mouse", { tabId: 1, selector: "#go", clickCount: 2, modifiers: ["Shift"] });
  assert.deepEqual(r, { clicked: true, navigated: false, url: `${ORIGIN}/a`, x: 50, y: 20, covered: false, hitTarget: 'button "Go"', hitRef: "@e3" });
  assert.deepEqual(mouseEvents(h).map((e) => [e.type, e.clickCount ?? 0, e.modifiers]), [
    ["mouseMoved", 0, 8], ["mousePressed", 1, 8], ["mouseReleased", 1, 8], ["mousePressed", 2, 8], ["mouseReleased", 2, 8],
  ]);
  assert.ok(mouseEvents(h).every((e) => e.x === 50 && e.y === 20));
  assert.deepEqual(h.calls.confirm, []); // a plain button
});

test("page_mouse: a covered point is reported and nothing is dispatched, unless force", async () => {
  const covered = at({ covered: true, hitTarget: 'dialog "Cookie banner"', kind: "plain", hitRef: "@e9" });
  const h = harness({ points: [covered] });
  const r = await h.call("page_mouse", { tabId: 1, selector: "#go" });
  assert.equal(r.clicked, false);
  assert.equal(r.covered, true);
  assert.equal(r.hitTarget, 'dialog "Cookie banner"');
  assert.equal(r.hitRef, "@e9");
  assert.deepEqual(h.calls.sent, []);
  const forced = await h.call("page_mouse", { tabId: 1, selector: "#go", force: true });
  assert.equal(forced.clicked, true);
  assert.equal(mouseEvents(h).length, 3);
});

test("page_mouse on a submit asks the person as page_click does; a denial dispatches nothing", async () => {
  const submit = at({ kind: "submit", desc: 'button "Pay"' });
  const denied = harness({ points: [submit], decision: "deny" });
  await assert.rejects(denied.call("page_mouse", { tabId: 1, selector: "#pay" }), (e) => e.code === "confirm_denied");
  assert.match(denied.calls.confirm[0].detail, /^Click button "Pay" on http:\/\/127\.0\.0\.1:8000\? This submits a form\.$/);
  assert.equal(denied.calls.confirm[0].tool, "page_mouse");
  assert.deepEqual(denied.calls.sent, []);
  // The page swaps the target while the person looks: refused, nothing clicked.
  const swapped = harness({ points: [submit, at({ kind: "link" })] });
  await assert.rejects(swapped.call("page_mouse", { tabId: 1, selector: "#pay" }), (e) => e.code === "policy_denied");
  assert.deepEqual(swapped.calls.sent, []);
  const allowed = harness({ points: [submit] });
  assert.equal((await allowed.call("page_mouse", { tabId: 1, selector: "#pay" })).clicked, true);
  // A forced click on what covers a link: what receives the click decides.
  const overLink = harness({ points: [at({ covered: true, kind: "link", hitTarget: 'link "Ad"' })], decision: "deny" });
  await assert.rejects(overLink.call("page_mouse", { tabId: 1, selector: "#go", force: true }), (e) => e.code === "confirm_denied");
  assert.deepEqual(overLink.calls.sent, []);
});

test("page_mouse / page_hover: ownership and the origin gate first; bad arguments refused before the page", async () => {
  const h = harness({ points: [at()] });
  h.addTab(2, `${ORIGIN}/b`, "s2");
  h.addTab(3, "http://evil.test/", "s1");
  for (const tool of ["page_mouse", "page_hover"]) {
    await assert.rejects(h.call(tool, { tabId: 2, selector: "#go" }), (e) => e.code === "tab_not_owned", tool);
    await assert.rejects(h.call(tool, { tabId: 3, selector: "#go" }), (e) => e.code === "origin_not_approved", tool);
  }
  for (const args of [{ selector: "#go", button: "back" }, { selector: "#go", clickCount: 4 }, { selector: "#go", force: "yes" },
    { x: 1 }, { selector: "#go", modifiers: ["Hyper"] }, { selector: "#go", modifiers: "Shift" }, { selector: "#go", modifiers: ["constructor"] },
    { selector: "#go", modifiers: ["Alt", "Alt", "Alt", "Alt", "Alt", "Alt"] }, { selector: "#go", clickCount: 1.5 }, { selector: "#go", clickCount: "2" },
    { selector: "#go", button: ["left"] }, { selector: "#go", force: 1 }]) {
    await assert.rejects(h.call("page_mouse", { tabId: 1, ...args }), (e) => e.code === "bad_request", JSON.stringify(args));
  }
  assert.deepEqual(h.calls.ops, []);
  assert.deepEqual(h.calls.sent, []);
});

test("page_hover moves the pointer only, and says what is really there", async () => {
  const h = harness({ points: [at({ covered: true, hitTarget: 'div "overlay"' })] });
  const r = await h.call("page_hover", { tabId: 1, x: 50, y: 20 });
  assert.deepEqual(r, { hovered: true, x: 50, y: 20, covered: true, hitTarget: 'div "overlay"', hitRef: "@e3" });
  assert.deepEqual(mouseEvents(h).map((e) => e.type), ["mouseMoved"]);
  assert.deepEqual(h.calls.ops[0], ["point", { x: 50, y: 20, origin: ORIGIN, refFloor: 0 }]);
});

test("page_dialog: dismiss is free; OK on a confirm() asks first; the prompt's text is never echoed", async () => {
  const h = harness();
  await assert.rejects(h.call("page_dialog", { tabId: 1, action: "dismiss" }), (e) => e.code === "bad_request" && /no JavaScript dialog/.test(e.message));
  h.dialogs.opened(1, { type: "confirm", message: "Delete 4111 1111 1111 1111?", url: `${ORIGIN}/a` });
  assert.deepEqual(await h.call("page_dialog", { tabId: 1, action: "dismiss" }), {
    handled: true, type: "confirm", accepted: false, message: "Delete [card]?", armed: null,
    recent: [{ type: "confirm", message: "Delete [card]?", origin: ORIGIN, answered: "dismissed", by: "agent" }],
  });
  assert.deepEqual(h.calls.confirm, []);
  assert.deepEqual(h.calls.sent.at(-1), [1, "Page.handleJavaScriptDialog", { accept: false }]);
  assert.equal(h.dialogs.current(1), null);

  h.dialogs.opened(1, { type: "prompt", message: "Name?", url: `${ORIGIN}/a` });
  const r = await h.call("page_dialog", { tabId: 1, action: "accept", promptText: "Ada Lovelace" });
  assert.equal(h.calls.confirm.length, 1);
  assert.match(h.calls.confirm[0].detail, /prompt\(\) dialog of http:\/\/127\.0\.0\.1:8000: "Name\?" and answer it with 12 typed characters/);
  assert.doesNotMatch(h.calls.confirm[0].detail, /Ada/);
  assert.doesNotMatch(JSON.stringify(r), /Ada/);
  assert.deepEqual(h.calls.sent.at(-1), [1, "Page.handleJavaScriptDialog", { accept: true, promptText: "Ada Lovelace" }]);

  // Not asked: an alert's OK, a beforeunload (gated like the navigation), or when policy does not confirm submits.
  for (const [type, ctx] of [["alert", S1], ["beforeunload", S1], ["confirm", { ...S1, policy: parsePolicy({ ...POLICY, confirm: [] }) }]]) {
    h.dialogs.opened(1, { type, message: "m", url: `${ORIGIN}/a` });
    assert.equal((await h.call("page_dialog", { tabId: 1, action: "accept" }, ctx)).accepted, true, type);
  }
  assert.equal(h.calls.confirm.length, 1);
});

test("page_dialog: denied, not owned, unapproved, promptText on a non-prompt; a foreign frame's text withheld", async () => {
  const h = harness({ decision: "deny" });
  h.dialogs.opened(1, { type: "confirm", message: "Sure?", url: `${ORIGIN}/a` });
  await assert.rejects(h.call("page_dialog", { tabId: 1, action: "accept" }), (e) => e.code === "confirm_denied");
  assert.ok(h.dialogs.current(1) !== null);
  await assert.rejects(h.call("page_dialog", { tabId: 1, action: "dismiss", promptText: "x" }), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_dialog", { tabId: 1, action: "maybe" }), (e) => e.code === "bad_request");
  for (const bad of [{ action: "accept", promptText: "x".repeat(10_001) }, { action: "accept", promptText: 5 }, { action: ["accept"] }, { action: "toString" }]) {
    await assert.rejects(h.call("page_dialog", { tabId: 1, ...bad }), (e) => e.code === "bad_request", JSON.stringify(bad).slice(0, 60));
  }
  assert.equal(h.calls.confirm.length, 1, "a refused call asks nobody");
  assert.ok(h.dialogs.current(1) !== null, "and answers nothing");
  h.addTab(2, `${ORIGIN}/b`, "s2");
  h.dialogs.opened(2, { type: "alert", message: "theirs", url: `${ORIGIN}/b` });
  await assert.rejects(h.call("page_dialog", { tabId: 2, action: "dismiss" }), (e) => e.code === "tab_not_owned" && !/theirs/.test(e.message));
  h.addTab(3, "http://evil.test/", "s1");
  h.dialogs.opened(3, { type: "alert", message: "evil", url: "http://evil.test/" });
  await assert.rejects(h.call("page_dialog", { tabId: 3, action: "dismiss" }), (e) => e.code === "origin_not_approved");
  assert.deepEqual(h.calls.sent, []);
  h.dialogs.opened(1, { type: "alert", message: "from an ad frame", url: "http://ads.test/frame" });
  assert.equal((await h.call("page_dialog", { tabId: 1, action: "dismiss" })).message, "");
});

const ARMING = { ...S1, policy: parsePolicy({ ...POLICY, dialogArming: true }) };

test("page_dialog arm: refused with policy_denied while the policy does not allow arming; nothing armed", async () => {
  const h = harness();
  await assert.rejects(h.call("page_dialog", { tabId: 1, arm: "accept" }),
    (e) => e.code === "policy_denied" && /dialogArming/.test(e.message) && /tabwarden policy set dialogArming=true/.test(e.message));
  await assert.rejects(h.call("page_dialog", { tabId: 1, arm: "dismiss" }), (e) => e.code === "policy_denied");
  assert.equal(h.dialogs.armed(1), null);
  assert.deepEqual(h.calls.confirm, []);
  // Turning it off is always free, and so is looking.
  assert.deepEqual(await h.call("page_dialog", { tabId: 1, arm: "off" }), { handled: false, armed: null, recent: [] });
  assert.deepEqual(await h.call("page_dialog", { tabId: 1 }), { handled: false, armed: null, recent: [] });
});

test("page_dialog arm accept asks the person now (policy confirms submits); the armed text is never shown", async () => {
  const h = harness();
  const r = await h.call("page_dialog", { tabId: 1, arm: "accept", promptText: "secret answer" }, ARMING);
  assert.deepEqual(r, { handled: false, armed: { answer: "accept", origin: ORIGIN }, recent: [] });
  assert.equal(h.calls.confirm.length, 1);
  assert.match(h.calls.confirm[0].detail, /next dialog .* that http:\/\/127\.0\.0\.1:8000 opens on this page, answering a prompt\(\) with 13 typed characters/);
  assert.doesNotMatch(h.calls.confirm[0].detail, /secret/);
  assert.equal(h.dialogs.armed(1).promptText, "secret answer");
  // Dismiss needs nobody; not asked either when the policy does not confirm submits.
  await h.call("page_dialog", { tabId: 1, arm: "dismiss" }, ARMING);
  await h.call("page_dialog", { tabId: 1, arm: "accept" }, { ...ARMING, policy: parsePolicy({ ...POLICY, dialogArming: true, confirm: [] }) });
  assert.equal(h.calls.confirm.length, 1);
  await assert.rejects(h.call("page_dialog", { tabId: 1, arm: "dismiss", promptText: "x" }, ARMING), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_dialog", { tabId: 1, arm: "accept", action: "accept" }, ARMING), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_dialog", { tabId: 1, arm: "maybe" }, ARMING), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_dialog", { tabId: 1, arm: true }, ARMING), (e) => e.code === "bad_request");
});

test("page_dialog arm: denied arms nothing; a navigation while the person was asked arms nothing; not owned, unapproved", async () => {
  const denied = harness({ decision: "deny" });
  await assert.rejects(denied.call("page_dialog", { tabId: 1, arm: "accept" }, ARMING), (e) => e.code === "confirm_denied");
  assert.equal(denied.dialogs.armed(1), null);
  const h = harness();
  h.dialogs.setArming(1, true);
  let allow;
  const slow = harness({ decision: new Promise((r) => { allow = r; }) });
  slow.dialogs.setArming(1, true);
  const p = slow.call("page_dialog", { tabId: 1, arm: "accept" }, ARMING);
  while (slow.calls.confirm.length === 0) await new Promise((r) => setImmediate(r));
  slow.dialogs.navigated(1); // while the window is up
  allow("allow");
  await assert.rejects(p, (e) => e.code === "bad_request" && /navigated/.test(e.message));
  assert.equal(slow.dialogs.armed(1), null);
  h.addTab(2, `${ORIGIN}/b`, "s2");
  await assert.rejects(h.call("page_dialog", { tabId: 2, arm: "dismiss" }, ARMING), (e) => e.code === "tab_not_owned");
  h.addTab(3, "http://evil.test/", "s1");
  await assert.rejects(h.call("page_dialog", { tabId: 3, arm: "dismiss" }, ARMING), (e) => e.code === "origin_not_approved");
  assert.equal(h.dialogs.armed(2), null);
  assert.equal(h.dialogs.armed(3), null);
});

test("page_dialog lists recent dialogs, withholding the text of those from unapproved sites", async () => {
  const h = harness();
  h.dialogs.setArming(1, true);
  h.dialogs.opened(1, { type: "alert", message: "card 4111 1111 1111 1111", url: `${ORIGIN}/a` });
  h.dialogs.closed(1, { result: false });
  h.dialogs.opened(1, { type: "confirm", message: "ad text", url: "http://ads.test/f" });
  h.dialogs.closed(1, { result: false });
  assert.deepEqual((await h.call("page_dialog", { tabId: 1 }, ARMING)).recent, [
    { type: "alert", message: "card [card]", origin: ORIGIN, answered: "auto-dismissed", by: "tabwarden" },
    { type: "confirm", message: "", origin: "http://ads.test", answered: "auto-dismissed", by: "tabwarden" },
  ]);
});

test("page_dialog: a prompt answer from another origin's page asks once naming both (against the dialog's origin); denied, the prompt stays open", async () => {
  const lineage = { provenance: { evidence: [{ sourceOrigin: "http://evil.test", kind: "token", token: "[12 chars]", readAt: 1 }] } };
  const gate = (confirm) => createProvenanceGate({ confirm });
  const deny = harness({ decision: "deny", provenance: gate });
  deny.dialogs.opened(1, { type: "prompt", message: "Code?", url: `${ORIGIN}/a` });
  await assert.rejects(deny.call("page_dialog", { tabId: 1, action: "accept", promptText: "Zx81kq2PLmQ9", ...lineage }), (e) => e.code === "confirm_denied");
  assert.equal(deny.calls.confirm.length, 1);
  assert.match(deny.calls.confirm[0].detail, /answering it with a value that came from a page on http:\/\/evil\.test/);
  assert.doesNotMatch(deny.calls.confirm[0].detail, /Zx81/);
  assert.equal(deny.calls.sent.filter(([, m]) => m === "Page.handleJavaScriptDialog").length, 0);
  assert.notEqual(deny.dialogs.blocking(1), null);
  const allow = harness({ provenance: gate });
  allow.dialogs.opened(1, { type: "prompt", message: "Code?", url: `${ORIGIN}/a` });
  await allow.call("page_dialog", { tabId: 1, action: "accept", promptText: "Zx81kq2PLmQ9", ...lineage });
  assert.equal(allow.calls.confirm.length, 1, "the lineage window covers the submit question");
  assert.deepEqual(allow.calls.sent.at(-1), [1, "Page.handleJavaScriptDialog", { accept: true, promptText: "Zx81kq2PLmQ9" }]);
});
