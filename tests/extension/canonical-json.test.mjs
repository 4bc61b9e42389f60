import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { canonicalJson, compareCodePoints } from "../../extension/shared/canonical-json.js";

// Expected texts were produced by Python 3.11:
// json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
const SAMPLES = [
  [{ eval: true }, "{\"eval\":true}"],
  [{ origins: ["https://a.test", "http://b.test:8080"], eval: true, upload: false },
    "{\"eval\":true,\"origins\":[\"https://a.test\",\"http://b.test:8080\"],\"upload\":false}"],
  [{ b: 1, a: [1, -2, 0, null, "x"], A: { z: {}, y: [] } }, "{\"A\":{\"y\":[],\"z\":{}},\"a\":[1,-2,0,null,\"x\"],\"b\":1}"],
  [{ s: "quote\" back\\ nl\n tab\t cr\r bs\b ff\f nul\x00 us\x1f del\x7f" },
    "{\"s\":\"quote\\\" back\\\\ nl\\n tab\\t cr\\r bs\\b ff\\f nul\\u0000 us\\u001f del\u007f\"}"],
  [{ "é": "café ü 😀 \u2028\u2029", "ÿ": 1, "\ue000": 2, "😀": 3, "~": 4 },
    "{\"~\":4,\"\u00e9\":\"caf\u00e9 \u00fc \ud83d\ude00 \u2028\u2029\",\"\u00ff\":1,\"\ue000\":2,\"\ud83d\ude00\":3}"],
  [[], "[]"],
  ["", "\"\""],
  [{ clickGraceSeconds: 9007199254740991, n: -42 }, "{\"clickGraceSeconds\":9007199254740991,\"n\":-42}"],
];

test("canonicalJson matches Python's sorted, compact, non-ASCII json.dumps on samples", () => {
  for (const [value, expected] of SAMPLES) assert.equal(canonicalJson(value), expected);
  assert.equal(canonicalJson(-0), "0");
  assert.equal(canonicalJson(Object.assign(Object.create(null), { b: 2, a: 1 })), "{\"a\":1,\"b\":2}");
});

test("keys sort by code point, not UTF-16 unit (astral after U+E000)", () => {
  assert.ok(compareCodePoints("\ue000", "😀") < 0);
  assert.ok("\ue000" > "😀", "plain JS comparison differs");
  assert.ok(compareCodePoints("a", "ab") < 0);
  assert.equal(compareCodePoints("x", "x"), 0);
});

test("values Python would write differently are refused", () => {
  for (const bad of [1.5, NaN, Infinity, 2 ** 53, undefined, () => 1, new Date(0), new Map(), "\ud800", { "\udc00": 1 }, [1n]]) {
    assert.throws(() => canonicalJson(bad), TypeError, String(bad));
  }
});

test("cross-check with the local python3 when there is one", (t) => {
  const script = "import json,sys\nfor v in json.load(sys.stdin):\n  print(json.dumps(json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False)))";
  const r = spawnSync("python3", ["-c", script], { input: JSON.stringify(SAMPLES.map(([v]) => v)), encoding: "utf8" });
  if (r.error || r.status !== 0) {
    t.skip("python3 not available");
    return;
  }
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines, SAMPLES.map(([v]) => canonicalJson(v)));
});

test("nesting deeper than Python's MAX_DEPTH (32) is refused, as trust/canonical.py does", () => {
  // Found by fuzz/fuzz_canonical.py: Python refused a 33-deep value that JavaScript wrote.
  let ok = 1;
  for (let i = 0; i < 32; i += 1) ok = i % 2 ? [ok] : { k: ok };
  assert.equal(canonicalJson(ok).length > 0, true);
  assert.throws(() => canonicalJson([ok]), TypeError);
  assert.throws(() => canonicalJson({ k: ok }), TypeError);
});
