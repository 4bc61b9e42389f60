import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createPendingTable } from "../../extension/worker/pending.js";
import { createPolicyRelay } from "../../extension/worker/policy-relay.js";
import { REASON_TEXT, reasonText, refusedText } from "../../extension/shared/presence-reasons.js";
import { pageRouter } from "./helpers/fakes.mjs";

const timers = { setTimer: () => 0, clearTimer: () => {} };

test("a host_reply's reason code rides the BridgeError; anything not shaped like a code is dropped", async () => {
  const table = createPendingTable(timers);
  const a = table.add("1");
  table.settle({ id: "1", ok: false, error: { code: "presence_refused", message: "presence refused", reason: "counter_not_increased" } });
  await assert.rejects(a, (e) => e instanceof BridgeError && e.code === "presence_refused" && e.reason === "counter_not_increased");
  const b = table.add("2");
  table.settle({ id: "2", ok: false, error: { code: "presence_refused", reason: "<img src=x onerror=alert(1)>" } });
  await assert.rejects(b, (e) => e.reason === null);
  const c = table.add("3");
  table.settle({ id: "3", ok: false, error: { code: "presence_refused" } });
  await assert.rejects(c, (e) => e.reason === null);
});

test("the options page's relay answers a refused tap with its reason; other refusals stay as they were", async () => {
  const fail = (reason) => async () => {
    const e = new BridgeError("presence_refused", "presence refused");
    e.reason = reason;
    throw e;
  };
  const detail = '{"eval":true}';
  const relay = createPolicyRelay({ hostCall: fail("not_verified") });
  const id = "abc";
  const ctx = { extensionId: id, pageUrl: `chrome-extension://${id}/options.html` };
  const page = { id, url: ctx.pageUrl };
  assert.deepEqual(await pageRouter(ctx.extensionId, relay.messages)({ type: "presence_begin", action: "policy.widen", detail }, page),
    { ok: false, code: "presence_refused", reason: "not_verified" });
  const plain = createPolicyRelay({ hostCall: async () => { throw new BridgeError("killed", "no"); } });
  assert.deepEqual(await pageRouter(ctx.extensionId, plain.messages)({ type: "presence_begin", action: "policy.widen", detail }, page),
    { ok: false, code: "killed" });
});

test("words for each reason; an unknown or missing reason adds nothing", () => {
  assert.match(reasonText("counter_not_increased"), /sign counter did not increase \(a cloned key\?\)/);
  assert.equal(reasonText("constructor"), "", "own keys only");
  assert.equal(reasonText(undefined), "");
  assert.equal(refusedText("presence_refused", "nope"), "refused: presence_refused");
  assert.equal(refusedText("presence_refused", "no_answer"), `refused: presence_refused — ${REASON_TEXT.no_answer}`);
  for (const words of Object.values(REASON_TEXT)) assert.doesNotMatch(words, /[<>]/);
});
