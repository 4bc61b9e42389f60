import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ERROR_CODES, ERROR_TABLE, errorReply, isErrorCode } from "../../extension/lib/error-codes.js";
import { BridgeError } from "../../extension/lib/bridge-error.js";

const json = JSON.parse(readFileSync(new URL("../../protocol/error_codes.json", import.meta.url), "utf8"));

test("ERROR_TABLE mirrors protocol/error_codes.json exactly (order, numbers, hints)", () => {
  assert.deepEqual(
    ERROR_TABLE.map(([code, n, hint]) => ({ n, code, hint })),
    json.codes.map(({ n, code, hint }) => ({ n, code, hint })),
  );
});

test("the JS source has one row per line in the literal form the Python test parses", () => {
  const src = readFileSync(new URL("../../extension/lib/error-codes.js", import.meta.url), "utf8");
  const rows = [...src.matchAll(/^ {2}\["([a-z_]+)", (\d+), "(.*)"\],$/gm)].map((m) => [m[1], Number(m[2]), m[3]]);
  assert.deepEqual(rows, json.codes.map(({ n, code, hint }) => [code, n, hint]));
});

test("numbers and codes are unique", () => {
  assert.equal(new Set(ERROR_TABLE.map((r) => r[1])).size, ERROR_TABLE.length);
  assert.equal(new Set(ERROR_TABLE.map((r) => r[0])).size, ERROR_TABLE.length);
});

test("table, rows and lookup entries are frozen", () => {
  assert.ok(Object.isFrozen(ERROR_TABLE));
  for (const row of ERROR_TABLE) assert.ok(Object.isFrozen(row));
  assert.ok(Object.isFrozen(ERROR_CODES));
  assert.ok(Object.isFrozen(ERROR_CODES.tab_not_found));
  assert.throws(() => {
    ERROR_TABLE.push(["x", 99, "y"]);
  }, TypeError);
  assert.throws(() => {
    ERROR_CODES.internal_error.n = 42;
  }, TypeError);
  assert.equal(ERROR_CODES.tab_not_found.n, 14);
});

test("prototype names are not codes", () => {
  for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
    assert.equal(isErrorCode(name), false, name);
    assert.equal(ERROR_CODES[name], undefined, name);
  }
  assert.equal(isErrorCode("busy"), true);
});

test("errorReply builds the wire shape and coerces unknown codes", () => {
  assert.deepEqual(errorReply("r1", "tab_not_found", "no tab 3"), {
    type: "reply", id: "r1", ok: false, error: { code: "tab_not_found", message: "no tab 3" },
  });
  assert.equal(errorReply("r2", "nope", "m").error.code, "internal_error");
});

test("BridgeError keeps table codes, coerces others, truncates long messages", () => {
  const e = new BridgeError("tab_not_found", "gone");
  assert.ok(e instanceof Error);
  assert.equal(e.code, "tab_not_found");
  assert.equal(e.message, "gone");
  assert.equal(new BridgeError("constructor", "x").code, "internal_error");
  assert.equal(new BridgeError("busy", "x".repeat(10_000)).message.length, 500);
});
