import { test } from "node:test";
import assert from "node:assert/strict";
import { BURST, MAX_MESSAGE, WINDOW_MS, createErrorReporter } from "../../extension/worker/error-report.js";

const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl";

function setup() {
  const sent = [];
  let t = 0;
  const clock = { advance: (ms) => { t += ms; } };
  const reporter = createErrorReporter({
    hostCall: async (action, args) => {
      sent.push([action, args]);
      return { logged: true };
    },
    now: () => t,
  });
  return { sent, clock, reporter };
}

test("an error is sent masked: no token, no password, no bearer credential", () => {
  const { sent, reporter } = setup();
  const err = new Error(`fetch failed: Authorization: Bearer sk-live-abcdef0123456789 password=hunter2 token ${JWT}`);
  reporter.report("error", "worker", err);
  assert.equal(sent.length, 1);
  const [action, args] = sent[0];
  assert.equal(action, "extension_error");
  assert.equal(args.kind, "error");
  assert.equal(args.where, "worker");
  assert.match(args.message, /^Error: fetch failed/);
  const all = JSON.stringify(args);
  for (const secret of ["sk-live-abcdef0123456789", "hunter2", JWT]) assert.equal(all.includes(secret), false, secret);
});

test("whatever was thrown (a string, an object, an unserialisable value) is described; report never throws", () => {
  const { sent, reporter } = setup();
  reporter.report("rejection", "worker", "plain text");
  reporter.report("rejection", "worker", { code: 1 });
  const loop = {};
  loop.self = loop;
  reporter.report("rejection", "worker", loop);
  assert.deepEqual(sent.map(([, a]) => a.message), ["plain text", '{"code":1}', "[object Object]"]);
  const broken = createErrorReporter({ hostCall: () => { throw new Error("no host"); }, now: () => 0 });
  broken.report("error", "worker", new Error("x")); // the host call's own failure is swallowed
});

test("long messages are cut; a flood is capped at BURST a window, the rest counted and said with the next one", () => {
  const { sent, clock, reporter } = setup();
  reporter.report("error", "worker", new Error("y".repeat(10_000)));
  assert.equal(sent[0][1].message.length, MAX_MESSAGE);
  for (let i = 0; i < 1000; i += 1) reporter.report("error", "worker", new Error(`flood ${i}`));
  assert.equal(sent.length, BURST);
  assert.deepEqual(reporter.snapshot(), { sent: BURST, dropped: 1001 - BURST });
  clock.advance(WINDOW_MS);
  reporter.report("error", "worker", new Error("after"));
  assert.equal(sent.length, BURST + 1);
  assert.equal(sent.at(-1)[1].dropped, 1001 - BURST);
  assert.match(sent.at(-1)[1].message, /after/);
  reporter.report("error", "worker", new Error("next"));
  assert.equal(sent.at(-1)[1].dropped, undefined);
});
