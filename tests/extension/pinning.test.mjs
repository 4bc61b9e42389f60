import { test } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync, sign } from "node:crypto";
import { createPinGate, fromBase64, parsePinnedRecord, proveHost, toBase64, verifyHostProof, PROOF_LABEL } from "../../extension/worker/pinning.js";
import { fakeLog, fakeTimers, flush } from "./helpers/fakes.mjs";

const { subtle } = globalThis.crypto;

/** A real P-256 host key: SPKI base64 and a signer producing raw r||s (what WebCrypto verifies). */
function hostKey() {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const spkiB64 = publicKey.export({ type: "spki", format: "der" }).toString("base64");
  const signNonce = (nonce) => sign("sha256", Buffer.concat([Buffer.from(PROOF_LABEL, "utf8"), Buffer.from(nonce)]),
    { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64");
  return { spkiB64, signNonce };
}
const A = hostKey();
const B = hostKey();
const nonce = () => globalThis.crypto.getRandomValues(new Uint8Array(32));

test("verifyHostProof: good signature true; other key, tampered nonce, malformed false", async () => {
  const n = nonce();
  const sig = A.signNonce(n);
  assert.equal(fromBase64(sig).length, 64);
  assert.equal(await verifyHostProof({ spkiB64: A.spkiB64, nonce: n, signatureB64: sig, subtle }), true);
  assert.equal(await verifyHostProof({ spkiB64: B.spkiB64, nonce: n, signatureB64: sig, subtle }), false);
  const t = Uint8Array.from(n);
  t[0] ^= 1;
  assert.equal(await verifyHostProof({ spkiB64: A.spkiB64, nonce: t, signatureB64: sig, subtle }), false);
  // no label: a signature over the bare nonce is not a proof
  const bare = sign("sha256", Buffer.from(n), { key: generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey, dsaEncoding: "ieee-p1363" });
  assert.equal(await verifyHostProof({ spkiB64: A.spkiB64, nonce: n, signatureB64: bare.toString("base64"), subtle }), false);
  for (const bad of [
    { signatureB64: "" }, { signatureB64: "!!!!" }, { signatureB64: 42 }, { signatureB64: toBase64(new Uint8Array(63)) },
    { signatureB64: toBase64(new Uint8Array(64)) }, { spkiB64: "AAAA" }, { spkiB64: null }, { nonce: n.slice(0, 31) }, { nonce: "x" },
  ]) {
    assert.equal(await verifyHostProof({ spkiB64: A.spkiB64, nonce: n, signatureB64: sig, subtle, ...bad }), false, JSON.stringify(bad));
  }
});

test("proveHost sends a fresh 32-byte base64 nonce as host_proof", async () => {
  const calls = [];
  const hostCall = async (action, args) => { calls.push([action, args]); return { signature: A.signNonce(fromBase64(args.nonce)) }; };
  const randomBytes = (n) => globalThis.crypto.getRandomValues(new Uint8Array(n));
  assert.equal(await proveHost({ spkiB64: A.spkiB64, hostCall, subtle, randomBytes }), true);
  assert.equal(await proveHost({ spkiB64: A.spkiB64, hostCall, subtle, randomBytes }), true);
  assert.equal(calls[0][0], "host_proof");
  assert.equal(fromBase64(calls[0][1].nonce).length, 32);
  assert.notEqual(calls[0][1].nonce, calls[1][1].nonce);
  assert.equal(await proveHost({ spkiB64: B.spkiB64, hostCall, subtle, randomBytes }), false);
  assert.equal(await proveHost({ spkiB64: A.spkiB64, hostCall: async () => { throw new Error("x"); }, subtle, randomBytes }), false);
  assert.equal(await proveHost({ spkiB64: A.spkiB64, hostCall: async () => null, subtle, randomBytes }), false);
});

const record = (key = A, extra = {}) => ({ hostKey: key.spkiB64, fingerprint: "SHA256:ab", browser: "chromium", credentialId: "cred", pairedAt: "2025-01-01T00:00:00.000Z", ...extra });

/** A gate whose host answers host_proof with `signer` (or `mode`: "hang" | "error"). */
function gate({ signer = A, mode = "sign" } = {}) {
  const timers = fakeTimers();
  const compromised = [];
  const h = { timers, compromised, signer, mode, proofs: 0 };
  h.gate = createPinGate({
    hostCall: async (action, args) => {
      assert.equal(action, "host_proof");
      h.proofs += 1;
      if (h.mode === "hang") return new Promise(() => {});
      if (h.mode === "error") throw new Error("nope");
      return { signature: h.signer.signNonce(fromBase64(args.nonce)) };
    },
    subtle,
    randomBytes: (n) => globalThis.crypto.getRandomValues(new Uint8Array(n)),
    timers,
    onCompromised: (r) => compromised.push(r),
    log: fakeLog(),
  });
  return h;
}
// WebCrypto verify() finishes on libuv's thread pool: under a loaded parallel test run a few
// setImmediate turns are not always enough, so also give it a few real milliseconds.
const settle = async () => {
  for (let i = 0; i < 5; i++) await flush();
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 3));
  for (let i = 0; i < 5; i++) await flush();
};

test("unpinned passes requests; nothing is asked of the host", async () => {
  const h = gate();
  h.gate.setPinned(undefined);
  h.gate.onWelcome();
  assert.equal(h.gate.snapshot().state, "unpinned");
  assert.equal(await h.gate.admit(), null);
  assert.equal(h.proofs, 0);
});

test("before the record is read, requests wait; then are served", async () => {
  const h = gate();
  const p = h.gate.admit();
  h.gate.setPinned(null);
  assert.equal(await p, null);
  const q = gate();
  const r = q.gate.admit();
  q.timers.advance(5_000);
  assert.equal(await r, "host_compromised", "a record never read keeps the gate closed");
});

test("pinned + good proof after welcome -> trusted; waiting requests then proceed", async () => {
  const h = gate();
  h.gate.setPinned(record());
  assert.equal(h.gate.snapshot().state, "verifying");
  const waiting = h.gate.admit();
  h.gate.onWelcome();
  await settle();
  assert.equal(h.gate.snapshot().state, "trusted");
  assert.equal(await waiting, null);
  assert.equal(await h.gate.admit(), null);
  // a reconnect proves again
  h.gate.onClosed();
  assert.equal(h.gate.snapshot().state, "verifying");
  h.gate.onWelcome();
  await settle();
  assert.equal(h.proofs, 2);
  assert.equal(h.gate.snapshot().state, "trusted");
  // the record echoing back from storage does not re-verify
  h.gate.setPinned(record());
  assert.equal(h.gate.snapshot().state, "trusted");
  assert.equal(h.proofs, 2);
});

test("bad proof (other key) -> compromised, requests refused, persisted; sticky across welcomes", async () => {
  const h = gate({ signer: B });
  h.gate.onWelcome();
  h.gate.setPinned(record()); // record read after the welcome: verifies at once
  await settle();
  assert.equal(h.gate.snapshot().state, "compromised");
  assert.equal(await h.gate.admit(), "host_compromised");
  assert.equal(h.compromised.length, 1);
  h.signer = A;
  h.gate.onClosed();
  h.gate.onWelcome();
  await settle();
  assert.equal(h.gate.snapshot().state, "compromised", "only pairing again clears it");
  h.gate.setPinned(record(A, { compromisedAt: "2025-01-02T00:00:00.000Z" }));
  assert.equal(h.gate.snapshot().state, "compromised");
});

test("a stored compromisedAt starts compromised (worker restart)", async () => {
  const h = gate();
  h.gate.setPinned(record(A, { compromisedAt: "x" }));
  h.gate.onWelcome();
  await settle();
  assert.equal(h.proofs, 0);
  assert.equal(await h.gate.admit(), "host_compromised");
});

test("proof error or no answer -> compromised; requests wait at most 5 s", async () => {
  const e = gate({ mode: "error" });
  e.gate.setPinned(record());
  e.gate.onWelcome();
  await settle();
  assert.equal(e.gate.snapshot().state, "compromised");

  const h = gate({ mode: "hang" });
  h.gate.setPinned(record());
  h.gate.onWelcome();
  const p = h.gate.admit();
  h.timers.advance(4_999);
  await flush();
  let answered = false;
  p.then(() => { answered = true; });
  await flush();
  assert.equal(answered, false);
  h.timers.advance(1);
  assert.equal(await p, "host_compromised");
});

test("re-pin after pairing -> trusted; removing the record -> unpinned", async () => {
  const h = gate({ signer: B });
  h.gate.setPinned(record());
  h.gate.onWelcome();
  await settle();
  assert.equal(h.gate.snapshot().state, "compromised");
  const fresh = record(B, { pairedAt: "2025-02-01T00:00:00.000Z" });
  h.gate.markPaired(fresh);
  assert.equal(h.gate.snapshot().state, "trusted");
  assert.equal(await h.gate.admit(), null);
  h.gate.setPinned(fresh); // storage echo
  assert.equal(h.gate.snapshot().state, "trusted");
  h.gate.setPinned(undefined);
  assert.equal(h.gate.snapshot().state, "unpinned");
});

test("a stale proof from an earlier connection is ignored", async () => {
  const h = gate({ mode: "hang" });
  h.gate.setPinned(record());
  h.gate.onWelcome();
  h.gate.markPaired(record(A, { pairedAt: "later" }));
  assert.equal(h.gate.snapshot().state, "trusted");
});

test("parsePinnedRecord keeps only well-formed records", () => {
  assert.equal(parsePinnedRecord(null), null);
  assert.equal(parsePinnedRecord({ ...record(), hostKey: "" }), null);
  assert.equal(parsePinnedRecord({ ...record(), credentialId: 5 }), null);
  assert.deepEqual(parsePinnedRecord({ ...record(), extra: 1 }), record());
});

test("parsePinnedRecord: window-only records carry no credential, others must", () => {
  const base = { hostKey: "K", fingerprint: "F", browser: "edge", pairedAt: "T" };
  assert.deepEqual(parsePinnedRecord({ ...base, credentialId: null, windowOnly: true }), { ...base, credentialId: null, windowOnly: true });
  assert.equal(parsePinnedRecord({ ...base, credentialId: "c", windowOnly: true }), null);
  assert.equal(parsePinnedRecord({ ...base, credentialId: null }), null);
  assert.deepEqual(parsePinnedRecord({ ...base, credentialId: "c", windowOnly: "yes" }), { ...base, credentialId: "c" });
});
