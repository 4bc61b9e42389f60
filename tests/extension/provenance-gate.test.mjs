import { test } from "node:test";
import assert from "node:assert/strict";
import { createProvenanceGate, evidenceOf, provenanceMode } from "../../extension/lib/provenance-gate.js";

const ctx = (provenance) => ({ session: "s1", client: "agent", policy: { origins: ["http://a.test", "http://evil.test"], confirmTimeoutSeconds: 30, ...(provenance ? { provenance } : {}) } });
const from = (sourceOrigin, token = "Zx…Lm (12 chars)") => ({ provenance: { evidence: [{ sourceOrigin, kind: "token", token, readAt: 1_700_000_000_000 }] } });

function make(answer = "allow") {
  const asked = [];
  const gate = createProvenanceGate({ confirm: async (req) => { asked.push(req); return answer; } });
  return { gate, asked };
}

test("no lineage: nothing to decide, nobody asked", async () => {
  const { gate, asked } = make();
  assert.equal(await gate.check({ url: "http://evil.test/" }, ctx(), "page_navigate", "http://evil.test", { address: "http://evil.test/" }), null);
  assert.equal(asked.length, 0);
});

test("lineage from the target's own origin is allowed without a question", async () => {
  const { gate, asked } = make("deny");
  assert.equal(await gate.check(from("http://a.test"), ctx(), "page_fill", "http://a.test"), "same_origin");
  assert.equal(asked.length, 0);
});

test("another origin's page suggested the address: the window names that page, even though the target is approved", async () => {
  const { gate, asked } = make("allow");
  const url = "http://evil.test/collect?token=Zx81kq2PLmQ9";
  assert.equal(await gate.check({ url, ...from("http://a.test") }, ctx(), "page_navigate", "http://evil.test", { address: url }), "confirmed");
  assert.equal(asked.length, 1);
  assert.match(asked[0].detail, /^A page on http:\/\/a\.test suggested this address: http:\/\/evil\.test\/collect/);
  assert.match(asked[0].detail, /matched: token Zx…Lm \(12 chars\)/);
  assert.equal(asked[0].origin, "http://evil.test");
});

test("a denied or unanswered window refuses the call", async () => {
  for (const [answer, code] of [["deny", "confirm_denied"], ["timeout", "confirm_timeout"]]) {
    const { gate } = make(answer);
    await assert.rejects(gate.check(from("http://a.test"), ctx(), "page_navigate", "http://evil.test", { address: "http://evil.test/" }), { code });
  }
});

test("typed text names both origins", async () => {
  const { gate, asked } = make("allow");
  assert.equal(await gate.check(from("http://evil.test"), ctx(), "page_type", "http://a.test"), "confirmed");
  assert.match(asked[0].detail, /type into http:\/\/a\.test a value that came from a page on http:\/\/evil\.test/);
});

test("strict refuses without asking; off lets through without asking", async () => {
  const strict = make("allow");
  await assert.rejects(strict.gate.check(from("http://a.test"), ctx("strict"), "page_navigate", "http://evil.test", { address: "http://evil.test/" }),
    (err) => err.code === "provenance_refused" && /a page on http:\/\/a\.test suggested this address/.test(err.message));
  assert.equal(strict.asked.length, 0);
  const off = make("deny");
  assert.equal(await off.gate.check(from("http://a.test"), ctx("off"), "page_navigate", "http://evil.test", { address: "http://evil.test/" }), "off");
  assert.equal(off.asked.length, 0);
});

test("an unknown policy value asks; an unknown target makes all lineage foreign", async () => {
  assert.equal(provenanceMode({ provenance: "loose" }), "confirm");
  assert.equal(provenanceMode(null), "confirm");
  const { gate, asked } = make("allow");
  assert.equal(await gate.check(from("http://a.test"), ctx(), "page_fill", null), "confirmed");
  assert.equal(asked.length, 1);
});

test("a malformed provenance is refused, never read as no lineage", () => {
  for (const bad of [{}, { evidence: [] }, { evidence: [{ kind: "token", token: "x" }] }, "x", { evidence: new Array(9).fill({ sourceOrigin: "http://a.test", kind: "t", token: "x" }) }]) {
    assert.throws(() => evidenceOf({ provenance: bad }), { code: "bad_request" });
  }
});

test("withDecision adds the decision to that call's reply only", async () => {
  const { gate } = make("allow");
  const routes = gate.withDecision([["page_fill", async (args, c) => { await gate.check(args, c, "page_fill", "http://a.test"); return { filled: true }; }]]);
  const [, handler] = routes[0];
  assert.deepEqual(await handler(from("http://evil.test"), ctx()), { filled: true, provenance: "confirmed" });
  assert.deepEqual(await handler({}, ctx()), { filled: true });
});
