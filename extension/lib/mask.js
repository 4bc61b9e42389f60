// mask.js — turns a credential-like value (a cookie, a web-storage entry) into a shape hint
// before it leaves the extension. Pure: no chrome. It must never return any character of the
// value itself: only its length and a coarse shape ("[masked: JWT]", "[masked: 32 chars, hex]").
// Every value is masked, short or plain ones too: cookies and storage entries are credentials.

/** A JWT: base64url header starting `{"` ("eyJ"), payload, optional signature. */
const JWT = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DIGITS = /^[0-9]+$/;
const HEX = /^[0-9a-f]+$/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** Shorter values than this are described by character classes, never called hex/base64. */
const MIN_TOKEN = 16;

/**
 * Describe `value` by shape only. `name` is accepted for the caller's convenience (the name is
 * shown next to the masked value, never inside it) and does not change the result.
 * @param {unknown} _name
 * @param {unknown} value
 * @returns {string}
 */
export function maskValue(_name, value) {
  const s = typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
  const n = [...s].length;
  if (n === 0) return "[masked: empty]";
  if (JWT.test(s)) return "[masked: JWT]";
  if (UUID.test(s)) return "[masked: UUID]";
  if (DIGITS.test(s)) return `[masked: ${plural(n, "digit")}]`;
  if (n >= MIN_TOKEN && HEX.test(s)) return `[masked: ${plural(n, "char")}, hex]`;
  if (n >= MIN_TOKEN && BASE64.test(s) && mixed(s)) return `[masked: ${plural(n, "char")}, base64]`;
  if (n >= MIN_TOKEN && BASE64URL.test(s) && mixed(s)) return `[masked: ${plural(n, "char")}, base64url]`;
  return `[masked: ${plural(n, "char")}, ${classes(s)}]`;
}

/**
 * The character classes present, in a fixed order: "letters+digits+symbols".
 * @param {string} s
 */
export function classes(s) {
  const out = [];
  if (/[A-Za-z]/.test(s)) out.push("letters");
  if (/[0-9]/.test(s)) out.push("digits");
  if (/\s/.test(s)) out.push("spaces");
  if (/[^A-Za-z0-9\s]/.test(s)) out.push("symbols");
  return out.join("+");
}

/** Token-like: letters and digits both present (so "aaaaaaaaaaaaaaaaaaaa" is not "base64"). */
const mixed = (/** @type {string} */ s) => /[A-Za-z]/.test(s) && /[0-9]/.test(s);

/**
 * @param {number} n
 * @param {string} word
 */
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
