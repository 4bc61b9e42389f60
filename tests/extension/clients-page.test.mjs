import { test } from "node:test";
import assert from "node:assert/strict";
import { defaultLabel, runClientsPage } from "../../extension/ui/clients-page.js";
import { createPolicyRelay, validDetail } from "../../extension/worker/policy-relay.js";
import { pageRouter } from "./helpers/fakes.mjs";

/** Elements with text/children, buttons with click listeners; created buttons are findable by id. */
function fakeDoc(ids) {
  const all = new Map();
  const make = (tag, id = null) => {
    const listeners = [];
    const el = {
      tagName: tag.toUpperCase(), _id: id, children: [], _text: "", type: "", disabled: false,
      get id() { return this._id; },
      set id(v) { this._id = v; all.set(v, this); },
      get textContent() { return this._text + this.children.map((c) => c.textContent).join(""); },
      set textContent(v) { this.children = []; this._text = String(v); },
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
      append(...nodes) { this.children.push(...nodes); },
      replaceChildren(...nodes) { this.children = [...nodes]; this._text = ""; },
      addEventListener: (type, fn) => { if (type === "click") listeners.push(fn); },
      click() { if (!el.disabled) for (const fn of listeners) fn(); },
    };
    if (id) all.set(id, el);
    return el;
  };
  for (const id of ids) make("div", id);
  return { getElementById: (id) => all.get(id) ?? null, createElement: (tag) => make(tag) };
}

const SHA = "ab".repeat(32);
const tick = () => new Promise((r) => setImmediate(r));

function harness({ begin, complete, revokeAnswer } = {}) {
  const doc = fakeDoc(["clients-paired", "clients-recent", "clients-status", "clients-hint"]);
  const sent = [];
  const assertions = [];
  let clients = [{ label: "claude", exe: "/usr/bin/claude", sha256: "cd".repeat(32), pairedAt: 1 }];
  const recent = [{ path: "/opt/My Agent/Cursor.AppImage", sha256: SHA, firstSeen: 1, lastSeen: 2 },
    { path: "/usr/bin/claude", sha256: "cd".repeat(32), firstSeen: 1, lastSeen: 2 }];
  const api = {
    sendMessage: async (m) => {
      sent.push(m);
      if (m.type === "clients_recent") return { ok: true, clients, recent };
      if (m.type === "presence_begin") return begin ?? { ok: true, challengeId: "ch1", options: { publicKey: { challenge: "AA" } } };
      if (m.type === "presence_complete") {
        if (complete) return complete;
        const d = JSON.parse(m.detail);
        clients = [...clients, { label: d.label, exe: d.exe, sha256: d.sha256, pairedAt: 3 }];
        return { ok: true, done: true, epoch: 5 };
      }
      if (m.type === "client_revoke") {
        if (revokeAnswer) return revokeAnswer;
        clients = clients.filter((c) => c.label !== m.label);
        return { ok: true, done: true, epoch: 6 };
      }
      return { ok: false, code: "bad_request" };
    },
    getAssertion: async (opts) => { assertions.push(opts); return { assertionFor: opts }; },
  };
  return { doc, sent, assertions, run: () => runClientsPage({ doc, api }) };
}

test("a re-read with the same answer keeps every node (a focused Pair button stays focused); a change rebuilds", async () => {
  const h = harness();
  const page = await h.run();
  const seen = h.doc.getElementById("clients-recent");
  const paired = h.doc.getElementById("clients-paired");
  const [pairRow] = seen.children;
  const [pairedRow] = paired.children;
  await page.refresh();
  assert.equal(seen.children[0], pairRow, "an unchanged recent list is not rebuilt");
  assert.equal(paired.children[0], pairedRow, "an unchanged paired list is not rebuilt");
  await h.doc.getElementById("revoke-client-0").click();
  for (let i = 0; i < 20 && paired.children[0] === pairedRow; i += 1) await tick();
  assert.notEqual(paired.children[0], pairedRow, "a revoked client's row goes");
  assert.equal(paired.textContent, "none");
  assert.equal(seen.children.length, 2, "the revoked client is offered again, in a rebuilt list");
});

test("defaultLabel: basename, lower-cased, invalid characters -> '-'", () => {
  assert.equal(defaultLabel("/opt/My Agent/Cursor.AppImage"), "cursor-appimage");
  assert.equal(defaultLabel("/usr/bin/claude"), "claude");
  assert.equal(defaultLabel("C:\\Tools\\Agent_X.exe"), "agent-x-exe");
  assert.equal(defaultLabel("/x/__"), "client");
  assert.match(defaultLabel(`/x/${"a".repeat(80)}`), /^[a-z0-9][a-z0-9-]{0,31}$/);
});

test("lists paired clients (label + exe) and unpaired recent spawners with Pair buttons", async () => {
  const h = harness();
  await h.run();
  assert.equal(h.doc.getElementById("clients-paired").textContent, "claude — /usr/bin/claude Revoke");
  const seen = h.doc.getElementById("clients-recent");
  assert.equal(seen.children.length, 1, "already-paired spawners get no Pair button");
  assert.match(seen.textContent, /\/opt\/My Agent\/Cursor\.AppImage/);
  assert.ok(h.doc.getElementById("pair-client-0"));
  assert.equal(h.doc.getElementById("pair-client-1"), null);
});

test("Pair: presence_begin pair_client with canonical {exe, label, sha256} -> get() -> presence_complete", async () => {
  const h = harness();
  await h.run();
  h.doc.getElementById("pair-client-0").click();
  for (let i = 0; i < 10; i += 1) await tick();
  const detail = `{"exe":"/opt/My Agent/Cursor.AppImage","label":"cursor-appimage","sha256":"${SHA}"}`;
  assert.deepEqual(h.sent[1], { type: "presence_begin", action: "pair_client", detail });
  assert.deepEqual(h.sent[2], { type: "presence_complete", challengeId: "ch1", action: "pair_client", detail, response: { assertionFor: { challenge: "AA" } } });
  assert.equal(h.doc.getElementById("clients-status").textContent, "done: pair_client");
  assert.match(h.doc.getElementById("clients-paired").textContent, /cursor-appimage — \/opt\/My Agent/);
});

test("Pair refused by the host -> 'refused: <code>'", async () => {
  const h = harness({ complete: { ok: false, code: "presence_refused" } });
  const page = await h.run();
  assert.equal(await page.pair(0), "refused: presence_refused");
  assert.equal(h.doc.getElementById("clients-status").textContent, "refused: presence_refused");
  assert.match(h.doc.getElementById("clients-hint").textContent, /did not prove presence/, "what to do, beside the refusal");
  const h2 = harness({ begin: { ok: false, code: "extension_not_connected" } });
  const page2 = await h2.run();
  assert.equal(await page2.pair(0), "refused: extension_not_connected");
  assert.equal(h2.sent.filter((m) => m.type === "presence_complete").length, 0);
});

test("relay: pair_client is a tap action with an exact {exe, label, sha256} detail; clients_recent relayed", async () => {
  const good = `{"exe":"/a","label":"a","sha256":"${SHA}"}`;
  assert.equal(validDetail("pair_client", good), true);
  for (const d of ["", "{}", `{"exe":"/a","label":"a"}`, `{"label":"a","exe":"/a","sha256":"${SHA}"}`,
    `{"exe":"/a","extra":"x","label":"a","sha256":"${SHA}"}`, `{"exe":"","label":"a","sha256":"${SHA}"}`]) {
    assert.equal(validDetail("pair_client", d), false, d);
  }
  assert.equal(validDetail("confirm.eval", '{"code":"1","origin":"https://a.test"}'), false, "only the confirm window taps for eval");
  const calls = [];
  const relay = createPolicyRelay({ hostCall: async (a, args) => {
    calls.push([a, args]);
    return a === "clients_recent" ? { clients: [{ label: "x", exe: "/x", sha256: SHA, pairedAt: 1, secret: "no" }], recent: "bad" } : {};
  } });
  const EXT = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
  const ctx = { extensionId: EXT, pageUrl: `chrome-extension://${EXT}/options.html` };
  const r = await pageRouter(ctx.extensionId, relay.messages)({ type: "clients_recent" }, { id: EXT, url: ctx.pageUrl });
  assert.deepEqual(r, { ok: true, clients: [{ label: "x", exe: "/x", sha256: SHA, pairedAt: 1 }], recent: [] });
  assert.deepEqual(await pageRouter(ctx.extensionId, relay.messages)({ type: "clients_recent" }, { id: EXT, url: `chrome-extension://${EXT}/popup.html` }), { ok: false, code: "bad_request" });
  assert.deepEqual(await pageRouter(ctx.extensionId, relay.messages)({ type: "presence_begin", action: "confirm.eval", detail: "{}" }, { id: EXT, url: ctx.pageUrl }), { ok: false, code: "bad_request" });
  assert.deepEqual(calls.map((c) => c[0]), ["clients_recent"]);
});

test("Revoke is free: client_revoke with the label, no tap, then the list re-renders", async () => {
  const h = harness();
  await h.run();
  const button = h.doc.getElementById("revoke-client-0");
  assert.equal(button.textContent, "Revoke");
  assert.equal(button.ariaLabel, "Revoke claude");
  button.click();
  await tick(); await tick(); await tick();
  assert.deepEqual(h.sent.filter((m) => m.type === "client_revoke"), [{ type: "client_revoke", label: "claude" }]);
  assert.equal(h.sent.some((m) => m.type === "presence_begin"), false);
  assert.deepEqual(h.assertions, [], "no tap for narrowing");
  assert.equal(h.doc.getElementById("clients-status").textContent, "done: revoked claude");
  assert.equal(h.doc.getElementById("clients-paired").textContent, "none");
});

test("Revoke refused by the host -> 'refused: <code>'", async () => {
  const h = harness({ revokeAnswer: { ok: false, code: "bad_request" } });
  const page = await h.run();
  assert.equal(await page.revoke("claude"), "refused: bad_request");
});

test("relay: client_revoke needs a well-formed label and only the options page", async () => {
  const calls = [];
  const relay = createPolicyRelay({ hostCall: async (a, args) => { calls.push([a, args]); return { done: true, epoch: 9 }; } });
  const EXT = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
  const ctx = { extensionId: EXT, pageUrl: `chrome-extension://${EXT}/options.html` };
  const from = { id: EXT, url: ctx.pageUrl };
  for (const label of ["", "UPPER", "a/b", 5, "x".repeat(33), undefined]) {
    assert.deepEqual(await pageRouter(ctx.extensionId, relay.messages)({ type: "client_revoke", label }, from), { ok: false, code: "bad_request" }, String(label));
  }
  assert.deepEqual(await pageRouter(ctx.extensionId, relay.messages)({ type: "client_revoke", label: "claude" }, { id: EXT, url: "https://evil.test/" }), { ok: false, code: "bad_request" });
  assert.deepEqual(calls, []);
  assert.deepEqual(await pageRouter(ctx.extensionId, relay.messages)({ type: "client_revoke", label: "claude", extra: 1 }, from), { ok: true, done: true, epoch: 9 });
  assert.deepEqual(calls, [["client_revoke", { label: "claude" }]]);
});
