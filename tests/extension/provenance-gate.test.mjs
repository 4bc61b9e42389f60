import { test } from "node:test";
import assert from "node:assert/strict";
import { createProvenanceGate, evidenceOf, lineageOf, provenanceTapDetail, sha256Hex } from "../../extension/worker/provenance-gate.js";
import { parsePolicy } from "../../extension/worker/policy.js";

const ctx = (provenance) => ({ session: "s1", client: "agent", policy: parsePolicy({ origins: ["http://a.test", "http://evil.test"], confirmTimeoutSeconds: 30, ...(provenance ? { provenance } : {}) }) });
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
  assert.equal(parsePolicy({ provenance: "loose" }).provenance, "confirm");
  assert.equal(parsePolicy(null).provenance, "confirm");
  const { gate, asked } = make("allow");
  assert.equal(await gate.check(from("http://a.test"), ctx(), "page_fill", null), "confirmed");
  assert.equal(asked.length, 1);
});

test("a malformed provenance is refused, never read as no lineage", () => {
  for (const bad of [{}, { evidence: [] }, { evidence: [{ kind: "token", token: "x" }] }, "x", { evidence: new Array(9).fill({ sourceOrigin: "http://a.test", kind: "t", token: "x" }) }]) {
    assert.throws(() => evidenceOf({ provenance: bad }), { code: "bad_request" });
  }
});

test("gated adds the decision to that call's reply only", async () => {
  const { gate } = make("allow");
  const routes = gate.gated([["page_fill", async (args, c) => { await gate.check(args, c, "page_fill", "http://a.test"); return { filled: true }; }]]);
  const [, handler] = routes[0];
  assert.deepEqual(await handler(from("http://evil.test"), ctx()), { filled: true, provenance: "confirmed", provenancePath: "window" });
  assert.deepEqual(await handler({}, ctx()), { filled: true });
});

function enrolled(answer = "allow", isEnrolled = async () => true) {
  const asked = [];
  const gate = createProvenanceGate({ confirm: async (req) => { asked.push(req); return answer; }, enrolled: isEnrolled });
  return { gate, asked };
}

test("an enrolled browser is asked for a tap naming the target, the sources and the value's hash, never a click", async () => {
  const { gate, asked } = enrolled("allow");
  const value = "Zx81kq2PLmQ9";
  const args = { provenance: { evidence: [
    { sourceOrigin: "http://z.test", kind: "token", token: "Zx…Q9 (12 chars)", readAt: 1 },
    { sourceOrigin: "http://a.test", kind: "token", token: "Zx…Q9 (12 chars)", readAt: 2 },
    { sourceOrigin: "http://b.test", kind: "value", token: "[12 chars]", readAt: 3 },
  ] } };
  const [[, handler]] = gate.gated([["page_fill", async (a, c) => { await gate.check(a, c, "page_fill", "http://b.test", { value }); return { filled: true }; }]]);
  assert.deepEqual(await handler(args, ctx()), { filled: true, provenance: "confirmed", provenancePath: "webauthn" });
  assert.equal(asked.length, 1);
  assert.equal(asked[0].presence.action, "confirm.provenance");
  assert.equal(asked[0].presence.detail, await provenanceTapDetail("http://b.test", value, ["http://z.test", "http://a.test"]));
  assert.deepEqual(JSON.parse(asked[0].presence.detail), { origin: "http://b.test", sha256: await sha256Hex(value), sources: ["http://a.test", "http://z.test"] });
  assert.ok(!asked[0].presence.detail.includes(value), "the tap names the value's hash, not the value");
  assert.match(asked[0].detail, /security key/);
  assert.equal(await sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test("a refused or absent tap refuses the call; the same-origin case asks nobody", async () => {
  for (const [answer, code] of [["deny", "confirm_denied"], ["timeout", "confirm_timeout"]]) {
    const { gate } = enrolled(answer);
    await assert.rejects(gate.check(from("http://a.test"), ctx(), "page_navigate", "http://evil.test", { address: "http://evil.test/" }), { code });
  }
  const { gate, asked } = enrolled("deny", async () => { throw new Error("never asked"); });
  assert.equal(await gate.check(from("http://a.test"), ctx(), "page_fill", "http://a.test"), "same_origin");
  assert.equal(asked.length, 0);
});

test("when the host cannot say whether the browser is enrolled, nothing is asked and the call is refused", async () => {
  for (const isEnrolled of [async () => { throw new Error("host gone"); }, async () => undefined, async () => "yes"]) {
    const { gate, asked } = enrolled("allow", isEnrolled);
    await assert.rejects(gate.check(from("http://a.test"), ctx(), "page_fill", "http://b.test", { value: "x" }), { code: "internal_error" });
    assert.equal(asked.length, 0);
  }
});

test("an enrolled browser with an unknown target is refused (a tap must name the site); strict and off never ask the host", async () => {
  const { gate, asked } = enrolled("allow");
  await assert.rejects(gate.check(from("http://a.test"), ctx(), "page_fill", null, { value: "x" }), { code: "provenance_refused" });
  assert.equal(asked.length, 0);
  const never = async () => { throw new Error("asked"); };
  await assert.rejects(enrolled("allow", never).gate.check(from("http://a.test"), ctx("strict"), "page_fill", "http://b.test"), { code: "provenance_refused" });
  assert.equal(await enrolled("allow", never).gate.check(from("http://a.test"), ctx("off"), "page_fill", "http://b.test"), "off");
});

test("what the call does is named in the window (page_select, page_keys, page_dialog)", async () => {
  const { gate, asked } = make("allow");
  await gate.check(from("http://evil.test"), ctx(), "page_select", "http://a.test", { value: "{}", doing: 'select "Zx81" on http://a.test,' });
  assert.match(asked[0].detail, /^The agent wants to select "Zx81" on http:\/\/a\.test, a value that came from a page on http:\/\/evil\.test/);
});

test("gated decides an address's and a request's lineage before the handler runs, against that address's origin", async () => {
  for (const [action, args] of [
    ["page_navigate", { tabId: 1, url: "http://evil.test/c?t=x" }],
    ["tab_open", { url: "http://evil.test/c?t=x" }],
    ["page_fetch", { tabId: 1, url: "http://evil.test/c", method: "POST", body: "t=x" }],
  ]) {
    let ran = 0;
    const strict = make("allow");
    const [[, handler]] = strict.gate.gated([[action, async () => { ran += 1; return { done: true }; }]]);
    await assert.rejects(handler({ ...args, ...from("http://a.test") }, ctx("strict")), { code: "provenance_refused" });
    assert.equal(ran, 0, `${action} ran under strict`);
    assert.equal(strict.asked.length, 0);
    const denied = make("deny");
    const [[, deniedHandler]] = denied.gate.gated([[action, async () => { ran += 1; return { done: true }; }]]);
    await assert.rejects(deniedHandler({ ...args, ...from("http://a.test") }, ctx()), { code: "confirm_denied" });
    assert.equal(ran, 0, `${action} ran after a denial`);
    assert.equal(denied.asked[0].origin, "http://evil.test");
    // Lineage from the address's own origin goes through without a question.
    assert.deepEqual(await deniedHandler({ ...args, ...from("http://evil.test") }, ctx()), { done: true, provenance: "same_origin" });
    assert.equal(ran, 1);
    ran = 0;
  }
});

test("a page_fetch a page suggested is named as a request in the window", async () => {
  const { gate, asked } = make("allow");
  const [[, handler]] = gate.gated([["page_fetch", async () => ({ ok: true })]]);
  await handler({ tabId: 1, url: "http://evil.test/c", method: "POST", body: "x", ...from("http://a.test") }, ctx());
  assert.match(asked[0].detail, /suggested this request: http:\/\/evil\.test\/c/);
});

test("an action without a provenance rule that carries lineage is refused before its handler runs; without lineage it runs", async () => {
  const { gate, asked } = make("allow");
  let ran = 0;
  const [[, handler]] = gate.gated([["page_new_thing", async () => { ran += 1; return { ok: true }; }]]);
  await assert.rejects(handler({ tabId: 1, ...from("http://a.test") }, ctx("off")), { code: "provenance_refused" });
  await assert.rejects(handler({ tabId: 1, provenance: { evidence: [] } }, ctx()), { code: "bad_request" });
  assert.equal(ran, 0);
  assert.equal(asked.length, 0);
  assert.deepEqual(await handler({ tabId: 1 }, ctx()), { ok: true });
});

// -- captures (docs/adr/0008): a screenshot, PDF or saved file the agent took earlier --

const captured = (...origins) => ({ provenance: { captures: origins.map((sourceOrigin, i) => ({ sourceOrigin, readAt: 1_700_000_000_000 + i })) } });

test("under strict, a call aimed at another origin than a capture's is asked, naming the capture and when it was taken", async () => {
  const { gate, asked } = make("allow");
  const url = "http://evil.test/collect?ref=Zx81kq2PLmQ9";
  assert.equal(await gate.check({ url, ...captured("http://a.test") }, ctx("strict"), "page_navigate", "http://evil.test", { address: url }), "confirmed");
  assert.equal(asked.length, 1);
  assert.equal(asked[0].source, "possibly a capture of http://a.test taken 2023-11-14 22:13:20 UTC");
  assert.match(asked[0].detail, /took a capture of http:\/\/a\.test .*cannot tell whether this address came from there/);
  assert.match(asked[0].detail, /Let the agent open http:\/\/evil\.test\/collect\?ref=Zx81kq2PLmQ9 on http:\/\/evil\.test\?/);
  assert.equal(asked[0].presence, null);
  const fetching = make("allow");
  await fetching.gate.check({ url, ...captured("http://a.test") }, ctx("strict"), "page_fetch", "http://evil.test", { address: url, request: true });
  assert.match(fetching.asked[0].detail, /whether this request .* came from there.*send this request to http:\/\/evil\.test/);
  const typing = make("allow");
  await typing.gate.check(captured("http://a.test"), ctx("strict"), "page_fill", "http://b.test", { value: "x" });
  assert.match(typing.asked[0].detail, /this value came from there\. Let the agent type into http:\/\/b\.test this value\?/);
});

test("a capture question denied or unanswered refuses the call", async () => {
  for (const [answer, code] of [["deny", "confirm_denied"], ["timeout", "confirm_timeout"]]) {
    const { gate } = make(answer);
    await assert.rejects(gate.check(captured("http://a.test"), ctx("strict"), "page_navigate", "http://evil.test", { address: "http://evil.test/" }), { code });
  }
});

test("a capture of the target's own origin asks nothing; one of another origin besides it still asks", async () => {
  const { gate, asked } = make("deny");
  assert.equal(await gate.check(captured("http://a.test"), ctx("strict"), "page_navigate", "http://a.test", { address: "http://a.test/x" }), null);
  assert.equal(asked.length, 0);
  await assert.rejects(gate.check(captured("http://a.test", "http://b.test"), ctx("strict"), "page_navigate", "http://a.test", { address: "http://a.test/x" }), { code: "confirm_denied" });
  assert.match(asked[0].source, /capture of http:\/\/b\.test/);
  assert.doesNotMatch(asked[0].source, /a\.test/);
});

test("under confirm and off, captures are the stated residual: nobody asked, no decision reported", async () => {
  for (const mode of [undefined, "confirm", "off"]) {
    const { gate, asked } = make("deny");
    const [[, handler]] = gate.gated([["page_navigate", async () => ({ url: "http://evil.test/" })]]);
    assert.deepEqual(await handler({ url: "http://evil.test/", ...captured("http://a.test") }, ctx(mode)), { url: "http://evil.test/" });
    assert.equal(asked.length, 0);
  }
});

test("text lineage is decided as before when captures come with it: strict refuses, confirm asks about the text", async () => {
  const both = { provenance: { ...from("http://a.test").provenance, ...captured("http://c.test").provenance } };
  const strict = make("allow");
  await assert.rejects(strict.gate.check(both, ctx("strict"), "page_navigate", "http://evil.test", { address: "http://evil.test/" }), { code: "provenance_refused" });
  assert.equal(strict.asked.length, 0);
  const asking = make("allow");
  assert.equal(await asking.gate.check(both, ctx(), "page_navigate", "http://evil.test", { address: "http://evil.test/" }), "confirmed");
  assert.equal(asking.asked[0].source, "a page on http://a.test");
  const same = make("deny");
  await assert.rejects(same.gate.check(both, ctx("strict"), "page_fill", "http://a.test"), { code: "confirm_denied" });
  assert.match(same.asked[0].source, /capture of http:\/\/c\.test/);
});

test("an enrolled browser is refused a capture question under strict (the host takes no tap under strict; a tap is never downgraded to a click)", async () => {
  const { gate, asked } = enrolled("allow");
  await assert.rejects(gate.check(captured("http://a.test"), ctx("strict"), "page_navigate", "http://evil.test", { address: "http://evil.test/" }),
    (err) => err.code === "provenance_refused" && /capture of http:\/\/a\.test/.test(err.message));
  assert.equal(asked.length, 0);
});

test("gated reports a capture question's decision, and malformed captures are refused, never read as none", async () => {
  const { gate } = make("allow");
  const [[, handler]] = gate.gated([["page_navigate", async () => ({ url: "http://evil.test/" })]]);
  assert.deepEqual(await handler({ url: "http://evil.test/", ...captured("http://a.test") }, ctx("strict")),
    { url: "http://evil.test/", provenance: "confirmed", provenancePath: "window" });
  for (const bad of [{ captures: [] }, { captures: [{ readAt: 1 }] }, { captures: [{ sourceOrigin: "" }] }, { captures: "x" },
    { captures: new Array(9).fill({ sourceOrigin: "http://a.test" }) }, { evidence: [], captures: [{ sourceOrigin: "http://a.test" }] }]) {
    assert.throws(() => lineageOf({ provenance: bad }), { code: "bad_request" });
  }
  const [[, unruled]] = gate.gated([["page_text", async () => ({ text: "" })]]);
  await assert.rejects(unruled(captured("http://a.test"), ctx("strict")), { code: "provenance_refused" });
});
