import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createGrace } from "../../extension/worker/grace.js";
import { MAX_KEYS, NAMED_KEYS, activation, argKeys, keyEvents, parseKey, putsText } from "../../extension/worker/keyboard.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { keyboardHandlers } from "../../extension/handlers/keyboard.js";
import { fakeTimers } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const ORIGIN = "http://127.0.0.1:8000";
const POLICY = { origins: [ORIGIN], confirm: ["link_click", "press", "select", "submit", "tab_close"], clickGraceSeconds: 0, confirmTimeoutSeconds: 30 };
const S1 = { session: "s1", policy: parsePolicy(POLICY), deadline: Date.now() + 60_000 };
const noPress = { ...S1, policy: parsePolicy({ ...POLICY, confirm: ["link_click", "submit"] }) };

const pick = (k) => ({ key: k.key, code: k.code, vk: k.vk, modifiers: k.modifiers, text: k.text });

test("the key table: named keys carry DOM key, code, virtual key code and the text they type", () => {
  assert.deepEqual(pick(parseKey("Enter", false)), { key: "Enter", code: "Enter", vk: 13, modifiers: 0, text: "\r" });
  assert.deepEqual(pick(parseKey("Tab", false)), { key: "Tab", code: "Tab", vk: 9, modifiers: 0, text: undefined });
  assert.deepEqual(pick(parseKey("Backspace", false)), { key: "Backspace", code: "Backspace", vk: 8, modifiers: 0, text: undefined });
  assert.deepEqual(pick(parseKey("Escape", false)), { key: "Escape", code: "Escape", vk: 27, modifiers: 0, text: undefined });
  assert.deepEqual(pick(parseKey("Space", false)), { key: " ", code: "Space", vk: 32, modifiers: 0, text: " " });
  assert.deepEqual(pick(parseKey("ArrowDown", false)), { key: "ArrowDown", code: "ArrowDown", vk: 40, modifiers: 0, text: undefined });
  assert.deepEqual(pick(parseKey("F5", false)), { key: "F5", code: "F5", vk: 116, modifiers: 0, text: undefined });
  assert.deepEqual(pick(parseKey("F12", false)), { key: "F12", code: "F12", vk: 123, modifiers: 0, text: undefined });
  for (const [name, k] of NAMED_KEYS) assert.ok(k.vk > 0 && k.physical !== "", name);
});

test("characters: letters by case and Shift, digits, US punctuation, other characters without a code", () => {
  assert.deepEqual(pick(parseKey("a", false)), { key: "a", code: "KeyA", vk: 65, modifiers: 0, text: "a" });
  assert.deepEqual(pick(parseKey("A", false)), { key: "A", code: "KeyA", vk: 65, modifiers: 0, text: "A" });
  assert.deepEqual(pick(parseKey("Shift+a", false)), { key: "A", code: "KeyA", vk: 65, modifiers: 8, text: "A" });
  assert.deepEqual(pick(parseKey("7", false)), { key: "7", code: "Digit7", vk: 55, modifiers: 0, text: "7" });
  assert.deepEqual(pick(parseKey("?", false)), { key: "?", code: "Slash", vk: 191, modifiers: 0, text: "?" });
  assert.deepEqual(pick(parseKey("+", false)), { key: "+", code: "Equal", vk: 187, modifiers: 0, text: "+" });
  assert.deepEqual(pick(parseKey("Control++", false)), { key: "+", code: "Equal", vk: 187, modifiers: 2, text: undefined });
  assert.deepEqual(pick(parseKey("é", false)), { key: "é", code: "", vk: 0, modifiers: 0, text: "é" });
});

test("chords: Mod is Control off macOS and Meta on it; a chord with Control/Meta/Alt types no text", () => {
  const linux = parseKey("Mod+A", false);
  assert.deepEqual(pick(linux), { key: "a", code: "KeyA", vk: 65, modifiers: 2, text: undefined });
  assert.equal(linux.name, "Control+A");
  assert.equal(linux.commands, undefined);
  const mac = parseKey("Mod+A", true);
  assert.deepEqual(pick(mac), { key: "a", code: "KeyA", vk: 65, modifiers: 4, text: undefined });
  assert.deepEqual(mac.commands, ["selectAll"]);
  assert.deepEqual(parseKey("Mod+Shift+z", true).commands, ["redo"]);
  assert.deepEqual(pick(parseKey("Shift+Tab", false)), { key: "Tab", code: "Tab", vk: 9, modifiers: 8, text: undefined });
  assert.equal(parseKey("Control+Alt+Shift+Meta+x", false).modifiers, 15);
});

test("keyEvents: modifiers down in order with the bits so far, the key down and up, modifiers up in reverse", () => {
  const events = keyEvents(parseKey("Control+Shift+ArrowLeft", false));
  assert.deepEqual(events.map((e) => [e.type, e.key, e.modifiers]), [
    ["rawKeyDown", "Control", 2], ["rawKeyDown", "Shift", 10], ["rawKeyDown", "ArrowLeft", 10],
    ["keyUp", "ArrowLeft", 10], ["keyUp", "Shift", 2], ["keyUp", "Control", 0],
  ]);
  assert.ok(events.every((e) => Number.isInteger(e.windowsVirtualKeyCode) && typeof e.code === "string"));
  // A key that types: keyDown with its text (Chrome then fires keypress and input).
  const a = keyEvents(parseKey("a", false));
  assert.deepEqual(a.map((e) => [e.type, e.text]), [["keyDown", "a"], ["keyUp", undefined]]);
  assert.deepEqual(keyEvents(parseKey("Enter", false))[0].text, "\r");
});

test("bad keys are bad_request, with a hint listing what a key is", () => {
  for (const bad of ["", "Enterr", "Hyper+A", "Shift+", "+a+", "Control+Control+a", "Shift", "Control", "ab", "\n", "\u200b", 7, null, "x".repeat(41)]) {
    assert.throws(() => parseKey(bad, false), (e) => e instanceof BridgeError && e.code === "bad_request" && /Mod\+A/.test(e.message), String(bad));
  }
  assert.throws(() => argKeys([], false), (e) => e.code === "bad_request");
  assert.throws(() => argKeys(Array(MAX_KEYS + 1).fill("a"), false), (e) => e.code === "bad_request");
  assert.equal(argKeys("Enter", false).length, 1);
  assert.equal(argKeys(Array(MAX_KEYS).fill("a"), false).length, MAX_KEYS);
});

test("what a key does: Enter and Space activate; typing keys and pastes meet the password guard", () => {
  assert.equal(activation(parseKey("Enter", false)), "Enter");
  assert.equal(activation(parseKey("Control+Enter", false)), "Enter");
  assert.equal(activation(parseKey("Space", false)), " ");
  assert.equal(activation(parseKey("Tab", false)), null);
  assert.ok(putsText(parseKey("a", false)));
  assert.ok(putsText(parseKey("Mod+V", false)));
  assert.ok(putsText(parseKey("Shift+Insert", false)));
  assert.ok(!putsText(parseKey("Enter", false)));
  assert.ok(!putsText(parseKey("Mod+A", false)));
  assert.ok(!putsText(parseKey("Backspace", false)));
});

/**
 * page_keys / page_type over fakes: `focus` answers the page's "focus" op in order (the last
 * repeats); `sent` records every CDP command, `ops` every page op.
 */
function harness({ focus = [], decision = "allow", result = { applied: "yes", length: 3 } } = {}) {
  const ownership = createOwnership();
  const tabs = new Map();
  const calls = { confirm: [], sent: [], ops: [] };
  tabs.set(1, { id: 1, url: `${ORIGIN}/a`, status: "complete" });
  ownership.claim("s1", 1);
  const browser = {
    getTab: async (id) => ({ ...tabs.get(id) }),
    executeFiles: async () => {},
    executeScriptArgs: async (_tabId, _func, [op, a]) => {
      calls.ops.push([op, a]);
      // The wait before an element action (handlers/ready.js): the element is actionable at once.
      if (op === "actionable") return [{ result: { ok: true } }];
      if (op === "inputResult") return [{ result }];
      const answer = focus.length > 1 ? focus.shift() : focus[0];
      return [{ result: answer }];
    },
  };
  const cdp = {
    ensure: async () => {},
    send: async (_ctx, tabId, method, params) => {
      calls.sent.push([tabId, method, params]);
      return {};
    },
  };
  const ensureOrigin = async (url) => new URL(url).origin;
  const confirm = async (req) => { calls.confirm.push(req); return decision; };
  const deps = { browser, ownership, loads: createLoadWatcher(fakeTimers()), ensureOrigin, confirm, grace: createGrace(), sleep: async () => {}, cdp };
  const routes = new Map(keyboardHandlers(deps));
  return { call: (action, args, ctx = S1) => routes.get(action)(args, ctx), calls };
}
const field = (over = {}) => ({ desc: 'textbox "Query"', kind: "plain", url: `${ORIGIN}/a`, inFrame: false, ...over });
const keysSent = (h) => h.calls.sent.filter(([, m]) => m === "Input.dispatchKeyEvent").map(([, , p]) => `${p.type}:${p.key}`);

test("page_keys asks under the press confirm, then sends each key's events", async () => {
  const h = harness({ focus: [field()] });
  const r = await h.call("page_keys", { tabId: 1, selector: "#q", keys: ["Shift+Tab", "a"] });
  assert.deepEqual(r, { pressed: 2, keys: ["Shift+Tab", "a"], navigated: false, url: `${ORIGIN}/a` });
  assert.equal(h.calls.confirm.length, 1);
  assert.match(h.calls.confirm[0].detail, /^Press Shift\+Tab, a on textbox "Query" on http:\/\/127\.0\.0\.1:8000\?$/);
  assert.deepEqual(keysSent(h), ["rawKeyDown:Shift", "rawKeyDown:Tab", "keyUp:Tab", "keyUp:Shift", "keyDown:a", "keyUp:a"]);
  // The focused node is looked at before every key (the password guard for typing keys).
  const looks = h.calls.ops.filter(([op]) => op === "focus").map(([, a]) => a.guardPassword);
  assert.deepEqual(looks, [false, true]);
  const denied = harness({ focus: [field()], decision: "deny" });
  await assert.rejects(denied.call("page_keys", { tabId: 1, keys: "Escape" }), (e) => e.code === "confirm_denied");
  assert.deepEqual(denied.calls.sent, []);
});

test("page_keys: Enter on a submit asks as page_click does even when presses are not confirmed, and ends the keys", async () => {
  const submit = field({ kind: "submit" });
  const denied = harness({ focus: [submit], decision: "deny" });
  await assert.rejects(denied.call("page_keys", { tabId: 1, selector: "#q", keys: "Enter" }, noPress), (e) => e.code === "confirm_denied");
  assert.match(denied.calls.confirm[0].detail, /^Press Enter on textbox "Query" on http:\/\/127\.0\.0\.1:8000\? This submits a form\.$/);
  assert.deepEqual(denied.calls.sent, []);
  // Reached by Tab in the middle of a sequence: asked when reached; a key after it is refused.
  const later = harness({ focus: [field(), submit] });
  await assert.rejects(later.call("page_keys", { tabId: 1, keys: ["Tab", "Enter", "a"] }, noPress),
    (e) => e.code === "bad_request" && /end the keys there/.test(e.message));
  assert.deepEqual(keysSent(later), ["rawKeyDown:Tab", "keyUp:Tab"]);
  assert.deepEqual(later.calls.confirm, []);
  // The focus changes while the person looks: refused, Enter not sent.
  const swapped = harness({ focus: [submit, field({ kind: "link", desc: 'link "Ad"' })] });
  await assert.rejects(swapped.call("page_keys", { tabId: 1, keys: "Enter" }, noPress), (e) => e.code === "policy_denied");
  assert.deepEqual(keysSent(swapped), []);
  // With presses confirmed, one question covers the press and its submit.
  const one = harness({ focus: [submit] });
  await one.call("page_keys", { tabId: 1, keys: "Enter" });
  assert.equal(one.calls.confirm.length, 1);
  assert.match(one.calls.confirm[0].detail, /The first key submits a form\.$/);
  assert.deepEqual(keysSent(one), ["keyDown:Enter", "keyUp:Enter"]);
  // Space on a plain field is just a space.
  const space = harness({ focus: [field()] });
  await space.call("page_keys", { tabId: 1, keys: "Space" }, noPress);
  assert.deepEqual(space.calls.confirm, []);
});

test("page_type: focus checked in the page, then Input.insertText; the reply never carries the text", async () => {
  const h = harness({ focus: [field({ ref: "@e4", docToken: "d1", lastRef: 4 })], result: { applied: "yes", length: 9 } });
  const r = await h.call("page_type", { tabId: 1, selector: "#q", value: "s3cret-ab" });
  assert.deepEqual(r, { typed: true, applied: "yes", length: 9, focused: 'textbox "Query"', ref: "@e4" });
  assert.ok(!JSON.stringify(r).includes("s3cret"));
  // The field named is waited on until actionable (handlers/ready.js), then focused and typed in.
  assert.deepEqual(h.calls.ops.map(([op]) => op), ["actionable", "focus", "inputResult"]);
  assert.equal(h.calls.ops[0][1].enabled, true);
  const [, a] = h.calls.ops[1];
  assert.equal(a.typing, true);
  assert.equal(a.allowPassword, false);
  assert.deepEqual(h.calls.sent.map(([, m, p]) => [m, p.text]), [["Input.insertText", "s3cret-ab"]]);
  // The page's guard cancelled the insertion (focus moved): policy_denied, without the text.
  const blocked = harness({ focus: [field()], result: { applied: "no", length: 0, blocked: true } });
  await assert.rejects(blocked.call("page_type", { tabId: 1, value: "s3cret" }),
    (e) => e.code === "policy_denied" && !e.message.includes("s3cret"));
  // The focus moved during an insertion the guard could not cancel: said, never "nothing typed".
  const moved = harness({ focus: [field()], result: { applied: "no", length: 0, moved: true } });
  await assert.rejects(moved.call("page_type", { tabId: 1, value: "s3cret" }),
    (e) => e.code === "policy_denied" && /may have gone/.test(e.message) && !/nothing was typed/.test(e.message));
  for (const bad of [{}, { value: "" }, { value: 3 }, { value: "x".repeat(100_001) }, { value: "x", selector: "#a", ref: "@e1" }]) {
    await assert.rejects(h.call("page_type", { tabId: 1, ...bad }), (e) => e.code === "bad_request", JSON.stringify(bad).slice(0, 40));
  }
});

test("page_keys: a typing key the page guard cancelled (a password field) ends in policy_denied", async () => {
  const h = harness({ focus: [field()], result: { applied: "unclear", length: 0, blocked: true } });
  await assert.rejects(h.call("page_keys", { tabId: 1, keys: ["a", "b"] }, noPress), (e) => e.code === "policy_denied" && /password/.test(e.message));
  assert.deepEqual(h.calls.ops.map(([op]) => op), ["focus", "focus", "inputResult"]);
  // Keys that type nothing need no read-back.
  const quiet = harness({ focus: [field()], result: { blocked: true } });
  await quiet.call("page_keys", { tabId: 1, keys: ["Tab", "ArrowDown"] }, noPress);
  assert.ok(!quiet.calls.ops.some(([op]) => op === "inputResult"));
});
