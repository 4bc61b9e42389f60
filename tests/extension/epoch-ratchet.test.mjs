// The trust-record epoch ratchet (worker/epoch-ratchet.js) on its own, then behind a real session
// (worker/session.js) the way background.js wires it, then the banner the popup and options page show.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  MALFORMED_EPOCH_MESSAGE, RATCHET_STORAGE_KEY, createEpochRatchet, parseEpoch, parseRatchet,
} from "../../extension/worker/epoch-ratchet.js";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { createSession } from "../../extension/worker/session.js";
import { ROLLBACK_STEPS, ROLLBACK_TITLE, renderRollbackBanner } from "../../extension/ui/rollback-banner.js";
import { runPopupPage } from "../../extension/ui/popup-page.js";
import { runOptionsPage } from "../../extension/ui/options-page.js";
import { deferred, fakeLog, fakePort, fakeTimers, flush } from "./helpers/fakes.mjs";

/** chrome.storage.local as the worker sees it, recording every write. */
function memoryStorage(initial = {}) {
  const items = structuredClone(initial);
  const writes = [];
  let block = null;
  let fail = false;
  return {
    items, writes,
    /** Hold the next writes until the returned deferred resolves. */
    hold() {
      block = deferred();
      return block;
    },
    failWrites(on = true) {
      fail = on;
    },
    get: async (k) => structuredClone(items[k]),
    set: async (k, v) => {
      if (block !== null) await block.promise;
      if (fail) throw new Error("QUOTA_BYTES quota exceeded");
      items[k] = structuredClone(v);
      writes.push(structuredClone(v));
    },
  };
}

function ratchetOn(store, { fp = "SHA256:aaaa", log = fakeLog() } = {}) {
  const pinned = { fp };
  const ratchet = createEpochRatchet({
    storageGet: store.get, storageSet: store.set, fingerprint: () => pinned.fp, now: () => Date.UTC(2026, 0, 1), log,
  });
  return { ratchet, pinned, log };
}

test("parseEpoch: only a safe integer >= 0 is an epoch", () => {
  for (const ok of [0, 1, 41, Number.MAX_SAFE_INTEGER]) assert.equal(parseEpoch(ok), ok);
  for (const bad of [undefined, null, "3", 1.5, -1, NaN, Infinity, 2 ** 53, true, {}, [3]]) assert.equal(parseEpoch(bad), null, String(bad));
});

test("parseRatchet keeps well-formed entries only; a rolledBack not below the epoch is dropped", () => {
  const parsed = parseRatchet({
    "SHA256:a": { epoch: 7, rolledBack: { epoch: 3, at: "t" } },
    "SHA256:b": { epoch: "7" },
    "SHA256:c": { epoch: 2, rolledBack: { epoch: 2, at: "t" } },
    "": { epoch: 1 },
    "SHA256:d": null,
  });
  assert.deepEqual([...parsed], [["SHA256:a", { epoch: 7, rolledBack: { epoch: 3, at: "t" } }], ["SHA256:c", { epoch: 2 }]]);
  assert.equal(parseRatchet("junk").size, 0);
  assert.equal(parseRatchet([1, 2]).size, 0);
});

test("monotonic: a higher epoch is recorded, an equal one writes nothing, nothing ever lowers it", async () => {
  const store = memoryStorage();
  const { ratchet } = ratchetOn(store);
  await ratchet.loaded();
  assert.equal(ratchet.seen(), null);
  assert.equal(await ratchet.admit(3), null);
  assert.equal(await ratchet.admit(5), null);
  assert.equal(await ratchet.admit(5), null);
  assert.deepEqual(store.writes, [{ "SHA256:aaaa": { epoch: 3 } }, { "SHA256:aaaa": { epoch: 5 } }]);
  assert.equal(ratchet.seen(), 5);
  const refused = await ratchet.admit(4);
  assert.equal(refused?.code, "trust_rolled_back");
  assert.equal(ratchet.seen(), 5);
  assert.equal(store.items[RATCHET_STORAGE_KEY]["SHA256:aaaa"].epoch, 5);
});

test("a lower epoch is refused with both epochs and the two next steps; it is remembered across a worker restart", async () => {
  const store = memoryStorage({ [RATCHET_STORAGE_KEY]: { "SHA256:aaaa": { epoch: 9 } } });
  const { ratchet, log } = ratchetOn(store);
  assert.deepEqual(await ratchet.admit(4), {
    code: "trust_rolled_back",
    message: "the trust record was rolled back (epoch 4, this browser has seen 9): run `tabwarden unkill` at a terminal "
      + "to confirm the record as it is, or `tabwarden pair --reset` and pair again",
  });
  assert.ok(log.warnings.some((w) => w.includes("rolled back (epoch 4")), log.warnings.join("\n"));
  assert.deepEqual(ratchet.rolledBack(), { epoch: 4, seen: 9, at: "2026-01-01T00:00:00.000Z" });
  await flush();
  assert.deepEqual(store.items[RATCHET_STORAGE_KEY], { "SHA256:aaaa": { epoch: 9, rolledBack: { epoch: 4, at: "2026-01-01T00:00:00.000Z" } } });
  // The worker restarts: the stored state is the same verdict, and the old record is still refused.
  const again = ratchetOn(store).ratchet;
  await again.loaded();
  assert.deepEqual(again.rolledBack(), { epoch: 4, seen: 9, at: "2026-01-01T00:00:00.000Z" });
  assert.equal((await again.admit(4))?.code, "trust_rolled_back");
  assert.equal((await again.admit(0))?.code, "trust_rolled_back");
});

test("a record at least as new as the one seen clears the rolled-back state; a higher one is recorded", async () => {
  const store = memoryStorage({ [RATCHET_STORAGE_KEY]: { "SHA256:aaaa": { epoch: 9, rolledBack: { epoch: 4, at: "t" } } } });
  const { ratchet } = ratchetOn(store);
  assert.equal((await ratchet.admit(8))?.code, "trust_rolled_back");
  assert.deepEqual(ratchet.rolledBack(), { epoch: 8, seen: 9, at: "2026-01-01T00:00:00.000Z" }, "the latest older epoch is shown");
  assert.equal(await ratchet.admit(11), null);
  assert.equal(ratchet.rolledBack(), null);
  assert.deepEqual(store.items[RATCHET_STORAGE_KEY], { "SHA256:aaaa": { epoch: 11 } });
  // The very record seen, stated again after a rollback, is not older: served, and the flag goes.
  assert.equal((await ratchet.admit(10))?.code, "trust_rolled_back");
  assert.equal(await ratchet.admit(11), null);
  assert.equal(ratchet.rolledBack(), null);
  assert.deepEqual(store.items[RATCHET_STORAGE_KEY], { "SHA256:aaaa": { epoch: 11 } });
});

test("per key: pairing again (another pinned key) starts a fresh ratchet; the old key's stays", async () => {
  const store = memoryStorage();
  const { ratchet, pinned } = ratchetOn(store);
  assert.equal(await ratchet.admit(40), null);
  assert.equal((await ratchet.admit(39))?.code, "trust_rolled_back");
  pinned.fp = "SHA256:bbbb"; // `tabwarden pair --reset` and the options page paired the new key
  assert.equal(ratchet.seen(), null);
  assert.equal(ratchet.rolledBack(), null);
  assert.equal(await ratchet.admit(1), null);
  assert.equal(ratchet.seen(), 1);
  assert.deepEqual(store.items[RATCHET_STORAGE_KEY], {
    "SHA256:aaaa": { epoch: 40, rolledBack: { epoch: 39, at: "2026-01-01T00:00:00.000Z" } },
    "SHA256:bbbb": { epoch: 1 },
  });
  pinned.fp = "SHA256:aaaa";
  assert.equal(ratchet.seen(), 40);
  assert.equal((await ratchet.admit(2))?.code, "trust_rolled_back");
});

test("persist before acting: a request waits for its higher epoch to be stored; a failed write refuses it", async () => {
  const store = memoryStorage();
  const { ratchet } = ratchetOn(store);
  await ratchet.loaded();
  const held = store.hold();
  let verdict = "pending";
  const p = ratchet.admit(6).then((v) => { verdict = v; });
  await flush();
  assert.equal(verdict, "pending", "not admitted before the epoch is stored");
  assert.deepEqual(store.writes, []);
  held.resolve();
  await p;
  assert.equal(verdict, null);
  assert.deepEqual(store.writes, [{ "SHA256:aaaa": { epoch: 6 } }]);

  store.failWrites();
  const refused = await ratchet.admit(7);
  assert.equal(refused?.code, "internal_error");
  assert.match(refused?.message ?? "", /could not record the trust record's epoch/);
  assert.equal(store.items[RATCHET_STORAGE_KEY]["SHA256:aaaa"].epoch, 6);
});

test("concurrent requests are witnessed in arrival order: writes never go down", async () => {
  const store = memoryStorage();
  const { ratchet } = ratchetOn(store);
  const verdicts = await Promise.all([3, 9, 5, 9, 12].map((e) => ratchet.admit(e)));
  assert.deepEqual(verdicts.map((v) => v?.code ?? null), [null, null, "trust_rolled_back", null, null]);
  const epochs = store.writes.map((w) => w["SHA256:aaaa"].epoch);
  assert.deepEqual(epochs, [...epochs].sort((a, b) => a - b));
  assert.equal(epochs.at(-1), 12);
});

test("a missing or malformed epoch is refused (protocol_mismatch), pinned or not, and records nothing", async () => {
  const store = memoryStorage();
  const { ratchet, pinned } = ratchetOn(store);
  for (const fp of ["SHA256:aaaa", null]) {
    pinned.fp = fp;
    for (const bad of [undefined, null, "3", 1.5, -1, NaN, 2 ** 53, {}]) {
      assert.deepEqual(await ratchet.admit(bad), { code: "protocol_mismatch", message: MALFORMED_EPOCH_MESSAGE }, String(bad));
    }
  }
  assert.deepEqual(store.writes, []);
});

test("nothing pinned: no ratchet (a valid epoch is served, nothing stored, nothing seen)", async () => {
  const store = memoryStorage();
  const { ratchet } = ratchetOn(store, { fp: null });
  assert.equal(await ratchet.admit(0), null);
  assert.equal(await ratchet.admit(5), null);
  assert.equal(ratchet.seen(), null);
  assert.equal(ratchet.rolledBack(), null);
  assert.deepEqual(store.writes, []);
});

test("a stored ratchet that cannot be read refuses every request for the pinned key", async () => {
  const log = fakeLog();
  const ratchet = createEpochRatchet({
    storageGet: async () => { throw new Error("IO error"); }, storageSet: async () => {},
    fingerprint: () => "SHA256:aaaa", now: () => 0, log,
  });
  assert.equal((await ratchet.admit(100))?.code, "internal_error");
  assert.ok(log.warnings.some((w) => w.includes("could not read the trust epoch ratchet")));
});

test("observe (the welcome, once the key is proven): raises and flags like a request; -1 and junk change nothing", async () => {
  const store = memoryStorage();
  const { ratchet, log } = ratchetOn(store);
  await ratchet.observe(8);
  assert.equal(ratchet.seen(), 8);
  await ratchet.observe(-1); // the host refuses its own record: it refuses every request itself
  await ratchet.observe("8");
  assert.equal(ratchet.rolledBack(), null);
  assert.ok(log.warnings.some((w) => w.includes("no valid trust-record epoch")));
  await ratchet.observe(2);
  assert.deepEqual(ratchet.rolledBack(), { epoch: 2, seen: 8, at: "2026-01-01T00:00:00.000Z" });
  assert.equal(ratchet.seen(), 8);
});

// -- behind a real session, wired as background.js wires it --------------------------------

function wired(store) {
  let port = null;
  const ran = [];
  const { ratchet, pinned } = ratchetOn(store);
  const dispatcher = createDispatcher(new Map([["tab_list", async () => { ran.push("tab_list"); return { tabs: [] }; }]]), { log: fakeLog() });
  /** @type {unknown} */
  let welcomeEpoch;
  const session = createSession({
    connect: () => { port = fakePort(); return port; },
    dispatcher,
    backoff: { next: () => 1000, afterConnection: () => 1000 },
    timers: fakeTimers(),
    now: () => 0,
    extensionVersion: "0.1.0",
    gate: { admit: (request) => ratchet.admit(request.epoch) },
    helloFields: async () => {
      await ratchet.loaded();
      return { epochSeen: ratchet.seen() };
    },
    onWelcome: ({ epoch }) => { welcomeEpoch = epoch; ratchet.observe(epoch); },
    log: fakeLog(),
  });
  return { session, ratchet, pinned, ran, port: () => port, welcome: () => welcomeEpoch };
}

const request = (id, epoch) => ({ type: "request", id, action: "tab_list", args: {}, session: "s1", policy: {}, epoch });

test("session: hello states epochSeen; a request at a lower epoch is answered trust_rolled_back and nothing runs", async () => {
  const store = memoryStorage({ [RATCHET_STORAGE_KEY]: { "SHA256:aaaa": { epoch: 12 } } });
  const h = wired(store);
  h.session.start();
  await flush();
  assert.deepEqual(h.port().sent, [{ epochSeen: 12, type: "hello", protocol: 1, extensionVersion: "0.1.0" }]);
  h.port().deliver({ type: "welcome", protocol: 1, hostVersion: "x", browser: "chromium", epoch: 12 });
  assert.equal(h.welcome(), 12);
  h.port().deliver(request("r1", 12));
  await flush();
  assert.equal(h.port().sent.at(-1).ok, true);
  assert.deepEqual(h.ran, ["tab_list"]);

  h.port().deliver(request("r2", 10));
  await flush();
  const reply = h.port().sent.at(-1);
  assert.equal(reply.id, "r2");
  assert.equal(reply.error.code, "trust_rolled_back");
  assert.match(reply.error.message, /epoch 10, this browser has seen 12/);
  assert.deepEqual(h.ran, ["tab_list"], "the handler never ran");

  h.port().deliver(request("r3", 13)); // e.g. `tabwarden policy restrict`, or unkill at a terminal
  await flush();
  assert.equal(h.port().sent.at(-1).ok, true);
  assert.equal(h.ratchet.rolledBack(), null);
  assert.deepEqual(store.items[RATCHET_STORAGE_KEY], { "SHA256:aaaa": { epoch: 13 } });
});

test("session: a welcome stating an older record flags it before any request", async () => {
  const store = memoryStorage({ [RATCHET_STORAGE_KEY]: { "SHA256:aaaa": { epoch: 12 } } });
  const h = wired(store);
  h.session.start();
  await flush();
  h.port().deliver({ type: "welcome", protocol: 1, hostVersion: "x", browser: "chromium", epoch: 7 });
  await flush();
  assert.deepEqual(h.ratchet.rolledBack(), { epoch: 7, seen: 12, at: "2026-01-01T00:00:00.000Z" });
  assert.deepEqual(h.ran, []);
});

test("session: hello without epochSeen when the extra fields fail; a gate's message reaches the reply", async () => {
  const log = fakeLog();
  let port = null;
  const session = createSession({
    connect: () => { port = fakePort(); return port; },
    dispatcher: createDispatcher(new Map(), { log }),
    backoff: { next: () => 1000, afterConnection: () => 1000 },
    timers: fakeTimers(), now: () => 0, extensionVersion: "0.1.0",
    gate: { admit: async () => ({ code: "trust_rolled_back", message: "specific words" }) },
    helloFields: async () => { throw new Error("storage gone"); },
    log,
  });
  session.start();
  await flush();
  assert.deepEqual(port.sent, [{ type: "hello", protocol: 1, extensionVersion: "0.1.0" }]);
  port.deliver({ type: "welcome", protocol: 1 });
  port.deliver(request("x", 1));
  await flush();
  assert.deepEqual(port.sent.at(-1).error, { code: "trust_rolled_back", message: "specific words" });
});

// -- the banner (popup and options page) --------------------------------------------------

function fakeDoc(ids) {
  const make = (tag, id = null) => {
    const classes = new Set();
    const listeners = [];
    const el = {
      tagName: tag.toUpperCase(), id, children: [], _text: "", hidden: false, disabled: false, value: "", checked: false,
      classList: { toggle: (c, on) => (on ? classes.add(c) : classes.delete(c)), contains: (c) => classes.has(c) },
      get textContent() { return this._text + this.children.map((c) => c.textContent).join(""); },
      set textContent(v) { this.children = []; this._text = String(v); },
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
      replaceChildren(...nodes) { this.children = [...nodes]; this._text = ""; },
      addEventListener: (type, fn) => { if (type === "click") listeners.push(fn); },
    };
    return el;
  };
  const els = new Map(ids.map((id) => [id, make("div", id)]));
  return { getElementById: (id) => els.get(id) ?? null, createElement: (tag) => make(tag), el: (id) => els.get(id) };
}

test("the banner: shown with both epochs and the two next steps while rolled back, hidden otherwise", () => {
  const doc = fakeDoc(["rollback"]);
  assert.equal(renderRollbackBanner(doc, { epoch: 4, seen: 9 }), true);
  const el = doc.el("rollback");
  assert.equal(el.hidden, false);
  assert.equal(el.children[0].textContent, ROLLBACK_TITLE);
  assert.equal(ROLLBACK_TITLE, "Trust record rolled back");
  assert.match(el.children[1].textContent, /epoch 4, older than epoch 9/);
  const steps = el.children[2].children;
  assert.deepEqual(steps.map((li) => li.textContent), ROLLBACK_STEPS.map((t) => t.replaceAll("`", "")));
  const commands = steps.flatMap((li) => li.children.filter((n) => n.tagName === "CODE").map((n) => n.textContent));
  assert.deepEqual(commands, ["tabwarden unkill", "tabwarden pair --reset"]);
  for (const off of [null, undefined, {}, { epoch: "4", seen: 9 }]) {
    assert.equal(renderRollbackBanner(doc, off), false);
    assert.equal(el.hidden, true);
    assert.equal(el.textContent, "");
  }
});

test("the popup and the options page show the banner from their status answers", async () => {
  const rolledBack = { epoch: 3, seen: 5 };
  const popupDoc = fakeDoc(["state", "rollback", "kill", "recent", "popup-status"]);
  await runPopupPage({
    doc: popupDoc,
    api: { sendMessage: async () => ({ ok: true, phase: "ready", gate: "trusted", killed: false, rolledBack, recent: [] }) },
  });
  assert.equal(popupDoc.el("rollback").hidden, false);
  assert.ok(popupDoc.el("rollback").textContent.startsWith(ROLLBACK_TITLE));
  assert.match(popupDoc.el("state").textContent, /TRUST RECORD ROLLED BACK/);
  assert.equal(popupDoc.el("state").classList.contains("alarm"), true);

  const optionsDoc = fakeDoc(["rollback", "pairing", "fingerprint", "gate", "status", "code", "pair", "window-only"]);
  await runOptionsPage({
    doc: optionsDoc,
    api: {
      sendMessage: async () => ({ ok: true, gate: "trusted", paired: true, fingerprint: "SHA256:aaaa", browser: "chromium", rolledBack }),
      createCredential: async () => ({}),
    },
  });
  assert.equal(optionsDoc.el("rollback").hidden, false);
  assert.match(optionsDoc.el("rollback").textContent, /epoch 3, older than epoch 5/);

  const calm = fakeDoc(["state", "rollback", "kill", "recent", "popup-status"]);
  await runPopupPage({ doc: calm, api: { sendMessage: async () => ({ ok: true, phase: "ready", gate: "trusted", killed: false, rolledBack: null, recent: [] }) } });
  assert.equal(calm.el("rollback").hidden, true);
  assert.equal(calm.el("state").classList.contains("alarm"), false);
});
