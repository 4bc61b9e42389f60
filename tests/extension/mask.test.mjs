import { test } from "node:test";
import assert from "node:assert/strict";
import { classes, maskText, maskValue } from "../../extension/worker/mask.js";

const JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

test("JWTs, UUIDs, digit runs, hex and base64 tokens get a shape hint only", () => {
  assert.equal(maskValue("session", JWT), "[masked: JWT]");
  assert.equal(maskValue("id", "123e4567-e89b-12d3-a456-426614174000"), "[masked: UUID]");
  assert.equal(maskValue("card", "4111111111111111"), "[masked: 16 digits]");
  assert.equal(maskValue("n", "7"), "[masked: 1 digit]");
  assert.equal(maskValue("sid", "9f86d081884c7d659a2feaa0c55ad015"), "[masked: 32 chars, hex]");
  assert.equal(maskValue("tok", "dGhpcyBpcyBhIHNlY3JldCB0b2tlbg=="), "[masked: 32 chars, base64]");
  assert.equal(maskValue("tok", "a1B2_c3D4-e5F6g7H8"), "[masked: 18 chars, base64url]");
});

test("short and plain values are masked too, by character classes", () => {
  assert.equal(maskValue("lang", "en"), "[masked: 2 chars, letters]");
  assert.equal(maskValue("theme", "dark mode!"), "[masked: 10 chars, letters+spaces+symbols]");
  assert.equal(maskValue("ab", "abc123"), "[masked: 6 chars, letters+digits]");
  assert.equal(maskValue("x", ""), "[masked: empty]");
  assert.equal(maskValue("x", undefined), "[masked: empty]");
  assert.equal(maskValue("x", "zzzzzzzzzzzzzzzzzzzz"), "[masked: 20 chars, letters]");
  assert.equal(maskValue("x", "ünïcødé"), "[masked: 7 chars, letters+symbols]");
  assert.equal(classes("a1 -"), "letters+digits+spaces+symbols");
});

test("the masked form never contains the value or a piece of it", () => {
  for (const v of [JWT, "hunter2", "s3cr3t-t0k3n-value", "9f86d081884c7d659a2feaa0c55ad015", "1234567890123", "ab"]) {
    const m = maskValue("name", v);
    assert.match(m, /^\[masked: [^\]]+\]$/);
    for (let i = 0; i + 2 <= v.length; i++) {
      const piece = v.slice(i, i + 2);
      if (!/^[a-z]+$/i.test(piece)) continue; // the hint's own words may share letter pairs
      // any lower-case letter pair of the hint is from its vocabulary, not from the value
      if (m.includes(piece)) assert.match("masked chars letters digits symbols spaces empty hex base64url JWT UUID digit char", new RegExp(piece));
    }
    assert.ok(!m.includes(v), v);
  }
});

test("auth schemes: every credential shape masked; a lowercase word after Basic/Token/Bearer is a word", () => {
  const hex40 = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b";
  const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlX2hlcmU";
  for (const [text, secret] of [
    ["Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"], [`Bearer ${jwt}`, "c2lnbmF0dXJlX2hlcmU"], [`Token ${hex40}`, hex40],
    [`bearer ${hex40}`, hex40], ["Token abcDEF123ghiJKL", "abcDEF123ghiJKL"], ["Bearer ghp_abcdefghijklmnop", "abcdefghijklmnop"],
    ["Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l"], ["Bearer abcdefgh-ijklmnop", "abcdefgh-ijklmnop"],
    ["Bearer Abcdefghijklm", "Abcdefghijklm"], ["Token ABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP"],
    ["Bearer abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"], // longer than a word
    ["Authorization: Basic customization", "customization"], // a header line is masked whole
  ]) {
    const out = maskText(`x ${text} y`);
    assert.ok(!out.includes(secret) && out.includes("[masked"), `${text} -> ${out}`);
  }
  for (const text of ["3.3.1. Basic customization", "Token validation", "Bearer instructions", "see Basic authentication.", "Token authorization"]) {
    assert.equal(maskText(text), text);
  }
});
