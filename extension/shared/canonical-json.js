// canonical-json.js — the canonical JSON text the host signs a tap for: the same bytes as Python's
// json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False). Pure. It must
// never emit text Python would write differently: numbers are safe integers only, keys sort by
// code point (not UTF-16 unit), lone surrogates are refused rather than guessed at, and so is
// nesting deeper than Python's limit (MAX_DEPTH).

/**
 * Compare two strings by Unicode code point (Python's str ordering).
 * @param {string} a
 * @param {string} b
 */
export function compareCodePoints(a, b) {
  const x = [...a];
  const y = [...b];
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i += 1) {
    const d = /** @type {number} */ (x[i].codePointAt(0)) - /** @type {number} */ (y[i].codePointAt(0));
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** @param {string} s */
function str(s) {
  if (LONE_SURROGATE.test(s)) throw new TypeError("canonicalJson: lone surrogate in a string");
  // JSON.stringify escapes exactly ", \, \b \f \n \r \t and other C0 controls as lowercase \u00xx —
  // the same set and spelling as Python with ensure_ascii=False.
  return JSON.stringify(s);
}

/** Deepest nesting accepted, as trust/canonical.py's MAX_DEPTH: a value at depth 33 is refused. */
export const MAX_DEPTH = 32;

/**
 * @param {unknown} value null, booleans, safe integers, strings, arrays and plain objects
 * @returns {string}
 */
export function canonicalJson(value) {
  return encode(value, 0);
}

/**
 * @param {unknown} value
 * @param {number} depth
 * @returns {string}
 */
function encode(value, depth) {
  if (depth > MAX_DEPTH) throw new TypeError("canonicalJson: nested too deeply");
  if (value === null) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new TypeError("canonicalJson: only safe integers are supported");
    return String(value); // -0 -> "0", as Python's int
  }
  if (typeof value === "string") return str(value);
  if (Array.isArray(value)) return `[${value.map((item) => encode(item, depth + 1)).join(",")}]`;
  const proto = typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  if (proto === Object.prototype || proto === null) {
    const obj = /** @type {Record<string, unknown>} */ (value);
    const keys = Object.keys(obj).sort(compareCodePoints);
    return `{${keys.map((k) => `${str(k)}:${encode(obj[k], depth + 1)}`).join(",")}}`;
  }
  throw new TypeError(`canonicalJson: unsupported ${typeof value}`);
}
