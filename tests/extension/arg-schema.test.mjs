// The wire-schema validator (extension/shared/arg-schema.js) on its own: each keyword it knows,
// prototype keys, and failing closed on a keyword it does not know.
import { test } from "node:test";
import assert from "node:assert/strict";
import { KEYWORDS, argsMismatch } from "../../extension/shared/arg-schema.js";
import { ACTION_ARGS } from "../../extension/worker/catalogue.js";

const TAB = {
  type: "object", additionalProperties: false, required: ["tabId"],
  properties: { tabId: { type: "integer", minimum: 0 }, name: { type: "string", minLength: 1, maxLength: 5 } },
};

test("a matching value passes; each keyword refuses what it must, naming the field", () => {
  assert.equal(argsMismatch(TAB, { tabId: 3 }), null);
  assert.equal(argsMismatch(TAB, { tabId: 3, name: "abc" }), null);
  assert.match(argsMismatch(TAB, {}), /tabId is required/);
  assert.match(argsMismatch(TAB, { tabId: "3" }), /tabId must be integer/);
  assert.match(argsMismatch(TAB, { tabId: -1 }), /tabId must be at least 0/);
  assert.match(argsMismatch(TAB, { tabId: 1.5 }), /tabId must be integer/);
  assert.match(argsMismatch(TAB, { tabId: 1, name: "" }), /name must be at least 1/);
  assert.match(argsMismatch(TAB, { tabId: 1, name: "abcdef" }), /name must be at most 5/);
  assert.match(argsMismatch(TAB, { tabId: 1, name: null }), /name must be string/);
  assert.match(argsMismatch(TAB, { tabId: 1, other: 1 }), /unknown field "other"/);
});

test("a huge or non-finite number is not an integer, whatever the bounds", () => {
  for (const tabId of [1e300, 2 ** 53, Number.MAX_VALUE, Infinity, NaN, -0.5]) {
    assert.notEqual(argsMismatch(TAB, { tabId }), null, String(tabId));
  }
  const num = { type: "number", maximum: 10 };
  assert.notEqual(argsMismatch(num, Infinity), null);
  assert.notEqual(argsMismatch(num, NaN), null);
});

test('"__proto__", "constructor" and other prototype names are unknown fields, never schema lookups', () => {
  for (const text of ['{"tabId":1,"__proto__":{"tabId":-1}}', '{"tabId":1,"constructor":{}}',
    '{"tabId":1,"toString":"x"}', '{"tabId":1,"hasOwnProperty":1}']) {
    const args = JSON.parse(text);
    assert.match(argsMismatch(TAB, args) ?? "", /unknown field/, text);
  }
  // A required field inherited through a prototype is not given.
  const inherited = Object.create({ tabId: 1 });
  assert.match(argsMismatch(TAB, inherited) ?? "", /must be object|tabId is required/);
  // Nested: a map's values are checked as its additionalProperties schema says, __proto__ too.
  const map = { type: "object", additionalProperties: { type: "string" } };
  assert.equal(argsMismatch(map, JSON.parse('{"a":"x","__proto__":"y"}')), null);
  assert.match(argsMismatch(map, JSON.parse('{"__proto__":{"polluted":true}}')) ?? "", /must be string/);
  assert.equal(/** @type {any} */ ({}).polluted, undefined);
});

test("an object schema without additionalProperties admits no field beyond its properties", () => {
  const open = { type: "object", properties: { a: { type: "integer" } } };
  assert.equal(argsMismatch(open, { a: 1 }), null);
  assert.match(argsMismatch(open, { a: 1, b: 2 }) ?? "", /unknown field "b"/);
});

test("enum, const, pattern, items, anyOf, oneOf and not", () => {
  assert.equal(argsMismatch({ enum: ["a", "b"] }, "a"), null);
  assert.match(argsMismatch({ enum: ["a", "b"] }, "c") ?? "", /one of "a", "b"/);
  assert.equal(argsMismatch({ const: 3 }, 3), null);
  assert.notEqual(argsMismatch({ const: 3 }, "3"), null);
  assert.equal(argsMismatch({ type: "string", pattern: "^[0-9]+$" }, "12"), null);
  assert.notEqual(argsMismatch({ type: "string", pattern: "^[0-9]+$" }, "1a"), null);
  const list = { type: "array", items: { enum: ["Alt", "Shift"] }, maxItems: 2, minItems: 1 };
  assert.equal(argsMismatch(list, ["Alt"]), null);
  assert.match(argsMismatch(list, ["Alt", "Ctrl"]) ?? "", /args\[1\]/);
  assert.notEqual(argsMismatch(list, []), null);
  assert.notEqual(argsMismatch(list, ["Alt", "Alt", "Alt"]), null);
  const either = { anyOf: [{ type: "string" }, { type: "integer" }] };
  assert.equal(argsMismatch(either, 1), null);
  assert.notEqual(argsMismatch(either, true), null);
  const one = {
    type: "object", properties: { ref: { type: "string" }, selector: { type: "string" } },
    oneOf: [{ required: ["ref"] }, { required: ["selector"] }],
  };
  assert.equal(argsMismatch(one, { ref: "@e1" }), null);
  assert.match(argsMismatch(one, { ref: "@e1", selector: "a" }) ?? "", /exactly one of ref, selector/);
  assert.match(argsMismatch(one, {}) ?? "", /exactly one of ref, selector/);
  assert.notEqual(argsMismatch({ not: { type: "string" } }, "x"), null);
  assert.equal(argsMismatch({ not: { type: "string" } }, 1), null);
});

test("a schema holding a keyword the validator does not know refuses everything (fail closed)", () => {
  const unknownTop = { ...TAB, format: "uri" };
  const unknownDeep = { ...TAB, properties: { ...TAB.properties, name: { type: "string", format: "email" } } };
  const unknownUnused = { ...TAB, properties: { ...TAB.properties, other: { type: "string", $ref: "#/x" } } };
  const openMap = { ...TAB, additionalProperties: true };
  const badPattern = { type: "string", pattern: "(" };
  for (const schema of [unknownTop, unknownDeep, unknownUnused, openMap, { type: "object", properties: [] }]) {
    assert.match(argsMismatch(schema, { tabId: 1 }) ?? "", /does not enforce/, JSON.stringify(schema));
  }
  assert.notEqual(argsMismatch(badPattern, "x"), null);
  for (const schema of [null, undefined, "x", [], 1]) {
    assert.notEqual(argsMismatch(schema, {}), null, String(schema));
  }
  // An empty anyOf / oneOf matches nothing rather than everything.
  assert.notEqual(argsMismatch({ anyOf: [] }, 1), null);
  assert.notEqual(argsMismatch({ oneOf: [] }, 1), null);
});

test("every schema the catalogue publishes uses only the known keywords", () => {
  assert.ok(ACTION_ARGS.length > 30);
  /** @param {unknown} s */
  const walk = (s) => {
    if (Array.isArray(s)) return s.forEach(walk);
    if (s === null || typeof s !== "object") return;
    for (const [k, v] of Object.entries(s)) {
      if (k === "properties") Object.values(/** @type {object} */ (v)).forEach(walk);
      else {
        assert.ok(KEYWORDS.has(k), k);
        walk(v);
      }
    }
  };
  for (const [action, schema] of ACTION_ARGS) {
    walk(schema);
    assert.equal(argsMismatch(schema, { tabId: 1, "zz-unknown": 1 }) !== null, true, action);
  }
});
