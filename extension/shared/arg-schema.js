// arg-schema.js — checks an action's `args` against the JSON schema the MCP tool catalogue
// publishes for its wire form (worker/catalogue.js ACTION_ARGS, generated from
// mcp_server/catalogue/). Pure: no chrome, no I/O. It knows only the keywords in KEYWORDS: a
// schema holding any other keyword refuses every value (fail closed), so a generator that starts
// emitting a keyword this file cannot enforce can never widen what a handler is given. It must
// never read a key of the checked value, nor a schema's property, through a prototype: own keys
// only (Object.hasOwn), so "__proto__" or "constructor" in `args` is an unknown field like any other.

import { isPlainObject } from "./wire.js";

/**
 * The keywords a wire schema may hold (mcp_server/catalogue/wire.py KEYWORDS, the same set).
 * `additionalProperties` is `false` (an object's fields are exactly its `properties`) or the
 * schema of every other field's value (a map of names to strings); a `type` list allows any of
 * its types; `pattern` is matched as a Unicode regular expression.
 */
export const KEYWORDS = Object.freeze(new Set([
  "type", "properties", "required", "additionalProperties", "enum", "const",
  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
  "pattern", "items", "minItems", "maxItems", "anyOf", "oneOf", "not",
]));

/** Each pattern compiled once. @type {Map<string, RegExp>} */
const patterns = new Map();

/** @param {unknown} pattern */
function patternOf(pattern) {
  const source = String(pattern);
  let re = patterns.get(source);
  if (re === undefined) {
    re = new RegExp(source, "u");
    patterns.set(source, re);
  }
  return re;
}

/** Longest field name or path echoed in a refusal. */
const MAX_ECHO = 64;

/** @param {string} path */
const named = (path) => (path.length > MAX_ECHO ? `${path.slice(0, MAX_ECHO)}…` : path);

/** @param {string} path @param {string} key */
const join = (path, key) => (path === "" ? key : `${path}.${key}`);

/**
 * JSON equality of two JSON values (for enum and const).
 * @param {unknown} a @param {unknown} b
 * @returns {boolean}
 */
function same(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
  }
  return false;
}

/**
 * @param {string} type
 * @param {unknown} value
 */
function isType(type, value) {
  switch (type) {
    case "string": return typeof value === "string";
    case "boolean": return typeof value === "boolean";
    case "null": return value === null;
    case "integer": return Number.isSafeInteger(value);
    case "number": return typeof value === "number" && Number.isFinite(value);
    case "object": return isPlainObject(value);
    case "array": return Array.isArray(value);
    default: return false;
  }
}

/** @param {unknown} type */
const typeWords = (type) => (Array.isArray(type) ? type.join(" or ") : String(type));

/**
 * Why `value` does not match `schema`, naming the field (`path`); null when it matches.
 * @param {unknown} schema
 * @param {unknown} value
 * @param {string} path
 * @returns {string | null}
 */
function mismatch(schema, value, path) {
  const field = path === "" ? "args" : named(path);
  if (!isPlainObject(schema)) return `${field}: no schema`;
  for (const key of Object.keys(schema)) {
    if (!KEYWORDS.has(key)) return `${field}: the schema holds a keyword the extension does not enforce`;
  }
  const s = schema;
  if (Object.hasOwn(s, "type")) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((t) => isType(String(t), value))) return `${field} must be ${typeWords(s.type)}`;
  }
  if (Object.hasOwn(s, "const") && !same(value, s.const)) return `${field} must be ${JSON.stringify(s.const)}`;
  if (Object.hasOwn(s, "enum")) {
    if (!Array.isArray(s.enum) || !s.enum.some((v) => same(value, v))) {
      return `${field} must be one of ${Array.isArray(s.enum) ? s.enum.map((v) => JSON.stringify(v)).join(", ") : "(none)"}`;
    }
  }
  if (typeof value === "number") {
    if (Object.hasOwn(s, "minimum") && !(typeof s.minimum === "number" && value >= s.minimum)) return `${field} must be at least ${s.minimum}`;
    if (Object.hasOwn(s, "maximum") && !(typeof s.maximum === "number" && value <= s.maximum)) return `${field} must be at most ${s.maximum}`;
    if (Object.hasOwn(s, "exclusiveMinimum") && !(typeof s.exclusiveMinimum === "number" && value > s.exclusiveMinimum)) return `${field} must be more than ${s.exclusiveMinimum}`;
    if (Object.hasOwn(s, "exclusiveMaximum") && !(typeof s.exclusiveMaximum === "number" && value < s.exclusiveMaximum)) return `${field} must be less than ${s.exclusiveMaximum}`;
  }
  if (typeof value === "string") {
    if (Object.hasOwn(s, "minLength") && !(typeof s.minLength === "number" && value.length >= s.minLength)) return `${field} must be at least ${s.minLength} characters`;
    if (Object.hasOwn(s, "maxLength") && !(typeof s.maxLength === "number" && value.length <= s.maxLength)) return `${field} must be at most ${s.maxLength} characters`;
    if (Object.hasOwn(s, "pattern") && !patternOf(s.pattern).test(value)) return `${field} does not have the form it must have`;
  }
  if (Array.isArray(value)) {
    if (Object.hasOwn(s, "minItems") && !(typeof s.minItems === "number" && value.length >= s.minItems)) return `${field} must hold at least ${s.minItems} items`;
    if (Object.hasOwn(s, "maxItems") && !(typeof s.maxItems === "number" && value.length <= s.maxItems)) return `${field} must hold at most ${s.maxItems} items`;
    if (Object.hasOwn(s, "items")) {
      for (let i = 0; i < value.length; i += 1) {
        const wrong = mismatch(s.items, value[i], `${path === "" ? "args" : path}[${i}]`);
        if (wrong !== null) return wrong;
      }
    }
  }
  if (isPlainObject(value)) {
    const wrong = objectMismatch(s, value, path, field);
    if (wrong !== null) return wrong;
  }
  if (Object.hasOwn(s, "anyOf")) {
    if (!Array.isArray(s.anyOf)) return `${field}: no schema`;
    const reasons = s.anyOf.map((alt) => mismatch(alt, value, path));
    if (!reasons.includes(null)) return reasons[0] ?? `${field} matches none of its forms`;
  }
  if (Object.hasOwn(s, "oneOf")) {
    if (!Array.isArray(s.oneOf)) return `${field}: no schema`;
    const matching = s.oneOf.filter((alt) => mismatch(alt, value, path) === null).length;
    if (matching !== 1) return oneOfWords(s.oneOf, field);
  }
  if (Object.hasOwn(s, "not") && mismatch(s.not, value, path) === null) return `${field} is not allowed in this form`;
  return null;
}

/**
 * An object's fields: each known (`properties`, own keys only; no `additionalProperties`
 * schema: no other field), each required one given.
 * @param {Record<string, unknown>} s @param {Record<string, unknown>} value
 * @param {string} path @param {string} field
 * @returns {string | null}
 */
function objectMismatch(s, value, path, field) {
  const props = Object.hasOwn(s, "properties") ? s.properties : undefined;
  if (props !== undefined && !isPlainObject(props)) return `${field}: no schema`;
  // Fields beyond `properties` are refused unless the schema gives their values' schema (a schema
  // with neither, such as a `oneOf` form that only lists what is `required`, leaves them be).
  const extra = Object.hasOwn(s, "additionalProperties") && isPlainObject(s.additionalProperties) ? s.additionalProperties : false;
  if (Object.hasOwn(s, "required")) {
    if (!Array.isArray(s.required)) return `${field}: no schema`;
    for (const key of s.required) {
      if (!Object.hasOwn(value, String(key))) return `${named(join(path, String(key)))} is required`;
    }
  }
  for (const key of Object.keys(value)) {
    const known = props !== undefined && Object.hasOwn(props, key);
    if (!known && extra === false && props === undefined && !Object.hasOwn(s, "additionalProperties")) continue;
    if (!known && extra === false) return `${field} has an unknown field ${JSON.stringify(named(key))}`;
    const wrong = mismatch(known ? props[key] : extra, value[key], join(path, key));
    if (wrong !== null) return wrong;
  }
  return null;
}

/**
 * The refusal of a `oneOf` whose forms each require some fields (the catalogue's "exactly one of"
 * rules: name the element by exactly one of ref, selector, text or xpath).
 * @param {unknown[]} forms @param {string} field
 */
function oneOfWords(forms, field) {
  const keys = forms.map((f) => (isPlainObject(f) && Array.isArray(f.required) ? f.required.join(" and ") : null));
  if (keys.every((k) => k !== null && k !== "")) return `${field}: give exactly one of ${keys.join(", ")}`;
  return `${field} must match exactly one of its forms`;
}

/**
 * Why `args` does not match `schema` (a message naming the field), or null when it does.
 * @param {unknown} schema an action's wire schema (worker/catalogue.js ACTION_ARGS)
 * @param {unknown} args
 * @returns {string | null}
 */
export function argsMismatch(schema, args) {
  let sound = checked.get(/** @type {object} */ (schema));
  if (sound === undefined) {
    sound = isPlainObject(schema) && soundSchema(schema, 0);
    if (isPlainObject(schema)) checked.set(schema, sound);
  }
  if (!sound) return "args: the action's schema holds a keyword the extension does not enforce";
  return mismatch(schema, args, "");
}

/** Each schema checked whole once: every keyword, at every depth, one of KEYWORDS. */
const checked = /** @type {WeakMap<object, boolean>} */ (new WeakMap());

/** Deepest nesting of schemas a wire schema may have. */
const MAX_DEPTH = 16;

/**
 * True when every keyword of `schema` and of every schema inside it is one of KEYWORDS, and
 * `additionalProperties` is false wherever it appears.
 * @param {unknown} schema @param {number} depth
 * @returns {boolean}
 */
function soundSchema(schema, depth) {
  if (!isPlainObject(schema) || depth > MAX_DEPTH) return false;
  for (const key of Object.keys(schema)) {
    if (!KEYWORDS.has(key)) return false;
  }
  if (Object.hasOwn(schema, "additionalProperties") && schema.additionalProperties !== false
    && !soundSchema(schema.additionalProperties, depth + 1)) return false;
  if (Object.hasOwn(schema, "pattern")) {
    if (typeof schema.pattern !== "string") return false;
    try {
      patternOf(schema.pattern);
    } catch {
      return false;
    }
  }
  if (Object.hasOwn(schema, "properties")) {
    const props = schema.properties;
    if (!isPlainObject(props) || !Object.values(props).every((p) => soundSchema(p, depth + 1))) return false;
  }
  for (const key of ["items", "not"]) {
    if (Object.hasOwn(schema, key) && !soundSchema(schema[key], depth + 1)) return false;
  }
  for (const key of ["anyOf", "oneOf"]) {
    if (!Object.hasOwn(schema, key)) continue;
    const forms = schema[key];
    if (!Array.isArray(forms) || forms.length === 0 || !forms.every((f) => soundSchema(f, depth + 1))) return false;
  }
  return true;
}
