import { test } from "node:test";
import assert from "node:assert/strict";
import { createPolicyRelay, validDetail } from "../../extension/worker/policy-relay.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { pageRouter } from "./helpers/fakes.mjs";

const EXT_ID = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const PAGE = `chrome-extension://${EXT_ID}/options.html`;
const CTX = { extensionId: EXT_ID, pageUrl: PAGE };
const OK_SENDER = { id: EXT_ID, url: PAGE };
const POLICY = { origins: ["https://a.test"], eval: false, upload: false, confirm: true };

function make({ replies = {} } = {}) {
  const calls = [];
  const hostCall = async (action, args) => {
    calls.push([action, args]);
    const r = replies[action];
    if (r instanceof Error) throw r;
    if (r !== undefined) return typeof r === "function" ? r(args) : r;
    if (action === "policy_get") return { policy: POLICY, killed: false, epoch: 3, browsers: ["chromium"], enrolled: true };
    if (action === "presence_begin") return { challengeId: "ch1", options: { publicKey: { challenge: "AA" } } };
    if (action === "presence_complete") return { done: true, epoch: 4 };
    return {};
  };
  const relay = createPolicyRelay({ hostCall });
  const send = (msg, ...sender) => pageRouter(CTX.extensionId, relay.messages)(msg, sender.length > 0 ? sender[0] : OK_SENDER);
  return { calls, send };
}

test("only this extension's options page reaches the host's policy actions", async () => {
  const h = make();
  assert.equal(h.send({ type: "pair_begin" }), undefined, "not ours");
  assert.equal(h.send({ type: "confirm_answer" }), undefined, "not ours");
  const evil = [undefined, {}, { id: "other", url: PAGE }, { id: EXT_ID, url: "https://evil.test/options.html" },
    { id: EXT_ID, url: `chrome-extension://${EXT_ID}/confirm.html` }, { id: EXT_ID, url: `${PAGE}.evil` }, { id: EXT_ID }];
  const msgs = [{ type: "policy_get" }, { type: "presence_begin", action: "unkill", detail: "" },
    { type: "presence_complete", challengeId: "ch1", action: "unkill", detail: "", response: {} },
    { type: "policy_restrict", key: "eval", value: false }, { type: "kill" }];
  for (const sender of evil) {
    for (const msg of msgs) assert.deepEqual(await h.send(msg, sender), { ok: false, code: "bad_request" }, `${msg.type} ${JSON.stringify(sender)}`);
  }
  assert.equal(h.calls.length, 0);
  assert.equal((await h.send({ type: "policy_get" }, { ...OK_SENDER, url: `${PAGE}#x` })).ok, true);
});

test("policy_get relays window-only and the credentials, never more than id, date and uv", async () => {
  const h = make({ replies: { policy_get: { policy: POLICY, killed: false, epoch: 3, browsers: ["chromium"], enrolled: true, windowOnly: false,
    credentials: [{ credentialId: "abc", enrolledAt: 5, uv: true, publicKey: "SHOULD-NOT-PASS" }, { nope: 1 }, "x"] } } });
  const got = await h.send({ type: "policy_get" });
  assert.deepEqual(got.credentials, [{ credentialId: "abc", enrolledAt: 5, uv: true }]);
  const w = make({ replies: { policy_get: { policy: POLICY, killed: false, epoch: 3, browsers: ["edge"], enrolled: false, windowOnly: true } } });
  const got2 = await w.send({ type: "policy_get" });
  assert.equal(got2.windowOnly, true);
  assert.deepEqual(got2.credentials, []);
});

test("policy_get relays the host's answer", async () => {
  const h = make();
  assert.deepEqual(await h.send({ type: "policy_get", extra: 1 }), { ok: true, policy: POLICY, killed: false, epoch: 3, browsers: ["chromium"], enrolled: true, windowOnly: false, credentials: [] });
  assert.deepEqual(h.calls, [["policy_get", {}]]);
  const bad = make({ replies: { policy_get: { policy: "x" } } });
  assert.deepEqual(await bad.send({ type: "policy_get" }), { ok: false, code: "internal_error" });
  const down = make({ replies: { policy_get: new BridgeError("extension_not_connected", "no") } });
  assert.deepEqual(await down.send({ type: "policy_get" }), { ok: false, code: "extension_not_connected" });
});

test("details: canonical JSON of a non-empty object for policy.widen, empty for unkill", () => {
  assert.equal(validDetail("policy.widen", "{\"eval\":true}"), true);
  assert.equal(validDetail("policy.widen", "{\"eval\":true,\"origins\":[\"https://b.test\",\"https://a.test\"]}"), true);
  for (const d of ["{\"eval\": true}", "{\"upload\":true,\"eval\":true}", "{}", "[]", "true", "", "{", 5]) {
    assert.equal(validDetail("policy.widen", d), false, String(d));
  }
  assert.equal(validDetail("unkill", ""), true);
  assert.equal(validDetail("unkill", "{}"), false);
  assert.equal(validDetail("kill", ""), false);
});

test("a tap: presence_begin then presence_complete for exactly the begun action and detail, once", async () => {
  const h = make();
  assert.deepEqual(await h.send({ type: "presence_begin", action: "policy.widen", detail: "{\"eval\": true}" }), { ok: false, code: "bad_request" });
  assert.deepEqual(await h.send({ type: "presence_begin", action: "kill", detail: "" }), { ok: false, code: "bad_request" });
  assert.deepEqual(await h.send({ type: "presence_complete", challengeId: "ch1", action: "policy.widen", detail: "{\"eval\":true}", response: {} }),
    { ok: false, code: "bad_request" }, "nothing begun");
  assert.equal(h.calls.length, 0);
  const begun = await h.send({ type: "presence_begin", action: "policy.widen", detail: "{\"eval\":true}" });
  assert.deepEqual(begun, { ok: true, challengeId: "ch1", options: { publicKey: { challenge: "AA" } } });
  assert.deepEqual(h.calls[0], ["presence_begin", { action: "policy.widen", detail: "{\"eval\":true}" }]);
  for (const wrong of [{ challengeId: "other" }, { action: "unkill" }, { detail: "{\"upload\":true}" }, { response: "x" }]) {
    const msg = { type: "presence_complete", challengeId: "ch1", action: "policy.widen", detail: "{\"eval\":true}", response: { id: "c" }, ...wrong };
    assert.deepEqual(await h.send(msg), { ok: false, code: "bad_request" }, JSON.stringify(wrong));
  }
  const done = await h.send({ type: "presence_complete", challengeId: "ch1", action: "policy.widen", detail: "{\"eval\":true}", response: { id: "c" } });
  assert.deepEqual(done, { ok: true, done: true, epoch: 4 });
  assert.deepEqual(h.calls[1], ["presence_complete", { challengeId: "ch1", action: "policy.widen", detail: "{\"eval\":true}", response: { id: "c" } }]);
  assert.deepEqual(await h.send({ type: "presence_complete", challengeId: "ch1", action: "policy.widen", detail: "{\"eval\":true}", response: { id: "c" } }),
    { ok: false, code: "bad_request" }, "single use");
  assert.equal(h.calls.length, 2);
});

test("tap refusals carry the host's code", async () => {
  const h = make({ replies: { presence_begin: new BridgeError("presence_refused", "not enrolled") } });
  assert.deepEqual(await h.send({ type: "presence_begin", action: "unkill", detail: "" }), { ok: false, code: "presence_refused" });
  const c = make({ replies: { presence_complete: new BridgeError("presence_refused", "bad assertion") } });
  await c.send({ type: "presence_begin", action: "unkill", detail: "" });
  assert.deepEqual(await c.send({ type: "presence_complete", challengeId: "ch1", action: "unkill", detail: "", response: {} }), { ok: false, code: "presence_refused" });
});

test("policy_restrict and kill are free: relayed straight to the host", async () => {
  const h = make();
  assert.deepEqual(await h.send({ type: "policy_restrict", key: "eval", value: false }), { ok: true });
  assert.deepEqual(await h.send({ type: "policy_restrict", key: "origins", value: [] }), { ok: true });
  assert.deepEqual(await h.send({ type: "kill" }), { ok: true });
  assert.deepEqual(h.calls, [["policy_restrict", { key: "eval", value: false }], ["policy_restrict", { key: "origins", value: [] }], ["kill", {}]]);
  for (const bad of [{ key: "", value: false }, { key: "eval" }, { key: 5, value: false }, { key: "x".repeat(65), value: 1 }, { key: "eval", value: 0.5 }]) {
    assert.deepEqual(await h.send({ type: "policy_restrict", ...bad }), { ok: false, code: "bad_request" }, JSON.stringify(bad));
  }
  assert.equal(h.calls.length, 3);
  const r = make({ replies: { kill: new BridgeError("internal_error", "x"), policy_restrict: { ok: false, epoch: 5 } } });
  assert.deepEqual(await r.send({ type: "kill" }), { ok: false, code: "internal_error" });
  assert.deepEqual(await r.send({ type: "policy_restrict", key: "eval", value: false }), { ok: true, epoch: 5 }, "the host's fields cannot override ok");
});
