import { test } from "node:test";
import assert from "node:assert/strict";
import { luhnValid, maskCards } from "../../extension/worker/redact.js";

test("Luhn positives and negatives", () => {
  for (const d of ["4111111111111111", "5500000000000004", "378282246310005", "6011111111111117", "4222222222222"]) {
    assert.equal(luhnValid(d), true, d);
  }
  for (const d of ["4111111111111112", "1234567812345678", "", "41111x1111111111"]) assert.equal(luhnValid(d), false, d);
});

test("masks card numbers: plain, spaced, dashed, embedded in text", () => {
  assert.equal(maskCards("pay 4111111111111111 now"), "pay [card] now");
  assert.equal(maskCards("4111 1111 1111 1111"), "[card]");
  assert.equal(maskCards("4111-1111-1111-1111"), "[card]");
  assert.equal(maskCards("Amex 3782 822463 10005."), "Amex [card].");
  assert.equal(maskCards("a:5500000000000004,b:6011111111111117"), "a:[card],b:[card]");
  assert.equal(maskCards("4111\u00a01111\u00a01111\u00a01111"), "[card]");
  assert.equal(maskCards("13 digits 4222222222222 ok"), "13 digits [card] ok");
});

test("a card followed by more digit groups is still caught", () => {
  assert.equal(maskCards("4111 1111 1111 1111 12"), "[card]");
  assert.equal(maskCards("ref 7 4111 1111 1111 1111"), "ref [card]");
});

test("leaves non-cards alone", () => {
  for (const t of [
    "4111111111111112", // Luhn fails
    "order 123456789012", // 12 digits
    "2024-01-02 10:00",
    "call +1 555 123 4567",
    "1234567890123456789012345", // one 25-digit id, not a card
    "price 1,299.00",
    "",
  ]) {
    assert.equal(maskCards(t), t, t);
  }
  assert.equal(maskCards(undefined), "");
});
