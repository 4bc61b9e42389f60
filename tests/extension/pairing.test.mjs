import { test } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync, sign } from "node:crypto";
import { createPairing } from "../../extension/worker/pairing.js";
import { senderTier } from "../../extension/worker/message-router.js";
import { PROOF_LABEL, PIN_STORAGE_KEY, createPinGate, fromBase64 } from "../../extension/worker/pinning.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { fakeLog, fakeTimers, pageRouter } from "./helpers/fakes.mjs";

const EXT_ID = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const PAGE = `chrome-extension://${EXT_ID}/options.html`;
const CTX = { extensionId: EXT_ID, pageUrl: PAGE };
const OK_SENDER = { id: EXT_ID, url: PAGE };

function key() {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    spkiB64: publicKey.export({ type: "spki", format: "der" }).toString("base64"),
    sign: (nonce) => sign("sha256", Buffer.concat([Buffer.from(PROOF_LABEL), Buffer.from(nonce)]), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64"),
  };
}
const HOST = key();

function make({ prover = HOST, completeError = null, approval = undefined, completeResult = { credentialId: "cred-1" } } = {}) {
  const calls = [];
  const stored = [];
  const hostCall = async (action, args) => {
    calls.push([action, args]);
    if (action === "pair_begin") {
      if (args.code !== "123-456") throw new BridgeError("presence_refused", "bad code");
      return { hostKey: HOST.spkiB64, fingerprint: "SHA256:xy", browser: "chromium", challengeId: "ch1", options: { publicKey: { challenge: "AA" } }, approval };
    }
    if (action === "pair_complete") {
      if (completeError) throw new BridgeError(completeError, "no");
      return completeResult;
    }
    if (action === "host_proof") return { signature: prover.sign(fromBase64(args.nonce)) };
    throw new Error(action);
  };
  const randomBytes = (n) => globalThis.crypto.getRandomValues(new Uint8Array(n));
  const gate = createPinGate({ hostCall, subtle: globalThis.crypto.subtle, randomBytes, timers: fakeTimers(), log: fakeLog() });
  gate.setPinned(undefined);
  const pairing = createPairing({
    hostCall, gate, subtle: globalThis.crypto.subtle, randomBytes, nowMs: () => 0,
    storageSet: async (k, v) => { stored.push([k, v]); },
  });
  const send = (msg, sender = OK_SENDER) => pageRouter(CTX.extensionId, pairing.messages)(msg, sender);
  return { calls, stored, gate, send };
}

test("only this extension's options page is answered", async () => {
  const self = { extensionId: EXT_ID, pageUrl: (p) => `chrome-extension://${EXT_ID}/${p}` };
  assert.equal(senderTier(OK_SENDER, self).tier, "options");
  assert.equal(senderTier({ ...OK_SENDER, url: `${PAGE}?x=1#y` }, self).tier, "options");
  for (const s of [undefined, {}, { id: "other", url: PAGE }, { id: EXT_ID, url: "https://evil.test/options.html" },
    { id: EXT_ID, url: `chrome-extension://${EXT_ID}/confirm.html` }, { id: EXT_ID, url: `${PAGE}.evil` }, { id: EXT_ID }]) {
    assert.notEqual(senderTier(s, self).tier, "options", JSON.stringify(s));
  }
  assert.equal(senderTier(OK_SENDER, { ...self, extensionId: "" }).tier, null);
  const h = make();
  assert.equal(h.send({ type: "confirm_answer" }), undefined, "not ours");
  assert.deepEqual(await h.send({ type: "pair_begin", code: "123-456" }, { id: EXT_ID, url: "https://evil.test/" }), { ok: false, code: "bad_request" });
  assert.deepEqual(await h.send({ type: "options_status" }, { id: "x", url: PAGE }), { ok: false, code: "bad_request" });
  assert.equal(h.calls.length, 0);
});

test("pair_begin -> pair_complete proves the key, pins the record, marks the gate trusted", async () => {
  const h = make();
  assert.deepEqual(await h.send({ type: "options_status" }), { ok: true, gate: "unpinned", paired: false, fingerprint: null, browser: null, pairedAt: null, windowOnly: false, rolledBack: null, hostProblem: null });
  const begun = await h.send({ type: "pair_begin", code: " 123-456 " });
  assert.deepEqual(begun, { ok: true, options: { publicKey: { challenge: "AA" } }, fingerprint: "SHA256:xy", hostKey: HOST.spkiB64, browser: "chromium", challengeId: "ch1", approval: null });
  assert.deepEqual(h.calls[0], ["pair_begin", { code: "123-456" }]);
  const done = await h.send({ type: "pair_complete", challengeId: "ch1", response: { id: "cred-1", type: "public-key" }, hostKey: "ATTACKER" });
  assert.deepEqual(done, { ok: true, fingerprint: "SHA256:xy", browser: "chromium", credentialId: "cred-1", windowOnly: false });
  assert.deepEqual(h.calls[1], ["pair_complete", { challengeId: "ch1", response: { id: "cred-1", type: "public-key" } }]);
  assert.equal(h.calls[2][0], "host_proof");
  const record = { hostKey: HOST.spkiB64, fingerprint: "SHA256:xy", browser: "chromium", credentialId: "cred-1", pairedAt: "1970-01-01T00:00:00.000Z" };
  assert.deepEqual(h.stored, [[PIN_STORAGE_KEY, record]]);
  assert.equal(h.gate.snapshot().state, "trusted");
  const status = await h.send({ type: "options_status" });
  assert.equal(status.paired, true);
  assert.equal(status.fingerprint, "SHA256:xy");
  // the challenge is single use
  assert.deepEqual(await h.send({ type: "pair_complete", challengeId: "ch1", response: {} }), { ok: false, code: "bad_request" });
});

test("refusals carry the host's code; nothing is pinned", async () => {
  const h = make();
  assert.deepEqual(await h.send({ type: "pair_begin", code: "wrong" }), { ok: false, code: "presence_refused" });
  assert.deepEqual(await h.send({ type: "pair_begin", code: "" }), { ok: false, code: "bad_request" });
  assert.deepEqual(await h.send({ type: "pair_complete", challengeId: "ch1", response: {} }), { ok: false, code: "bad_request" }, "no pair_begin");
  const r = make({ completeError: "presence_refused" });
  await r.send({ type: "pair_begin", code: "123-456" });
  assert.deepEqual(await r.send({ type: "pair_complete", challengeId: "other", response: {} }), { ok: false, code: "bad_request" });
  assert.deepEqual(await r.send({ type: "pair_complete", challengeId: "ch1", response: {} }), { ok: false, code: "presence_refused" });
  assert.deepEqual([...h.stored, ...r.stored], []);
});

test("a host that cannot prove the key it offered is not pinned", async () => {
  const h = make({ prover: key() });
  await h.send({ type: "pair_begin", code: "123-456" });
  assert.deepEqual(await h.send({ type: "pair_complete", challengeId: "ch1", response: {} }), { ok: false, code: "host_compromised" });
  assert.deepEqual(h.stored, []);
  assert.equal(h.gate.snapshot().state, "unpinned");
});

test("a second browser: the approval is relayed only for the approval pair_begin asked for", async () => {
  const approval = { challengeId: "ap1", options: { publicKey: { challenge: "CC" } } };
  const h = make({ approval });
  const begun = await h.send({ type: "pair_begin", code: "123-456" });
  assert.deepEqual(begun.approval, approval);
  const answer = { id: "old", type: "public-key" };
  // Without the approval, or for another challenge, nothing reaches the host.
  assert.deepEqual(await h.send({ type: "pair_complete", challengeId: "ch1", response: {} }), { ok: false, code: "bad_request" });
  assert.deepEqual(await h.send({ type: "pair_complete", challengeId: "ch1", response: {}, approval: { challengeId: "other", response: answer } }),
    { ok: false, code: "bad_request" });
  assert.equal(h.calls.filter(([a]) => a === "pair_complete").length, 0);
  const done = await h.send({ type: "pair_complete", challengeId: "ch1", response: { id: "new" }, approval: { challengeId: "ap1", response: answer, extra: "dropped" } });
  assert.equal(done.ok, true);
  assert.deepEqual(h.calls.find(([a]) => a === "pair_complete")[1],
    { challengeId: "ch1", response: { id: "new" }, approval: { challengeId: "ap1", response: answer } });
});

test("an approval the host never asked for is refused, and a malformed one from the host is an error", async () => {
  const h = make();
  await h.send({ type: "pair_begin", code: "123-456" });
  assert.deepEqual(await h.send({ type: "pair_complete", challengeId: "ch1", response: {}, approval: { challengeId: "x", response: {} } }),
    { ok: false, code: "bad_request" });
  const bad = make({ approval: { challengeId: 5, options: {} } });
  assert.deepEqual(await bad.send({ type: "pair_begin", code: "123-456" }), { ok: false, code: "internal_error" });
});

test("window-only: pinned with no credential after the host proves its key", async () => {
  const h = make({ completeResult: { windowOnly: true } });
  await h.send({ type: "pair_begin", code: "123-456" });
  assert.deepEqual(await h.send({ type: "pair_complete", challengeId: "ch1", windowOnly: true, response: {} }), { ok: false, code: "bad_request" },
    "windowOnly carries no credential");
  await h.send({ type: "pair_begin", code: "123-456" });
  const done = await h.send({ type: "pair_complete", challengeId: "ch1", windowOnly: true });
  assert.deepEqual(done, { ok: true, fingerprint: "SHA256:xy", browser: "chromium", credentialId: null, windowOnly: true });
  assert.deepEqual(h.calls.filter(([a]) => a === "pair_complete").map(([, args]) => args), [{ challengeId: "ch1", windowOnly: true }]);
  assert.equal(h.stored.length, 1);
  assert.equal(h.stored[0][1].windowOnly, true);
  assert.equal(h.stored[0][1].credentialId, null);
  assert.equal(h.gate.snapshot().state, "trusted");
  assert.equal((await h.send({ type: "options_status" })).windowOnly, true);
});

test("window-only asked but the host paired nothing window-only: nothing is pinned", async () => {
  const h = make({ completeResult: { credentialId: "" } });
  await h.send({ type: "pair_begin", code: "123-456" });
  assert.deepEqual(await h.send({ type: "pair_complete", challengeId: "ch1", windowOnly: true }), { ok: false, code: "internal_error" });
  assert.deepEqual(h.stored, []);
});
