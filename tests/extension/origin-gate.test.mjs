import { test } from "node:test";
import assert from "node:assert/strict";
import { createOriginGate } from "../../extension/worker/origin-gate.js";
import { deferred, fakeLog, flush } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

/** The host's answer for a browser that approves by a click. */
const click = async (/** @type {string} */ origin) => ({ origin, ask: "click" });
const ctx = (origins = [], extra = {}) => ({ session: "s1", policy: parsePolicy({ origins, confirm: [], confirmTimeoutSeconds: 30, ...extra }) });

function make({
  granted = new Set(), decision = "allow", grant = async () => {},
  decideAnswer = (o) => ({ origin: o, ask: "click" }),
} = {}) {
  const calls = { confirm: [], grant: [], contains: [], decide: [] };
  const gate = createOriginGate({
    confirm: async (req) => {
      calls.confirm.push(req);
      if (decision === "allow") granted.add(req.pattern); // the page's permissions.request said yes
      return typeof decision === "function" ? decision(req) : decision;
    },
    permissionsContains: async (p) => { calls.contains.push(p); return granted.has(p); },
    requestGrant: async (o) => { calls.grant.push(o); return grant(o); },
    decide: async (o) => { calls.decide.push(o); return decideAnswer(o); },
    log: fakeLog(),
  });
  return { gate, calls, granted };
}

test("approved origin with its permission proceeds without a prompt", async () => {
  const { gate, calls } = make({ granted: new Set(["http://127.0.0.1:8000/*"]) });
  assert.equal(await gate("http://127.0.0.1:8000/x", ctx(["http://127.0.0.1:8000"]), "page_text"), "http://127.0.0.1:8000");
  assert.equal(calls.confirm.length, 0);
  assert.equal(calls.grant.length, 0);
});

test("non-http(s) targets are refused outright", async () => {
  const { gate, calls } = make();
  for (const u of ["file:///etc/passwd", "chrome://settings", "javascript:1", undefined, "about:blank"]) {
    await assert.rejects(gate(u, ctx(), "tab_open"), (e) => e.code === "origin_not_approved", String(u));
  }
  assert.equal(calls.confirm.length, 0);
});

test("a lookalike of an approved origin prompts (never matches)", async () => {
  const { gate, calls } = make({ granted: new Set(["http://127.0.0.1/*"]), decision: "deny" });
  await assert.rejects(gate("http://127.0.0.1.evil.test/", ctx(["http://127.0.0.1"]), "tab_open"), (e) => e.code === "origin_not_approved");
  assert.equal(calls.confirm.length, 1);
  assert.deepEqual(calls.confirm[0], {
    kind: "origin", tool: "tab_open", origin: "http://127.0.0.1.evil.test", pattern: "http://127.0.0.1.evil.test/*",
    detail: "Allow tabwarden's agent on http://127.0.0.1.evil.test?", timeoutMs: 30_000, client: null,
  });
  assert.equal(calls.grant.length, 0, "deny sends no grant");
});

test("new origin: allow + host grant ok -> proceeds", async () => {
  const { gate, calls } = make();
  assert.equal(await gate("http://localhost:8001/", ctx(["http://localhost:8000"]), "tab_open"), "http://localhost:8001");
  assert.deepEqual(calls.grant, ["http://localhost:8001"]);
});

test("in policy but Chrome permission missing -> prompts again", async () => {
  const { gate, calls } = make();
  await gate("https://example.com/", ctx(["https://example.com"]), "page_text");
  assert.equal(calls.confirm.length, 1);
});

test("host refusing the grant (not_paired, timeout) -> origin_not_approved", async () => {
  for (const code of ["not_paired", "timeout", "extension_not_connected"]) {
    const { gate } = make({ grant: async () => { throw Object.assign(new Error(code), { code }); } });
    await assert.rejects(gate("https://a.test/", ctx(), "tab_open"), (e) => e.code === "origin_not_approved", code);
  }
});

test("allow without the Chrome permission (request refused) -> origin_not_approved", async () => {
  const granted = new Set();
  const gate = createOriginGate({
    confirm: async () => "allow", permissionsContains: async (p) => granted.has(p), requestGrant: async () => {},
    decide: click, log: fakeLog(),
  });
  await assert.rejects(gate("https://a.test/", ctx(), "tab_open"), (e) => e.code === "origin_not_approved");
});

test("concurrent calls for one origin share one prompt", async () => {
  const gateOpen = deferred();
  let prompts = 0;
  const granted = new Set();
  const gate = createOriginGate({
    confirm: async (req) => { prompts += 1; await gateOpen.promise; granted.add(req.pattern); return "allow"; },
    permissionsContains: async (p) => granted.has(p), requestGrant: async () => {}, decide: click, log: fakeLog(),
  });
  const a = gate("https://a.test/1", ctx(), "tab_open");
  const b = gate("https://a.test/2", ctx(), "page_text");
  await flush();
  gateOpen.resolve();
  assert.deepEqual(await Promise.all([a, b]), ["https://a.test", "https://a.test"]);
  assert.equal(prompts, 1);
});

test("confirm timeout comes from policy.confirmTimeoutSeconds, clamped to 5..600, default 40", async () => {
  const seen = [];
  const gate = createOriginGate({
    confirm: async (r) => { seen.push(r.timeoutMs); return "deny"; }, permissionsContains: async () => false,
    requestGrant: async () => {}, decide: click, log: fakeLog(),
  });
  for (const t of [10, 1, 10_000, "x"]) await gate("https://a.test/", ctx([], { confirmTimeoutSeconds: t }), "t").catch(() => {});
  assert.deepEqual(seen, [10_000, 5_000, 600_000, 40_000]);
});

test("an unanswered origin prompt refuses with confirm_timeout, a denied one with origin_not_approved", async () => {
  for (const [answer, code] of [["timeout", "confirm_timeout"], ["deny", "origin_not_approved"]]) {
    const grants = [];
    const gate = createOriginGate({
      confirm: async () => answer, permissionsContains: async () => false,
      requestGrant: async (o) => { grants.push(o); }, decide: click, log: fakeLog(),
    });
    await assert.rejects(gate("https://a.test/", ctx([]), "t"), (e) => e.code === code, answer);
    assert.deepEqual(grants, [], "nothing is recorded");
  }
});

test("the host's decision is asked for a new origin, and anything but a valid one refuses", async () => {
  for (const [name, answer] of [
    ["throws", () => { throw new Error("not_paired"); }],
    ["null", () => null],
    ["unknown ask", (o) => ({ origin: o, ask: "maybe" })],
    ["another origin", () => ({ origin: "https://other.test", ask: "click" })],
    ["tap without detail", (o) => ({ origin: o, ask: "tap", action: "policy.widen" })],
    ["tap for another action", (o) => ({ origin: o, ask: "tap", action: "unkill", detail: "" })],
  ]) {
    const { gate, calls } = make({ decideAnswer: answer });
    await assert.rejects(gate("https://new.test/", ctx(), "tab_open"), (e) => e.code === "origin_not_approved", name);
    assert.deepEqual(calls.decide, ["https://new.test"], name);
    assert.equal(calls.confirm.length, 0, `${name}: no window without a decision`);
    assert.equal(calls.grant.length, 0, name);
  }
});

test("an origin the host says is approved asks only for Chrome's grant (no grant message)", async () => {
  const { gate, calls } = make({ decideAnswer: (o) => ({ origin: o, ask: "none" }) });
  assert.equal(await gate("https://new.test/", ctx(), "tab_open"), "https://new.test");
  assert.equal(calls.confirm.length, 1);
  assert.match(calls.confirm[0].detail, /is approved in tabwarden's policy/);
  assert.equal(calls.grant.length, 0);
});
