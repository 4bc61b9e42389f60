import { test } from "node:test";
import assert from "node:assert/strict";
import { runOptionsPage } from "../../extension/ui/options-page.js";

function fakeDoc() {
  const els = new Map();
  for (const id of ["pairing", "fingerprint", "gate", "status", "code", "pair", "window-only", "host-key-alarm", "pair-block", "pair-summary"]) {
    const listeners = [];
    const classes = new Set();
    els.set(id, {
      id, textContent: "", value: "", disabled: false, checked: false, classes, hidden: id === "host-key-alarm", open: true,
      classList: { toggle: (c, on) => (on ? classes.add(c) : classes.delete(c)) },
      addEventListener: (type, fn) => { if (type === "click") listeners.push(fn); },
      click() { for (const fn of listeners) fn(); },
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
    });
  }
  return { getElementById: (id) => els.get(id) ?? null, el: (id) => els.get(id) };
}

function make({ status = { ok: true, gate: "unpinned", paired: false }, begin, complete, create, get } = {}) {
  const doc = fakeDoc();
  const sent = [];
  const created = [];
  const api = {
    sendMessage: async (m) => {
      sent.push(m);
      if (m.type === "options_status") return status;
      if (m.type === "pair_begin") return begin ?? { ok: true, options: { publicKey: { challenge: "AA" } }, fingerprint: "SHA256:xy", hostKey: "K", browser: "chromium", challengeId: "ch1" };
      if (m.type === "pair_complete") {
        status = { ok: true, gate: "trusted", paired: true, fingerprint: "SHA256:xy", browser: "chromium" };
        return complete ?? { ok: true, fingerprint: "SHA256:xy", browser: "chromium", credentialId: "c" };
      }
      return undefined;
    },
    createCredential: create ?? (async (o) => { created.push(o); return { id: "c", type: "public-key", response: {} }; }),
    getAssertion: get ?? (async (o) => { created.push({ get: o }); return { id: "a", type: "public-key", response: {} }; }),
  };
  const paired = [];
  return { doc, sent, created, paired, run: () => runOptionsPage({ doc, api, onPaired: () => paired.push(true) }) };
}

test("not paired: says so, with the gate state", async () => {
  const h = make();
  await h.run();
  assert.match(h.doc.el("pairing").textContent, /^Not paired/);
  assert.match(h.doc.el("gate").textContent, /no host key pinned/);
});

test("compromised: red COMPROMISED with pair-again text", async () => {
  const h = make({ status: { ok: true, gate: "compromised", paired: true, fingerprint: "SHA256:xy", browser: "chromium" } });
  await h.run();
  assert.match(h.doc.el("pairing").textContent, /^COMPROMISED.*[Pp]air again/);
  assert.ok(h.doc.el("pairing").classes.has("compromised"));
});

test("pairing: pair_begin with the code, create() with options.publicKey, pair_complete with toJSON", async () => {
  const h = make();
  const page = await h.run();
  h.doc.el("code").value = "123-456";
  assert.match(await page.pair(), /^paired/);
  assert.deepEqual(h.sent[1], { type: "pair_begin", code: "123-456" });
  assert.deepEqual(h.created, [{ challenge: "AA" }]);
  assert.deepEqual(h.sent[2], { type: "pair_complete", challengeId: "ch1", response: { id: "c", type: "public-key", response: {} } });
  assert.match(h.doc.el("status").textContent, /^paired/);
  assert.equal(h.doc.el("fingerprint").textContent, "SHA256:xy");
  assert.match(h.doc.el("pairing").textContent, /^Paired with chromium/);
  assert.equal(h.doc.el("pair").disabled, false);
  assert.deepEqual(h.paired, [true], "the Policy section is told to re-render");
});

test("a refused pairing says the host's reason in words, next to the Pair button", async () => {
  const a = make({ begin: { ok: false, code: "presence_refused", reason: "code_refused" } });
  assert.equal(await (await a.run()).pair(),
    "refused: presence_refused — the pairing code is wrong, used, expired or for another browser: check it is typed as printed, "
    + "or get a new one with `tabwarden pair --browser LABEL` (LABEL: this browser, e.g. chromium)");
  // Never `tabwarden pair` alone: once paired, it answers already_paired.
  assert.doesNotMatch(a.doc.el("status").textContent, /run tabwarden pair again|`tabwarden pair`[^ ]/);
  assert.match(a.doc.el("status").textContent, /pairing code is wrong/);
  const b = make({ complete: { ok: false, code: "presence_refused", reason: "<script>" } });
  assert.equal(await (await b.run()).pair(), "refused: presence_refused", "an unknown reason adds nothing");
});

test("refusals: host code, authenticator failure, completion refusal", async () => {
  const a = make({ begin: { ok: false, code: "presence_refused" } });
  assert.equal(await (await a.run()).pair(), "refused: presence_refused");
  assert.equal(a.doc.el("status").textContent, "refused: presence_refused");
  assert.deepEqual(a.paired, []);
  const b = make({ create: async () => { throw new DOMException("no", "NotAllowedError"); } });
  assert.match(await (await b.run()).pair(), /^refused: presence_refused \(no authenticator answered; to pair without one/);
  // The code is spent: a new one comes from `pair --browser LABEL` (`pair` alone answers already_paired).
  assert.match(b.doc.el("status").textContent, /a new code from `tabwarden pair --browser LABEL`/);
  assert.equal(b.sent.some((m) => m.type === "pair_complete"), false);
  const c = make({ complete: { ok: false, code: "host_compromised" } });
  assert.equal(await (await c.run()).pair(), "refused: host_compromised");
  const d = make({ begin: { ok: true, options: { challenge: "BB" }, challengeId: "x" } });
  await (await d.run()).pair();
  assert.deepEqual(d.created, [{ challenge: "BB" }], "options without a publicKey wrapper are used as is");
});

test("a second browser: an enrolled credential approves first, then create(); both go to pair_complete", async () => {
  const approval = { challengeId: "ap1", options: { publicKey: { challenge: "CC", allowCredentials: [{ id: "old", type: "public-key" }] } } };
  const h = make({ begin: { ok: true, options: { publicKey: { challenge: "AA" } }, fingerprint: "SHA256:xy", browser: "chrome", challengeId: "ch1", approval } });
  const page = await h.run();
  h.doc.el("code").value = "123-456";
  assert.match(await page.pair(), /^paired/);
  assert.deepEqual(h.created, [{ get: approval.options.publicKey }, { challenge: "AA" }], "approval get() before create()");
  const complete = h.sent.find((m) => m.type === "pair_complete");
  assert.deepEqual(complete, { type: "pair_complete", challengeId: "ch1", approval: { challengeId: "ap1", response: { id: "a", type: "public-key", response: {} } },
    response: { id: "c", type: "public-key", response: {} } });
});

test("a second browser whose approval fails sends nothing and says why", async () => {
  const approval = { challengeId: "ap1", options: { challenge: "CC" } };
  const h = make({ begin: { ok: true, options: { challenge: "AA" }, challengeId: "ch1", approval },
    get: async () => { throw new DOMException("no", "NotAllowedError"); } });
  assert.match(await (await h.run()).pair(), /^refused: presence_refused \(no enrolled credential approved/);
  assert.match(h.doc.el("status").textContent, /a new code from `tabwarden pair --browser LABEL`/);
  assert.doesNotMatch(h.doc.el("status").textContent, /`tabwarden pair` again/);
  assert.equal(h.sent.some((m) => m.type === "pair_complete"), false);
  assert.deepEqual(h.created, [], "no credential is created without the approval");
});

test("window-only: no create(), pair_complete says windowOnly, the status says software confirmation", async () => {
  const h = make({ complete: { ok: true, fingerprint: "SHA256:xy", browser: "chromium", credentialId: null, windowOnly: true } });
  const page = await h.run();
  h.doc.el("code").value = "123-456";
  h.doc.el("window-only").checked = true;
  assert.equal(await page.pair(), "paired with chromium, no authenticator (software confirmation)");
  assert.deepEqual(h.created, []);
  assert.deepEqual(h.sent.find((m) => m.type === "pair_complete"), { type: "pair_complete", challengeId: "ch1", windowOnly: true });
});

test("paired window-only is shown as software confirmation", async () => {
  const h = make({ status: { ok: true, gate: "trusted", paired: true, fingerprint: "SHA256:xy", browser: "edge", windowOnly: true } });
  await h.run();
  assert.match(h.doc.el("pairing").textContent, /^Paired with edge .*no authenticator: confirmations are a click in a window \(software confirmation\)/);
});

test("once paired the form folds under the status; a host that cannot prove its key raises the alarm and unfolds it", async () => {
  const h = make({ status: { ok: true, gate: "trusted", paired: true, fingerprint: "SHA256:xy", browser: "chromium" } });
  await h.run();
  assert.equal(h.doc.el("pair-block").open, false);
  assert.match(h.doc.el("pair-summary").textContent, /^Pair this browser again/);
  assert.equal(h.doc.el("host-key-alarm").hidden, true);
  const c = make({ status: { ok: true, gate: "compromised", paired: true, fingerprint: "SHA256:xy", browser: "chromium" } });
  await c.run();
  assert.equal(c.doc.el("host-key-alarm").hidden, false, "a loud notice");
  assert.equal(c.doc.el("pair-block").open, true, "the way out, pairing again, is open");
  const n = make();
  await n.run();
  assert.equal(n.doc.el("pair-block").open, true);
  assert.equal(n.doc.el("pair-summary").textContent, "Pairing");
  // Pairing folds it.
  n.doc.el("code").value = "4821-9037";
  await n.run().then((p) => p.pair());
  assert.equal(n.doc.el("pair-block").open, false);
});
