// keyboard.js — trusted keyboard input through Chrome's debugger (events the page sees as the
// person's own): the key table that
// turns a key name or chord ("Enter", "Shift+Tab", "Mod+A", "F5", "a") into CDP
// Input.dispatchKeyEvent parameters (key, code, windowsVirtualKeyCode, modifiers, text), and the
// one insert flow page_type and page_fill's insertText share (page/actions.js focuses and checks
// the node that really has focus, CDP Input.insertText types, the page reads back whether it
// took). Pure: no chrome; the debugger and the page runner are passed in. It must never type
// into a node the page side did not check at that moment, never put what is typed into an
// error, and never accept a key it cannot describe exactly (bad_request instead).

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";

/** Longest text page_type inserts in one call. */
export const MAX_TYPE_CHARS = 100_000;
/** Most keys in one page_keys call, and the longest key name. */
export const MAX_KEYS = 50;
const MAX_KEY_NAME = 40;

/** CDP Input modifier bits. */
const BITS = Object.freeze({ Alt: 1, Control: 2, Meta: 4, Shift: 8 });
/** The modifier keys themselves (`physical` is the DOM code): pressed before the key, released after it. */
const MODIFIER_KEYS = Object.freeze({
  Alt: { key: "Alt", physical: "AltLeft", vk: 18 },
  Control: { key: "Control", physical: "ControlLeft", vk: 17 },
  Meta: { key: "Meta", physical: "MetaLeft", vk: 91 },
  Shift: { key: "Shift", physical: "ShiftLeft", vk: 16 },
});

/**
 * Named keys: the DOM `key`, its DOM code (`physical`), its Windows virtual key code, and the text it types
 * when no Control/Meta/Alt is held. A Map, so "constructor" is not a key.
 * @type {ReadonlyMap<string, {key: string, physical: string, vk: number, text?: string}>}
 */
export const NAMED_KEYS = new Map(/** @type {Array<[string, {key: string, physical: string, vk: number, text?: string}]>} */ ([
  ["Enter", { key: "Enter", physical: "Enter", vk: 13, text: "\r" }],
  ["Tab", { key: "Tab", physical: "Tab", vk: 9 }],
  ["Backspace", { key: "Backspace", physical: "Backspace", vk: 8 }],
  ["Delete", { key: "Delete", physical: "Delete", vk: 46 }],
  ["Escape", { key: "Escape", physical: "Escape", vk: 27 }],
  ["Space", { key: " ", physical: "Space", vk: 32, text: " " }],
  ["Insert", { key: "Insert", physical: "Insert", vk: 45 }],
  ["Home", { key: "Home", physical: "Home", vk: 36 }],
  ["End", { key: "End", physical: "End", vk: 35 }],
  ["PageUp", { key: "PageUp", physical: "PageUp", vk: 33 }],
  ["PageDown", { key: "PageDown", physical: "PageDown", vk: 34 }],
  ["ArrowLeft", { key: "ArrowLeft", physical: "ArrowLeft", vk: 37 }],
  ["ArrowUp", { key: "ArrowUp", physical: "ArrowUp", vk: 38 }],
  ["ArrowRight", { key: "ArrowRight", physical: "ArrowRight", vk: 39 }],
  ["ArrowDown", { key: "ArrowDown", physical: "ArrowDown", vk: 40 }],
  ...Array.from({ length: 12 }, (_, i) => /** @type {[string, {key: string, physical: string, vk: number, text?: string}]} */ (
    [`F${i + 1}`, { key: `F${i + 1}`, physical: `F${i + 1}`, vk: 112 + i }])),
]));

/** US-layout punctuation: the character, its key's code and virtual key code. */
const PUNCTUATION = new Map(/** @type {Array<[string, [string, number]]>} */ ([
  [" ", ["Space", 32]], ["-", ["Minus", 189]], ["_", ["Minus", 189]], ["=", ["Equal", 187]], ["+", ["Equal", 187]],
  ["[", ["BracketLeft", 219]], ["{", ["BracketLeft", 219]], ["]", ["BracketRight", 221]], ["}", ["BracketRight", 221]],
  ["\\", ["Backslash", 220]], ["|", ["Backslash", 220]], [";", ["Semicolon", 186]], [":", ["Semicolon", 186]],
  ["'", ["Quote", 222]], ['"', ["Quote", 222]], [",", ["Comma", 188]], ["<", ["Comma", 188]],
  [".", ["Period", 190]], [">", ["Period", 190]], ["/", ["Slash", 191]], ["?", ["Slash", 191]],
  ["`", ["Backquote", 192]], ["~", ["Backquote", 192]],
  ["!", ["Digit1", 49]], ["@", ["Digit2", 50]], ["#", ["Digit3", 51]], ["$", ["Digit4", 52]], ["%", ["Digit5", 53]],
  ["^", ["Digit6", 54]], ["&", ["Digit7", 55]], ["*", ["Digit8", 56]], ["(", ["Digit9", 57]], [")", ["Digit0", 48]],
]));

/** macOS editing commands Chrome only runs when asked (Meta chords do not map to them there). */
const MAC_COMMANDS = new Map([["a", "selectAll"], ["c", "copy"], ["x", "cut"], ["v", "paste"], ["z", "undo"]]);

/**
 * One key of a page_keys call, parsed.
 * @typedef {object} Key
 * @property {string} name the chord as normalised ("Control+a", "Shift+Tab", "Enter")
 * @property {string} key DOM key
 * @property {string} code DOM code ("" for a character with no US key)
 * @property {number} vk Windows virtual key code (0 when none)
 * @property {string[]} held the modifier names held (Mod resolved), in press order
 * @property {number} modifiers CDP modifier bits
 * @property {string} [text] what the key types (absent with Control/Meta/Alt or for a non-typing key)
 * @property {string[]} [commands] editor commands (macOS Meta chords)
 */

const bad = (/** @type {string} */ why) => new BridgeError(CODE.BAD_REQUEST,
  `${why}; a key is a name (Enter, Tab, Escape, Backspace, Delete, Space, Home, End, PageUp, PageDown, ` +
  "ArrowLeft/Up/Right/Down, Insert, F1-F12) or one character, optionally after modifiers: \"Shift+Tab\", \"Mod+A\" (Mod is Meta on macOS, Control elsewhere)");

/**
 * Parse one key or chord.
 * @param {unknown} spec
 * @param {boolean} mac
 * @returns {Key}
 */
export function parseKey(spec, mac) {
  if (typeof spec !== "string" || spec.length === 0 || spec.length > MAX_KEY_NAME) throw bad("each key must be a non-empty string of at most 40 characters");
  let parts;
  if (spec === "+") parts = ["+"];
  else if (spec.endsWith("++")) parts = [...spec.slice(0, -2).split("+"), "+"];
  else parts = spec.split("+");
  if (parts.some((p) => p === "")) throw bad(`${JSON.stringify(spec)} is not a key`);
  const main = /** @type {string} */ (parts.pop());
  /** @type {string[]} */
  const held = [];
  for (const m of parts) {
    const name = m === "Mod" ? (mac ? "Meta" : "Control") : m;
    if (!Object.hasOwn(BITS, name)) throw bad(`${JSON.stringify(m)} is not a modifier (Alt, Control, Meta, Shift, Mod)`);
    if (held.includes(name)) throw bad(`${JSON.stringify(spec)} names ${name} twice`);
    held.push(name);
  }
  const modifiers = held.reduce((bits, n) => bits | BITS[/** @type {keyof typeof BITS} */ (n)], 0);
  const shift = held.includes("Shift");
  const chord = held.includes("Control") || held.includes("Meta") || held.includes("Alt");
  /** @type {{key: string, physical: string, vk: number, text?: string}} */
  let k;
  const named = NAMED_KEYS.get(main);
  const chars = [...main];
  if (named !== undefined) k = { ...named };
  else if (chars.length === 1 && /^[A-Za-z]$/.test(main)) {
    const upper = main.toUpperCase();
    const ch = shift || (!chord && main === upper) ? upper : main.toLowerCase();
    k = { key: ch, physical: `Key${upper}`, vk: upper.charCodeAt(0), text: ch };
  } else if (chars.length === 1 && /^[0-9]$/.test(main)) {
    k = { key: main, physical: `Digit${main}`, vk: main.charCodeAt(0), text: main };
  } else if (chars.length === 1 && PUNCTUATION.has(main)) {
    const [code, vk] = /** @type {[string, number]} */ (PUNCTUATION.get(main));
    k = { key: main, physical: code, vk, text: main };
  } else if (chars.length === 1 && !/[\p{Cc}\p{Cf}\p{Z}]/u.test(main) && main !== "\u{FFFD}") {
    k = { key: main, physical: "", vk: 0, text: main };
  } else if (Object.hasOwn(MODIFIER_KEYS, main)) {
    throw bad(`${JSON.stringify(spec)} is only a modifier; hold it with a key ("Shift+Tab")`);
  } else {
    throw bad(`${JSON.stringify(main)} is not a key name`);
  }
  const name = [...held, main].join("+");
  /** @type {Key} */
  const out = { name, key: k.key, code: k.physical, vk: k.vk, held, modifiers };
  if (k.text !== undefined && !chord) out.text = k.text;
  const command = mac && held.includes("Meta") && !held.includes("Control") && !held.includes("Alt") ? MAC_COMMANDS.get(k.key.toLowerCase()) : undefined;
  if (command !== undefined) out.commands = [command === "undo" && shift ? "redo" : command];
  return out;
}

/**
 * A page_keys `keys` argument: one key or a list of at most MAX_KEYS.
 * @param {unknown} keys
 * @param {boolean} mac
 * @returns {Key[]}
 */
export function argKeys(keys, mac) {
  const list = typeof keys === "string" ? [keys] : keys;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_KEYS) {
    throw new BridgeError(CODE.BAD_REQUEST, `keys must be a key ("Enter", "Mod+A") or a list of 1 to ${MAX_KEYS} of them`);
  }
  return list.map((k) => parseKey(k, mac));
}

/**
 * The CDP Input.dispatchKeyEvent parameters of one key: each modifier down (the bits held so
 * far), the key down (type "keyDown" when it types text, else "rawKeyDown") and up, the
 * modifiers up in reverse.
 * @param {Key} k
 * @returns {Array<Record<string, unknown>>}
 */
export function keyEvents(k) {
  /** @type {Array<Record<string, unknown>>} */
  const events = [];
  let bits = 0;
  for (const m of k.held) {
    const mk = MODIFIER_KEYS[/** @type {keyof typeof MODIFIER_KEYS} */ (m)];
    bits |= BITS[/** @type {keyof typeof BITS} */ (m)];
    events.push({ type: "rawKeyDown", key: mk.key, code: mk.physical, windowsVirtualKeyCode: mk.vk, nativeVirtualKeyCode: mk.vk, modifiers: bits, location: 1 });
  }
  const base = { key: k.key, code: k.code, windowsVirtualKeyCode: k.vk, nativeVirtualKeyCode: k.vk, modifiers: k.modifiers };
  events.push({
    type: k.text !== undefined ? "keyDown" : "rawKeyDown", ...base,
    ...(k.text !== undefined ? { text: k.text, unmodifiedText: k.text } : {}),
    ...(k.commands !== undefined ? { commands: k.commands } : {}),
  });
  events.push({ type: "keyUp", ...base });
  for (const m of [...k.held].reverse()) {
    const mk = MODIFIER_KEYS[/** @type {keyof typeof MODIFIER_KEYS} */ (m)];
    bits &= ~BITS[/** @type {keyof typeof BITS} */ (m)];
    events.push({ type: "keyUp", key: mk.key, code: mk.physical, windowsVirtualKeyCode: mk.vk, nativeVirtualKeyCode: mk.vk, modifiers: bits, location: 1 });
  }
  return events;
}

/** What a key does to the focused element: "Enter" (submits or follows), " " (activates a button), or null. @param {Key} k */
export const activation = (k) => (k.key === "Enter" ? "Enter" : k.key === " " && k.text !== undefined ? " " : null);

/** Whether a key puts content into the focused node (typing or pasting): the password guard applies. @param {Key} k */
export const putsText = (k) => (k.text !== undefined && k.key !== "Enter") || (k.key.toLowerCase() === "v" && k.modifiers !== 0 && (k.modifiers & BITS.Shift) === 0) || (k.key === "Insert" && (k.modifiers & BITS.Shift) !== 0);

/**
 * Insert `text` into the node that has focus after focusing `a.target` (when given), through
 * CDP Input.insertText. The page side (page/actions.js "focus" with `typing`) checks that node at
 * that moment — not a password field unless `a.allowPassword`, a text field, not in a frame of
 * another site — and arms a one-call guard that cancels any insertion landing anywhere else;
 * "inputResult" then disarms it and reads back, inside the page, whether the text took.
 * `a.arm` is "insert" (at the caret) or "replace" (the node's content selected first, compared
 * with `text` after). Empty text with "replace" deletes the selection (Backspace).
 * @param {{cdp: import("./debugger.js").DebuggerManager,
 *   page: (ctx: any, tabId: number, op: string, a: Record<string, unknown>) => Promise<Record<string, any>>}} tools
 * @param {import("../handlers/support.js").Ctx} ctx
 * @param {number} tabId
 * @param {Record<string, unknown> & {origin: string, arm: "insert" | "replace"}} a
 * @param {string} text
 * @returns {Promise<{focus: Record<string, any>, applied: "yes" | "no" | "unclear", length: number}>}
 */
export async function insertThrough({ cdp, page }, ctx, tabId, a, text) {
  await cdp.ensure(ctx, tabId);
  const focus = await page(ctx, tabId, "focus", { ...a, typing: true, expect: a.arm === "replace" ? text : undefined, insert: a.arm === "insert" ? text : undefined });
  try {
    if (text === "") {
      for (const ev of keyEvents(parseKey("Backspace", false))) await cdp.send(ctx, tabId, "Input.dispatchKeyEvent", ev, "press Backspace");
    } else {
      await cdp.send(ctx, tabId, "Input.insertText", { text }, "insert the text");
    }
  } catch (err) {
    // Disarm the page's guard without waiting on a page that may be blocked (a dialog); its
    // own timer removes it otherwise.
    page(ctx, tabId, "inputResult", { origin: a.origin }).catch(() => {});
    throw err;
  }
  /** @type {Record<string, any> | null} */
  const result = await page(ctx, tabId, "inputResult", { origin: a.origin }).catch(() => null);
  if (result?.moved === true) {
    throw new BridgeError(CODE.POLICY_DENIED, "the page moved the focus while the text was typed, so it may have gone into another field; look at the page again before typing more");
  }
  if (result?.blocked === true) {
    throw new BridgeError(CODE.POLICY_DENIED, "the focus moved to another field (or a password field) while typing; nothing was typed. Look at the page again");
  }
  const applied = result?.applied === "yes" || result?.applied === "no" ? result.applied : "unclear";
  return { focus, applied, length: Number.isSafeInteger(result?.length) ? Number(result?.length) : 0 };
}
