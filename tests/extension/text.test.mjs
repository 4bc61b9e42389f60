import { test } from "node:test";
import assert from "node:assert/strict";
import { truncate } from "../../extension/worker/text.js";

test("whole text when it fits", () => {
  assert.deepEqual(truncate("hello", 0, 10), { text: "hello", nextOffset: null, totalChars: 5 });
  assert.deepEqual(truncate("", 0, 10), { text: "", nextOffset: null, totalChars: 0 });
});

test("pages with nextOffset until the end", () => {
  const s = "abcdefghij";
  assert.deepEqual(truncate(s, 0, 4), { text: "abcd", nextOffset: 4, totalChars: 10 });
  assert.deepEqual(truncate(s, 4, 4), { text: "efgh", nextOffset: 8, totalChars: 10 });
  assert.deepEqual(truncate(s, 8, 4), { text: "ij", nextOffset: null, totalChars: 10 });
  assert.deepEqual(truncate(s, 6, 4), { text: "ghij", nextOffset: null, totalChars: 10 }, "exact end");
  assert.deepEqual(truncate(s, 50, 4), { text: "", nextOffset: null, totalChars: 10 });
  assert.deepEqual(truncate(s, -3, 2), { text: "ab", nextOffset: 2, totalChars: 10 });
});

test("never splits a surrogate pair", () => {
  const s = "ab😀cd"; // 😀 is two code units at 2..3
  const first = truncate(s, 0, 3);
  assert.deepEqual(first, { text: "ab", nextOffset: 2, totalChars: 6 });
  assert.deepEqual(truncate(s, first.nextOffset, 3), { text: "😀c", nextOffset: 5, totalChars: 6 });
  assert.equal(truncate(s, 3, 3).text, "😀c", "an offset inside the pair starts at the pair");
  // maxChars 1 on a pair still makes progress
  assert.deepEqual(truncate("😀", 0, 1), { text: "😀", nextOffset: null, totalChars: 2 });
});

test("reassembling every page gives the text back", () => {
  const s = "x😀y".repeat(50) + "ü€𝄞".repeat(30);
  let out = "";
  let offset = 0;
  for (let guard = 0; offset !== null && guard < 1000; guard++) {
    const page = truncate(s, offset, 7);
    assert.ok(page.text.length <= 7);
    out += page.text;
    offset = page.nextOffset;
  }
  assert.equal(out, s);
});
