// page_console's opt-in levels (issue 33): log, info and debug are recorded in a ring of their
// own while consoleCapture is on, answered only when asked for (`levels`), masked as errors
// are, from approved origins only; the default answer is unchanged (errors and warnings).
import { test } from "node:test";
import assert from "node:assert/strict";
import { CONSOLE_RING, OPT_IN_LEVELS, consoleEntryOf, createCapture } from "../../extension/worker/capture.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { captureHandlers } from "../../extension/handlers/capture.js";
import { fakeLog, schemaChecked } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const A = "http://a.test";
const B = "http://b.test";
const ON = { origins: [A], consoleCapture: true };
const T0 = 1_700_000_000_000;
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlX2hlcmU";

function setup() {
  const capture = createCapture({ send: async () => ({}), hold: () => {}, attached: () => [1], now: () => T0, log: fakeLog() });
  const ownership = createOwnership();
  ownership.claim("s1", 1);
  const deps = { ownership, capture, browser: { getTab: async (id) => ({ id, url: `${A}/page` }) }, ensureOrigin: async () => A };
  const handlers = new Map(captureHandlers(/** @type {any} */ (deps)));
  const checked = schemaChecked((a) => handlers.get(a));
  const call = (args) => checked("page_console", { tabId: 1, ...args }, { session: "s1", policy: parsePolicy(ON), deadline: Date.now() + 60_000 });
  const context = (id, origin) => capture.event(1, "Runtime.executionContextCreated", { context: { id, origin, auxData: { isDefault: true } } });
  const logged = (ctxId, type, text, ts) =>
    capture.event(1, "Runtime.consoleAPICalled", { type, args: [{ type: "string", value: text }], executionContextId: ctxId, timestamp: ts });
  return { capture, call, context, logged };
}

test("the levels each CDP message is recorded under", () => {
  const api = (type) => consoleEntryOf("Runtime.consoleAPICalled", { type, args: [{ type: "string", value: "x" }], timestamp: 1 })?.level ?? null;
  assert.deepEqual(["error", "assert", "warning", "log", "table", "info", "debug", "clear", "startGroup", "profile"].map(api),
    ["error", "error", "warning", "log", "log", "info", "debug", null, null, null]);
  const browser = (level) => consoleEntryOf("Log.entryAdded", { entry: { level, text: "x", url: `${A}/`, timestamp: 1 } })?.level ?? null;
  assert.deepEqual(["error", "warning", "info", "verbose", "bogus"].map(browser), ["error", "warning", "info", "debug", null]);
  assert.deepEqual(OPT_IN_LEVELS, ["log", "info", "debug"]);
});

test("default unchanged: errors and warnings only; levels adds the asked ones, in time order, masked, approved origins only", async () => {
  const { capture, call, context, logged } = setup();
  await capture.observe(parsePolicy(ON));
  context(7, A);
  context(8, B); // a frame of another site
  logged(7, "log", "started", T0 + 1);
  logged(7, "error", "boom", T0 + 2);
  logged(7, "info", `session=abc123 bearer ${JWT} card 4111 1111 1111 1111`, T0 + 3);
  logged(7, "debug", "details", T0 + 4);
  logged(8, "log", "frame secret words", T0 + 5);
  logged(7, "warning", "careful", T0 + 6);
  capture.event(1, "Log.entryAdded", { entry: { level: "verbose", text: "verbose note", url: `${A}/x`, timestamp: T0 + 7 } });

  const plain = await call({});
  assert.deepEqual(plain.entries.map((e) => [e.level, e.text]), [["error", "boom"], ["warning", "careful"]]);
  assert.equal(plain.withheld, 0);

  const logs = await call({ levels: ["log"] });
  assert.deepEqual(logs.entries.map((e) => [e.level, e.text]), [["log", "started"], ["error", "boom"], ["warning", "careful"]]);
  assert.equal(logs.withheld, 1, "the other site's log is withheld, counted");

  const every = await call({ levels: ["debug", "info", "log"] });
  assert.deepEqual(every.entries.map((e) => e.level), ["log", "error", "info", "debug", "warning", "debug"]);
  const info = every.entries.find((e) => e.level === "info");
  assert.ok(!/abc123|4111 1111|eyJ/.test(info.text), info.text);
  assert.deepEqual(every.entries.at(-1), { ts: T0 + 7, level: "debug", text: "verbose note", source: "browser", origin: A });
  assert.ok(!JSON.stringify(every).includes("frame secret words"));

  assert.deepEqual((await call({ level: "error", levels: ["info"] })).entries.map((e) => e.level), ["error", "info"]);
  const last = await call({ levels: ["log"], limit: 2 });
  assert.deepEqual([last.entries.map((e) => e.text), last.more], [["boom", "careful"], 1]);

  // lines of one millisecond keep the order the page logged them in
  logged(7, "log", "same ms first", T0 + 9);
  logged(7, "error", "same ms second", T0 + 9);
  assert.deepEqual((await call({ levels: ["log"] })).entries.slice(-2).map((e) => e.text), ["same ms first", "same ms second"]);
  for (const bad of [{ levels: ["verbose"] }, { levels: "log" }, { levels: ["log", "log", "info", "debug"] }]) {
    await assert.rejects(call(bad), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
  // clear empties both rings
  await call({ levels: ["log"], clear: true });
  assert.deepEqual((await call({ levels: ["log", "info", "debug"] })).entries, []);
});

test("a chatty page's logs never push an error out: the opt-in levels have their own ring", async () => {
  const { capture, call, context, logged } = setup();
  await capture.observe(parsePolicy(ON));
  context(7, A);
  logged(7, "error", "the one error", T0 + 1);
  for (let i = 0; i < CONSOLE_RING * 3; i++) logged(7, "log", `chatter ${i}`, T0 + 2 + i);
  assert.deepEqual((await call({})).entries.map((e) => e.text), ["the one error"]);
  const both = await call({ levels: ["log"], limit: 200 });
  assert.equal(both.entries.at(-1).text, `chatter ${CONSOLE_RING * 3 - 1}`);
  assert.equal(both.entries.length + both.more, CONSOLE_RING + 1, "the log ring is bounded as the error ring is");
  // an error of a millisecond whose logs were pushed out is still recorded (each ring its own mark)
  logged(7, "error", "late error", T0 + 3);
  assert.deepEqual((await call({})).entries.map((e) => e.text), ["the one error", "late error"]);
  // turning capture off drops the opt-in ring too
  await capture.observe(parsePolicy({ ...ON, consoleCapture: false }));
  await capture.observe(parsePolicy(ON));
  assert.deepEqual((await call({ levels: ["log"] })).entries, []);
});
