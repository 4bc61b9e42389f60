import { test } from "node:test";
import assert from "node:assert/strict";
import { callBudgetMs, createDispatcher, validateRequest } from "../../extension/worker/dispatch.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { fakeLog } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const CTX = { session: "s1", policy: { origins: ["http://127.0.0.1:8000"], confirm: ["tab_close"] } };
const req = (action, args = {}, id = "r1") => ({ type: "request", id, action, args, ...CTX });

function make(handlers = [["echo", async (args) => ({ echoed: args })]]) {
  const log = fakeLog();
  return { d: createDispatcher(handlers, { log }), log };
}

test("routes a known action and wraps the result in an ok reply", async () => {
  const { d } = make();
  assert.deepEqual(await d.dispatch(req("echo", { a: 1 })), {
    type: "reply", id: "r1", ok: true, result: { echoed: { a: 1 } },
  });
});

test("handler returning undefined yields an empty result object", async () => {
  const { d } = make([["noop", () => undefined]]);
  assert.deepEqual(await d.dispatch(req("noop")), { type: "reply", id: "r1", ok: true, result: {} });
});

test("prototype names and unknown names are unknown_action, never routed", async () => {
  const { d } = make();
  for (const action of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "nope"]) {
    const reply = await d.dispatch(req(action));
    assert.equal(reply.ok, false, action);
    assert.equal(reply.error.code, "unknown_action", action);
    assert.equal(d.has(action), false, action);
  }
});

test("unknown_action echo of the action name is bounded", async () => {
  const { d } = make();
  const reply = await d.dispatch(req("x".repeat(5000)));
  assert.ok(reply.error.message.length < 100);
});

test("malformed messages with a usable id get bad_request", async () => {
  const { d } = make();
  const cases = [
    { type: "request", id: "a", action: "echo", ...CTX }, // no args
    { type: "request", id: "a", action: "echo", args: [], ...CTX },
    { type: "request", id: "a", action: "echo", args: null, ...CTX },
    { type: "request", id: "a", action: "echo", args: "x", ...CTX },
    { type: "request", id: "a", action: 5, args: {}, ...CTX },
    { type: "request", id: "a", action: "", args: {}, ...CTX },
    { type: "reply", id: "a", action: "echo", args: {}, ...CTX },
    { id: "a", action: "echo", args: {}, ...CTX },
  ];
  for (const msg of cases) {
    const reply = await d.dispatch(msg);
    assert.equal(reply?.error?.code, "bad_request", JSON.stringify(msg));
    assert.equal(reply.id, "a");
  }
});

test("malformed messages without a usable id are dropped (null)", async () => {
  const { d } = make();
  for (const msg of [null, undefined, 42, "str", [], { type: "request", action: "echo", args: {} },
    { type: "request", id: 7, action: "echo", args: {} }, { type: "request", id: "", action: "echo", args: {} }]) {
    assert.equal(await d.dispatch(msg), null, JSON.stringify(msg));
  }
});

test("a class instance is not a plain-object args", () => {
  class Args {}
  const v = validateRequest({ type: "request", id: "a", action: "echo", args: new Args(), ...CTX });
  assert.equal(v.ok, false);
  assert.equal(v.id, "a");
  assert.ok(validateRequest({ type: "request", id: "a", action: "echo", args: Object.create(null), ...CTX }).ok);
});

test("handler throwing a plain Error -> internal_error without message or stack leak", async () => {
  const secret = "SECRET-/home/user/profile at Object.<anonymous> (file.js:1:1)";
  const { d, log } = make([["boom", () => { throw new Error(secret); }], ["boomAsync", async () => { throw new TypeError(secret); }], ["throwsString", () => { throw secret; }]]);
  for (const action of ["boom", "boomAsync", "throwsString"]) {
    const reply = await d.dispatch(req(action));
    assert.equal(reply.ok, false);
    assert.equal(reply.error.code, "internal_error");
    const wire = JSON.stringify(reply);
    assert.ok(!wire.includes("SECRET"), wire);
    assert.ok(!/\bat\s.+:\d+:\d+/.test(wire), wire);
    assert.deepEqual(Object.keys(reply.error).sort(), ["code", "message"]);
  }
  assert.equal(log.warnings.length, 3); // logged locally instead
});

test("typed BridgeError picks its table code and message", async () => {
  const { d } = make([["tab", () => { throw new BridgeError("tab_not_found", "no tab 9"); }]]);
  assert.deepEqual(await d.dispatch(req("tab")), {
    type: "reply", id: "r1", ok: false, error: { code: "tab_not_found", message: "no tab 9" },
  });
});

test("non-object handler results are internal_error", async () => {
  const { d } = make([["arr", () => [1, 2]], ["num", () => 3]]);
  assert.equal((await d.dispatch(req("arr"))).error.code, "internal_error");
  assert.equal((await d.dispatch(req("num"))).error.code, "internal_error");
});

test("dispatcher copies its routes and rejects non-function handlers", async () => {
  const routes = new Map([["a", () => ({})]]);
  const d = createDispatcher(routes, { log: fakeLog() });
  routes.set("b", () => ({}));
  assert.equal(d.has("b"), false);
  assert.throws(() => createDispatcher([["x", "notfn"]]), TypeError);
});

test("every request must carry a session string and a policy object (else bad_request)", async () => {
  let called = 0;
  const { d } = make([["echo", () => { called += 1; return {}; }]]);
  const base = { type: "request", id: "a", action: "echo", args: {} };
  const cases = [
    base,
    { ...base, policy: {} },
    { ...base, session: "s1" },
    { ...base, session: "", policy: {} },
    { ...base, session: 7, policy: {} },
    { ...base, session: "x".repeat(201), policy: {} },
    { ...base, session: "s1", policy: null },
    { ...base, session: "s1", policy: [] },
    { ...base, session: "s1", policy: "all" },
  ];
  for (const msg of cases) {
    const reply = await d.dispatch(msg);
    assert.equal(reply?.error?.code, "bad_request", JSON.stringify(msg));
  }
  assert.equal(called, 0);
});

test("handlers receive (args, {session, policy, deadline}): the deadline is the call's budget from its arrival", async () => {
  const seen = [];
  let clock = 1_000_000;
  const d = createDispatcher([["ctx", (args, ctx) => { seen.push([args, ctx]); return {}; }]], { log: fakeLog(), now: () => clock });
  await d.dispatch(req("ctx", { n: 1 }));
  const policy = parsePolicy(CTX.policy);
  assert.deepEqual(seen.map(([args, { policy: _, ...rest }]) => [args, rest]),
    [[{ n: 1 }, { session: "s1", client: null, deadline: 1_000_000 + callBudgetMs(policy) }]]);
  assert.deepEqual(Object.keys(seen[0][1]).sort(), ["client", "deadline", "policy", "session"]);
  // The policy arrives read once (worker/policy.js): frozen, answering what the raw JSON said.
  const got = seen[0][1].policy;
  assert.ok(Object.isFrozen(got));
  assert.deepEqual(got.approvedOrigins, ["http://127.0.0.1:8000"]);
  assert.equal(got.approves("http://127.0.0.1:8000"), true);
  assert.equal(got.confirms("tab_close"), true);
  assert.equal(got.confirms("submit"), false);
  // the budget: the confirm timeout (clamped, default 40 s) + the server's 15 s slack - a 2 s margin
  assert.equal(callBudgetMs(parsePolicy({ confirmTimeoutSeconds: 5 })), 18_000);
  assert.equal(callBudgetMs(parsePolicy({})), 53_000);
  assert.equal(callBudgetMs(parsePolicy({ confirmTimeoutSeconds: 10_000 })), 613_000);
  clock += 7;
  await d.dispatch(req("ctx", {}));
  assert.equal(seen[1][1].deadline, 1_000_007 + callBudgetMs(policy));
});

test("the host's client label reaches the handler; anything not a label shape is dropped to null", async () => {
  const seen = [];
  const d = createDispatcher([["ctx", (args, ctx) => { seen.push(ctx.client); return {}; }]], { log: fakeLog() });
  for (const client of ["claude-code", "Claude Code", "<b>x</b>", "a".repeat(33), 7, undefined]) {
    assert.equal((await d.dispatch({ ...req("ctx"), client })).ok, true);
  }
  assert.deepEqual(seen, ["claude-code", null, null, null, null, null]);
});
