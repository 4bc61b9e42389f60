// The command journal (extension/worker/journal.js): at most once per (session, command id), across
// retries and worker restarts (a new journal over the same chrome.storage.session stand-in).
import { test } from "node:test";
import assert from "node:assert/strict";
import { JOURNAL_PREFIX, createJournal, parseCommand } from "../../extension/worker/journal.js";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { deferred, fakeLog, flush } from "./helpers/fakes.mjs";

/** chrome.storage.session as the journal sees it: survives a "worker restart" (a new journal). */
function fakeStorage() {
  const items = new Map();
  let failSet = false;
  return {
    items,
    failNextSets(v) { failSet = v; },
    async getAll() { return Object.fromEntries([...items].map(([k, v]) => [k, structuredClone(v)])); },
    async set(obj) {
      if (failSet) throw new Error("quota");
      for (const [k, v] of Object.entries(obj)) items.set(k, structuredClone(v));
    },
    async remove(keys) { for (const k of keys) items.delete(k); },
  };
}

const write = (id, retry = false) => ({ id, retry, readOnly: false });
const read = (id, retry = false) => ({ id, retry, readOnly: true });
const ok = (result) => ({ ok: true, result });

/** An execute that counts its runs and answers `value`. */
function counted(value) {
  const fn = async () => {
    fn.runs += 1;
    return ok({ value });
  };
  fn.runs = 0;
  return fn;
}

test("a retry while the command is in flight waits for the same outcome; it runs once", async () => {
  const journal = createJournal({ storage: fakeStorage(), log: fakeLog() });
  const gate = deferred();
  let runs = 0;
  const execute = async () => { runs += 1; await gate.promise; return ok({ clicked: true }); };
  const first = journal.run("s1", write("cmd-00000001"), execute);
  await flush();
  const retry = journal.run("s1", write("cmd-00000001", true), execute);
  await flush();
  assert.equal(runs, 1);
  gate.resolve();
  assert.deepEqual(await first, ok({ clicked: true }));
  assert.deepEqual(await retry, ok({ clicked: true }));
  assert.equal(runs, 1);
});

test("a finished command's recorded reply is replayed, also after a worker restart", async () => {
  const storage = fakeStorage();
  const execute = counted("posted");
  const journal = createJournal({ storage, log: fakeLog() });
  await journal.run("s1", write("cmd-00000002"), execute);
  assert.deepEqual(await journal.run("s1", write("cmd-00000002", true), execute), ok({ value: "posted" }));
  await journal.settled(); // the outcome is stored after the reply went out
  const restarted = createJournal({ storage, log: fakeLog() });
  assert.deepEqual(await restarted.run("s1", write("cmd-00000002", true), execute), ok({ value: "posted" }));
  assert.equal(execute.runs, 1);
});

test("errors are journaled and replayed like results", async () => {
  const journal = createJournal({ storage: fakeStorage(), log: fakeLog() });
  let runs = 0;
  const execute = async () => { runs += 1; return { ok: false, error: { code: "confirm_denied", message: "no" } }; };
  await journal.run("s1", write("cmd-00000003"), execute);
  const again = await journal.run("s1", write("cmd-00000003", true), execute);
  assert.equal(again.ok, false);
  assert.equal(again.ok === false && again.error.code, "confirm_denied");
  assert.equal(runs, 1);
});

test("started but never finished (the worker died mid-call) answers command_lost and does not run", async () => {
  const storage = fakeStorage();
  const dying = createJournal({ storage, log: fakeLog() });
  const never = deferred();
  dying.run("s1", write("cmd-00000004"), () => never.promise); // the worker stops here
  await flush();
  assert.equal(storage.items.get(`${JOURNAL_PREFIX}s1\ncmd-00000004`).state, "started", "started is stored before it runs");
  const restarted = createJournal({ storage, log: fakeLog() });
  const execute = counted("again");
  const lost = await restarted.run("s1", write("cmd-00000004", true), execute);
  assert.equal(lost.ok === false && lost.error.code, "command_lost");
  assert.equal(execute.runs, 0);
});

test("a write's started record is stored before it runs; a failed store means it never runs", async () => {
  const storage = fakeStorage();
  const journal = createJournal({ storage, log: fakeLog() });
  let storedFirst = false;
  await journal.run("s1", write("cmd-00000005"), async () => {
    storedFirst = storage.items.get(`${JOURNAL_PREFIX}s1\ncmd-00000005`)?.state === "started";
    return ok({});
  });
  assert.ok(storedFirst);
  storage.failNextSets(true);
  const execute = counted("x");
  const refused = await journal.run("s1", write("cmd-00000006"), execute);
  assert.equal(refused.ok === false && refused.error.code, "internal_error");
  assert.equal(execute.runs, 0);
});

test("a retry the journal never saw answers command_lost (its journal is gone); a first attempt runs", async () => {
  const journal = createJournal({ storage: fakeStorage(), log: fakeLog() });
  const execute = counted("ran");
  const lost = await journal.run("s1", write("cmd-00000007", true), execute);
  assert.equal(lost.ok === false && lost.error.code, "command_lost");
  assert.equal(execute.runs, 0);
  assert.deepEqual(await journal.run("s1", write("cmd-00000008"), execute), ok({ value: "ran" }));
  assert.equal(execute.runs, 1);
});

test("read-only commands are never stored: a retry joins one in flight, else reads again", async () => {
  const storage = fakeStorage();
  const journal = createJournal({ storage, log: fakeLog() });
  const gate = deferred();
  let runs = 0;
  const execute = async () => { runs += 1; await gate.promise; return ok({ text: "hi" }); };
  const first = journal.run("s1", read("cmd-00000009"), execute);
  const joined = journal.run("s1", read("cmd-00000009", true), execute);
  await flush();
  gate.resolve();
  assert.deepEqual(await first, await joined);
  assert.equal(runs, 1);
  assert.equal(storage.items.size, 0, "nothing written for a read");
  await journal.run("s1", read("cmd-00000009", true), execute);
  assert.equal(runs, 2, "a finished read is simply read again");
});

test("eviction by count: the oldest result answers result_evicted, and is not run again", async () => {
  const storage = fakeStorage();
  const journal = createJournal({ storage, log: fakeLog(), maxEntries: 2 });
  const execute = counted("v");
  for (const id of ["cmd-0000000a", "cmd-0000000b", "cmd-0000000c"]) await journal.run("s1", write(id), execute);
  const evicted = await journal.run("s1", write("cmd-0000000a", true), execute);
  assert.equal(evicted.ok === false && evicted.error.code, "result_evicted");
  assert.deepEqual(await journal.run("s1", write("cmd-0000000c", true), execute), ok({ value: "v" }));
  assert.equal(execute.runs, 3);
  assert.equal(journal.snapshot().entries, 2);
  await journal.settled();
  const restarted = createJournal({ storage, log: fakeLog(), maxEntries: 2 });
  const again = await restarted.run("s1", write("cmd-0000000a", true), execute);
  assert.equal(again.ok === false && again.error.code, "result_evicted", "the tombstone survives a restart");
});

test("eviction by bytes: big results push out older ones; one over the bound is not kept at all", async () => {
  const journal = createJournal({ storage: fakeStorage(), log: fakeLog(), maxBytes: 2000 });
  const big = (n) => async () => ok({ blob: "x".repeat(n) });
  await journal.run("s1", write("cmd-0000000d"), big(900));
  await journal.run("s1", write("cmd-0000000e"), big(900));
  await journal.run("s1", write("cmd-0000000f"), big(900));
  const first = await journal.run("s1", write("cmd-0000000d", true), big(1));
  assert.equal(first.ok === false && first.error.code, "result_evicted");
  const kept = await journal.run("s1", write("cmd-0000000f", true), big(1));
  assert.equal(kept.ok && String(kept.result.blob).length, 900);
  assert.ok(journal.snapshot().bytes <= 2000);
  const huge = await journal.run("s1", write("cmd-00000010"), big(5000));
  assert.equal(huge.ok && String(huge.result.blob).length, 5000, "the caller still gets its reply");
  const later = await journal.run("s1", write("cmd-00000010", true), big(1));
  assert.equal(later.ok === false && later.error.code, "result_evicted");
});

test("tombstones are bounded too; a forgotten one still never runs again on a retry", async () => {
  const journal = createJournal({ storage: fakeStorage(), log: fakeLog(), maxEntries: 1, maxTombstones: 1 });
  const execute = counted("v");
  for (const id of ["cmd-00000011", "cmd-00000012", "cmd-00000013"]) await journal.run("s1", write(id), execute);
  assert.equal(journal.snapshot().tombstones, 1);
  const forgotten = await journal.run("s1", write("cmd-00000011", true), execute);
  assert.equal(forgotten.ok === false && forgotten.error.code, "command_lost");
  assert.equal(execute.runs, 3);
});

test("another session presenting the same command id gets nothing of the first's", async () => {
  const storage = fakeStorage();
  const journal = createJournal({ storage, log: fakeLog() });
  await journal.run("s-victim", write("cmd-00000014"), async () => ok({ secret: "victim's page text" }));
  // The attacker's retry: it neither sees the victim's reply nor is told anything about it.
  const stolen = await journal.run("s-attacker", write("cmd-00000014", true), async () => ok({ mine: true }));
  assert.equal(stolen.ok === false && stolen.error.code, "command_lost");
  assert.doesNotMatch(JSON.stringify(stolen), /victim/);
  const own = await journal.run("s-attacker", write("cmd-00000014"), async () => ok({ mine: true }));
  assert.deepEqual(own, ok({ mine: true }));
  // While the victim's is in flight, the attacker does not join it either.
  const gate = deferred();
  const victim = journal.run("s-victim", write("cmd-00000015"), async () => { await gate.promise; return ok({ secret: 1 }); });
  const attacker = await journal.run("s-attacker", write("cmd-00000015"), async () => ok({ mine: 2 }));
  assert.deepEqual(attacker, ok({ mine: 2 }));
  gate.resolve();
  assert.deepEqual(await victim, ok({ secret: 1 }));
  assert.deepEqual(await journal.run("s-victim", write("cmd-00000014", true), async () => ok({})), ok({ secret: "victim's page text" }));
});

test("parseCommand accepts the server's shape only", () => {
  assert.deepEqual(parseCommand(undefined), { ok: true, command: null });
  assert.equal(parseCommand({ id: "cmd-00000016", retry: false, readOnly: false }).ok, true);
  for (const bad of [null, "x", { id: "short", retry: false, readOnly: false }, { id: "a\nb-cdefghij", retry: false, readOnly: false },
    { id: "x".repeat(65), retry: false, readOnly: false }, { id: "cmd-00000017", retry: "no", readOnly: false },
    { id: "cmd-00000017", retry: false }]) {
    assert.equal(parseCommand(bad).ok, false, JSON.stringify(bad));
  }
});

test("the dispatcher runs a command once and answers each request under its own id", async () => {
  const journal = createJournal({ storage: fakeStorage(), log: fakeLog() });
  let clicks = 0;
  const gate = deferred();
  const dispatcher = createDispatcher([["page_click", async () => { clicks += 1; await gate.promise; return { clicked: true }; }]], { log: fakeLog(), journal });
  const request = (id, retry) => ({
    type: "request", id, action: "page_click", args: { tabId: 1, ref: "@e1" }, session: "s1", policy: {},
    command: { id: "cmd-00000018", retry, readOnly: false },
  });
  const first = dispatcher.dispatch(request("r1", false));
  await flush();
  const second = dispatcher.dispatch(request("r9", true));
  gate.resolve();
  assert.deepEqual(await first, { type: "reply", id: "r1", ok: true, result: { clicked: true } });
  assert.deepEqual(await second, { type: "reply", id: "r9", ok: true, result: { clicked: true } });
  assert.equal(clicks, 1);
  const bad = await dispatcher.dispatch({ ...request("r10", false), command: { id: "??", retry: false, readOnly: false } });
  assert.equal(bad?.ok === false && bad.error.code, "bad_request");
});

test("the reply does not wait for its outcome to be stored; a worker dying before it lands leaves command_lost", async () => {
  const storage = fakeStorage();
  const stuck = deferred();
  let sets = 0;
  const slow = { ...storage, set: async (obj) => { sets += 1; if (sets > 1) await stuck.promise; return storage.set(obj); } };
  const journal = createJournal({ storage: slow, log: fakeLog() });
  assert.deepEqual(await journal.run("s1", write("cmd-00000019"), async () => ok({ sent: 1 })), ok({ sent: 1 }));
  // Still this worker: the retry is answered from memory.
  assert.deepEqual(await journal.run("s1", write("cmd-00000019", true), async () => ok({ sent: 2 })), ok({ sent: 1 }));
  // The worker dies before the outcome's write landed: only `started` is stored.
  const restarted = createJournal({ storage, log: fakeLog() });
  const lost = await restarted.run("s1", write("cmd-00000019", true), async () => ok({ sent: 2 }));
  assert.equal(lost.ok === false && lost.error.code, "command_lost");
});
