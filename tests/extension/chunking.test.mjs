import { test } from "node:test";
import assert from "node:assert/strict";
import { CHUNK_BYTES, MAX_REASSEMBLED, chunkReply, utf8Length } from "../../extension/worker/chunking.js";

const bytes = (s) => Buffer.byteLength(s, "utf8");
const join = (chunks) => chunks.map((c) => c.data).join("");

test("constants match protocol.md", () => {
  assert.equal(CHUNK_BYTES, 1_000_000);
  assert.equal(MAX_REASSEMBLED, 64 * 1024 * 1024);
});

test("utf8Length agrees with Buffer.byteLength, lone surrogates count as U+FFFD", () => {
  for (const s of ["", "abc", "ü", "€", "😀", "a😀ü€", "\ud800", "x\udc00y"]) {
    assert.equal(utf8Length(s), new TextEncoder().encode(s).length, JSON.stringify(s));
  }
});

test("message shape, order and reassembly round trip", () => {
  const reply = { type: "reply", id: "r9", ok: true, result: { text: "x".repeat(95) } };
  const text = JSON.stringify(reply);
  const chunks = chunkReply("r9", text, 40);
  assert.ok(chunks.length >= 2);
  chunks.forEach((c, i) => {
    assert.deepEqual(Object.keys(c), ["type", "id", "seq", "total", "data"]);
    assert.equal(c.type, "chunk");
    assert.equal(c.id, "r9");
    assert.equal(c.seq, i);
    assert.equal(c.total, chunks.length);
    assert.ok(bytes(c.data) <= 40);
  });
  assert.deepEqual(JSON.parse(join(chunks)), reply);
});

test("exact boundaries: n*limit bytes give n full chunks, one more byte gives n+1", () => {
  assert.deepEqual(chunkReply("a", "abcdefgh", 4).map((c) => c.data), ["abcd", "efgh"]);
  assert.deepEqual(chunkReply("a", "abcdefghi", 4).map((c) => c.data), ["abcd", "efgh", "i"]);
  assert.deepEqual(chunkReply("a", "abcd", 4).map((c) => [c.data, c.total]), [["abcd", 1]]);
  assert.deepEqual(chunkReply("a", "", 4).map((c) => [c.data, c.total]), [["", 1]]);
});

test("multi-byte text: never splits a code point or a surrogate pair", () => {
  const s = "aü€😀".repeat(200) + "😀😀😀";
  for (const limit of [4, 5, 6, 7, 10, 33]) {
    const chunks = chunkReply("m", s, limit);
    assert.equal(join(chunks), s, `limit ${limit}`);
    for (const c of chunks) {
      assert.ok(bytes(c.data) <= limit, `limit ${limit}`);
      assert.ok(c.data.length > 0);
      assert.equal(Buffer.from(c.data, "utf8").toString("utf8"), c.data, "each slice is well-formed UTF-16");
      const first = c.data.charCodeAt(0);
      assert.ok(!(first >= 0xdc00 && first <= 0xdfff), "no slice starts with a low surrogate");
    }
    assert.equal(chunks.reduce((n, c) => n + bytes(c.data), 0), bytes(s));
  }
  // 4-byte code points exactly filling the budget
  assert.deepEqual(chunkReply("e", "😀😀", 4).map((c) => c.data), ["😀", "😀"]);
  assert.deepEqual(chunkReply("e", "😀😀", 8).map((c) => c.data), ["😀😀"]);
  assert.deepEqual(chunkReply("e", "a😀", 4).map((c) => c.data), ["a", "😀"]);
});

test("a realistic 2.5 MB reply at the default budget", () => {
  const reply = { type: "reply", id: "big", ok: true, result: { text: "é".repeat(1_250_000) } };
  const text = JSON.stringify(reply);
  const chunks = chunkReply("big", text);
  assert.equal(chunks.length, 3);
  for (const c of chunks) assert.ok(bytes(c.data) <= 1_000_000);
  assert.deepEqual(JSON.parse(join(chunks)), reply);
});

test("bad arguments are refused", () => {
  assert.throws(() => chunkReply(5, "x"), TypeError);
  assert.throws(() => chunkReply("a", {}), TypeError);
  assert.throws(() => chunkReply("a", "x", 3), RangeError);
});

test("ASCII runs and multi-byte code points mixed at every offset: the greedy split, byte for byte", () => {
  // The reference: fill each slice code point by code point while the next one still fits.
  const greedy = (s, limit) => {
    const out = [];
    let cur = "";
    for (const cp of s) {
      if (bytes(cur + cp) > limit) {
        out.push(cur);
        cur = "";
      }
      cur += cp;
    }
    if (cur !== "" || out.length === 0) out.push(cur);
    return out;
  };
  let seed = 7;
  const rand = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const pieces = ["a", "bcdefgh", "é", "€", "😀", "\ud800", "\udc00", "x".repeat(23)];
  for (let round = 0; round < 300; round++) {
    let s = "";
    for (let k = rand(12); k > 0; k--) s += pieces[rand(pieces.length)];
    const limit = 4 + rand(20);
    const chunks = chunkReply("p", s, limit).map((c) => c.data);
    assert.deepEqual(chunks, greedy(s, limit), `${JSON.stringify(s)} at ${limit}`);
    assert.equal(utf8Length(s), new TextEncoder().encode(s).length, JSON.stringify(s));
  }
});
