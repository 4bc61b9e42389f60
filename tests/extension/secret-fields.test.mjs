import { test } from "node:test";
import assert from "node:assert/strict";
import { LEARN_MS, MAX_FIELD_NAMES, createSecretFields, learningAround } from "../../extension/worker/secret-fields.js";
import { maskOutcome } from "../../extension/worker/mask.js";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { fakeLog, fakeTimers, flush } from "./helpers/fakes.mjs";

const TYPED = "Plover8quietly";

test("a password field's name masks its value in every reply, as a secret name would; other names stay", async () => {
  const saved = [];
  const fields = createSecretFields({ save: (s) => saved.push(s), log: fakeLog() });
  const reply = { ok: true, result: { entries: [
    { url: `http://sink.test/collect?zz9=${TYPED}&user=alice`, text: `zz9=${TYPED}` },
    { text: `{"zz9": "${TYPED}", "user": "alice"}` }, { text: `body: zz9=${TYPED.replace("8", "8 ")}&user=alice` },
  ] } };
  const before = JSON.stringify(maskOutcome("page_network", reply, await fields.maskContext()));
  assert.ok(before.includes(TYPED), "the attacker's case: nothing learned, nothing masked");
  assert.equal(fields.learn(["ZZ9", "fieldq", "", 42, "x".repeat(65)]), true);
  assert.equal(fields.learn(["zz9"]), false, "known already (case-insensitive)");
  assert.equal(saved.length, 1);
  assert.deepEqual([...fields.names()], ["fieldq", "zz9"], "lowercased; a name seen again is the newest");
  const after = JSON.stringify(maskOutcome("page_network", reply, await fields.maskContext()));
  assert.ok(!after.includes("Plover") && !after.includes("quietly"), after);
  assert.ok(after.includes("zz9=[masked") && after.includes("user=alice") && after.includes('\\"user\\": \\"alice\\"'), after);
});

test("bounded, oldest first; restored from storage, merged with what was learned since; malformed ignored", async () => {
  const fields = createSecretFields({ log: fakeLog() });
  for (let i = 0; i < MAX_FIELD_NAMES + 3; i++) fields.learn([`f${i}`]);
  assert.equal(fields.names().size, MAX_FIELD_NAMES);
  assert.ok(!fields.names().has("f0") && fields.names().has(`f${MAX_FIELD_NAMES + 2}`));
  const restarted = createSecretFields({ log: fakeLog() });
  restarted.learn(["later"]);
  await restarted.restore(Promise.resolve({ v: 1, names: ["zz9", 7, "y".repeat(65)] }));
  assert.deepEqual([...restarted.names()], ["zz9", "later"]);
  const junk = createSecretFields({ log: fakeLog() });
  await junk.restore(Promise.resolve({ v: 2, names: ["zz9"] }));
  assert.equal(junk.names().size, 0);
  assert.equal((await junk.maskContext()).everyQuery, undefined);
});

test("a failed restore fails closed: every URL query value is masked", async () => {
  const log = fakeLog();
  const fields = createSecretFields({ log });
  fields.restore(Promise.reject(new Error("storage gone")));
  const ctx = await fields.maskContext();
  assert.equal(ctx.everyQuery, true);
  const out = JSON.stringify(maskOutcome("tab_list", { ok: true, result: { url: `http://a.test/p?zz9=${TYPED}&n=1` } }, ctx));
  assert.ok(!out.includes(TYPED) && out.includes("zz9=[masked"), out);
});

const timers = { setTimer: (fn, ms) => setTimeout(fn, ms), clearTimer: (h) => clearTimeout(h) };

test("every call naming a tab learns before it runs and after it ends; the reply waits for the second", async () => {
  const fields = createSecretFields({ log: fakeLog() });
  const order = [];
  let page = [];
  const learnTab = async (tabId) => {
    order.push(`learn ${tabId}`);
    fields.learn(page);
  };
  const handlers = learningAround([
    ["page_type", async () => { order.push("type"); page = ["zz9"]; return { typed: true }; }],
    ["page_console", async () => ({ entries: [{ text: `zz9=${TYPED}` }] })],
    ["tab_list", async () => { order.push("list"); return { tabs: [] }; }],
  ], { fields, learnTab, timers });
  const d = createDispatcher(handlers, { log: fakeLog(), maskContext: () => fields.maskContext() });
  const req = (action, args) => ({ type: "request", id: "r", action, args, session: "s", policy: {} });
  await d.dispatch(req("page_type", { tabId: 3, value: "x" }));
  assert.deepEqual(order, ["learn 3", "type", "learn 3"]);
  assert.ok(fields.names().has("zz9"), "the field the action added");
  const got = JSON.stringify(await d.dispatch(req("page_console", { tabId: 3 })));
  assert.ok(!got.includes(TYPED), got);
  order.length = 0;
  await d.dispatch(req("tab_list", {}));
  assert.deepEqual(order, ["list"], "no tab named: nothing read");
});

test("a learning that fails or hangs never fails or holds the call beyond LEARN_MS", async () => {
  const fields = createSecretFields({ log: fakeLog() });
  const clock = fakeTimers();
  let calls = 0;
  let ran = false;
  const hang = learningAround([["page_click", async () => { ran = true; return { clicked: true }; }]], {
    fields, learnTab: () => { calls++; return new Promise(() => {}); }, timers: clock,
  });
  const call = hang[0][1]({ tabId: 1 }, {});
  await flush();
  clock.advance(LEARN_MS - 1);
  await flush();
  assert.equal(ran, false, "held while the first learning may still answer");
  clock.advance(1);
  assert.deepEqual(await call, { clicked: true });
  let masked = false;
  const context = fields.maskContext().then(() => { masked = true; });
  await flush();
  assert.equal(masked, false, "the reply waits for the second learning");
  clock.advance(LEARN_MS);
  await context;
  assert.equal(calls, 2);
  assert.equal(clock.pending(), 0, "no timer left behind");
  const failing = learningAround([["page_click", async () => ({ clicked: true })]], {
    fields, learnTab: async () => { throw new Error("no frame"); }, timers,
  });
  assert.deepEqual(await failing[0][1]({ tabId: 1 }, {}), { clicked: true });
  const refusing = learningAround([["page_click", async () => { throw new Error("refused"); }]], {
    fields, learnTab: async () => {}, timers,
  });
  await assert.rejects(refusing[0][1]({ tabId: 1 }, {}), /refused/);
});
