import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { CODE, ERROR_CODES, ERROR_TABLE, errorReply, isErrorCode } from "../../extension/shared/error-codes.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";

const json = JSON.parse(readFileSync(new URL("../../protocol/error_codes.json", import.meta.url), "utf8"));

test("ERROR_TABLE mirrors protocol/error_codes.json exactly (order, numbers, hints)", () => {
  assert.deepEqual(
    ERROR_TABLE.map(([code, n, hint]) => ({ n, code, hint })),
    json.codes.map(({ n, code, hint }) => ({ n, code, hint })),
  );
});

test("the JS source has one row per line in the literal form the Python test parses", () => {
  const src = readFileSync(new URL("../../extension/shared/error-codes.js", import.meta.url), "utf8");
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

test("CODE names every row of the table and nothing else, frozen, with no prototype", () => {
  assert.deepEqual(Object.entries(CODE), ERROR_TABLE.map(([code]) => [code.toUpperCase(), code]));
  assert.ok(Object.isFrozen(CODE));
  assert.equal(Object.getPrototypeOf(CODE), null);
  assert.equal(CODE.constructor, undefined);
  assert.equal(CODE.NOT_PAIRED, "not_paired");
});

// ---- no code as a bare string in extension/: a misspelt one would quietly become internal_error

const EXTENSION = new URL("../../extension/", import.meta.url);
/** Every .js file under extension/, as [path from extension/, source]. */
function sources(dir = "") {
  const out = [];
  for (const entry of readdirSync(new URL(dir, EXTENSION), { withFileTypes: true })) {
    if (entry.isDirectory()) out.push(...sources(`${dir}${entry.name}/`));
    else if (entry.name.endsWith(".js")) out.push([`${dir}${entry.name}`, readFileSync(new URL(`${dir}${entry.name}`, EXTENSION), "utf8")]);
  }
  return out;
}
/**
 * Page-side code cannot import CODE: the page/ files are classic scripts injected into the page.
 * There a code is written as a string, and must be a table row.
 */
const PAGE_SIDE = (path) => path.startsWith("page/");
/** The shapes a code is written in (group 1 is the code). */
const CODE_LITERALS = [
  /new (?:BridgeError|PageError)\(\s*["'`]([^"'`]*)["'`]/g, // the typed errors
  /errorReply\([^,()]+,\s*["'`]([^"'`]*)["'`]/g, // a failed reply
  /\bcode\s*[:=]\s*["'`]([^"'`]*)["'`]/g, // {code: "…"}, code = "…" defaults, err.code : "…" fallbacks
  /\?\.code\s*\?\?\s*["'`]([^"'`]*)["'`]/g, // answer?.code ?? "…" fallbacks
  /\bdeny\(\s*[a-z]+,\s*["'`]([^"'`]*)["'`]/g, // presence-confirm's deny(id, "…")
  /["'`]refused: ([a-z_]+)/g, // status texts that name a code
];
/** Strip comments, so prose that quotes a code is not a use of it. */
const code = (src) => src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");

test("extension/ writes error codes only through CODE (page-side code: only table codes)", () => {
  const files = sources();
  assert.ok(files.some(([p]) => p === "background.js") && files.some(([p]) => p === "page/elements.js"), "scanned the tree");
  const literal = [];
  const unknown = [];
  for (const [path, src] of files) {
    if (path === "shared/error-codes.js") continue; // the table itself
    const body = code(src);
    for (const pattern of CODE_LITERALS) {
      for (const m of body.matchAll(pattern)) {
        if (!isErrorCode(m[1])) unknown.push(`${path}: ${m[0]}`);
        else if (!PAGE_SIDE(path)) literal.push(`${path}: ${m[0]}`);
      }
    }
    for (const m of body.matchAll(/\bCODE\.([A-Za-z_]+)/g)) {
      if (!Object.hasOwn(CODE, m[1])) unknown.push(`${path}: ${m[0]}`);
    }
  }
  assert.deepEqual(unknown, [], "codes that are not rows of ERROR_TABLE");
  assert.deepEqual(literal, [], "write these as CODE.NAME (import { CODE } from shared/error-codes.js)");
});

test("the scan sees each shape it looks for (a scan that finds nothing proves nothing)", () => {
  const samples = [
    'throw new BridgeError("tab_not_foud", "x")', 'new PageError("bad_ref", m)', 'errorReply(id, "busy", "m")',
    '({ ok: false, code: "nope" })', 'rejectAll(code = "extension_not_connected")', 'err.code : "internal_error"',
    'String(r?.code ?? "internal_error")', 'deny(id, "bad_request")', 'return "refused: presence_refused";',
  ];
  for (const sample of samples) {
    assert.equal(CODE_LITERALS.filter((p) => [...code(sample).matchAll(p)].length > 0).length, 1, sample);
  }
  assert.equal([...code("// new BridgeError(\"tab_not_foud\")").matchAll(CODE_LITERALS[0])].length, 0, "comments are prose");
});
