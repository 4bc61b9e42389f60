import { test } from "node:test";
import assert from "node:assert/strict";
import {
  approvesOrigin, coversPublicSuffix, describeApproval, isPublicSuffix, readApproval, wildcardPattern,
} from "../../extension/shared/approval.js";
import { parsePolicy } from "../../extension/worker/policy.js";
import { createOriginGate } from "../../extension/worker/origin-gate.js";
import { allowFilter, allowRegex, initiatorHost, navBlockRules } from "../../extension/worker/nav-block.js";
import { fakeLog } from "./helpers/fakes.mjs";

test("the public-suffix rules: suffixes, wildcard rules, exceptions, the implicit top-level rule", () => {
  for (const ps of ["com", "co.uk", "github.io", "localhost", "test", "foo.ck"]) assert.ok(isPublicSuffix(ps), ps);
  for (const owned of ["example.com", "example.co.uk", "app.localhost", "www.ck"]) assert.ok(!isPublicSuffix(owned), owned);
  // a registrable domain with public suffixes below it cannot be wildcarded either
  for (const holder of ["amazonaws.com", "kawasaki.jp"]) assert.ok(coversPublicSuffix(holder), holder);
  assert.ok(!coversPublicSuffix("example.com"));
});

test("a wildcard over a public suffix carried by a signed policy approves nothing and is listed as refused", () => {
  const bad = ["https://*.com", "https://*.co.uk", "https://*.github.io", "http://*.localhost:8000", "https://*.amazonaws.com", "*", "https://*", "https://*.*.example.com", "https://a*.example.com", "https://*.EXAMPLE.com", "https://*.example.com:443", "https://*.127.0.0.1"];
  const p = parsePolicy({ origins: bad });
  assert.deepEqual([...p.approvedOrigins], []);
  assert.deepEqual(p.refusedApprovals.map((a) => a.entry), bad);
  for (const origin of ["https://example.com", "https://www.example.com", "https://a.github.io", "https://x.co.uk", "http://a.localhost:8000", "https://s3.amazonaws.com", "https://com"]) {
    assert.equal(p.approves(origin), false, origin);
  }
  assert.match(p.refusedApprovals[0].reason, /public suffix/);
});

test("a subdomain approval approves its domain and names below it, on its scheme and port only", () => {
  const p = parsePolicy({ origins: ["https://*.example.com", "http://*.app.localhost:8123"] });
  for (const ok of ["https://example.com", "https://www.example.com", "https://a.b.example.com", "HTTPS://WWW.Example.com:443", "http://x.app.localhost:8123"]) {
    assert.equal(p.approves(ok), true, ok);
  }
  for (const evil of ["https://evilexample.com", "https://example.com.evil.test", "https://www.example.com.evil.test", "http://www.example.com",
    "https://www.example.com:8443", "https://example.org", "https://com", "http://x.app.localhost", "http://x.app.localhost:8124",
    "http://evilapp.localhost:8123", "https://*.example.com", null, "not a url"]) {
    assert.equal(p.approves(evil), false, String(evil));
  }
  assert.equal(describeApproval(/** @type {any} */ (p.approvalFor("https://www.example.com"))), "example.com and every subdomain (https)");
  assert.equal(describeApproval(/** @type {any} */ (readApproval("http://*.app.localhost:8123"))), "app.localhost and every subdomain (http, port 8123)");
  assert.equal(wildcardPattern(p.approvalFor("https://a.example.com")), "https://*.example.com/*");
  assert.equal(wildcardPattern(readApproval("https://a.example.com")), null);
});

test("approvesOrigin matches by whole labels only (property over generated hosts)", () => {
  const approval = [/** @type {any} */ (readApproval("https://*.example.com"))];
  const labels = ["a", "www", "example", "evil", "com", "xexample", "example-com", "test", ""];
  for (const a of labels) for (const b of labels) for (const c of labels) {
    const host = [a, b, c].filter((x) => x !== "").join(".");
    if (host === "") continue;
    for (const port of ["", ":8443"]) for (const scheme of ["http", "https"]) {
      const origin = `${scheme}://${host}${port}`;
      const expect = scheme === "https" && port === "" && (host === "example.com" || host.endsWith(".example.com"));
      assert.equal(approvesOrigin(origin, approval), expect, origin);
    }
  }
});

test("the origin gate asks Chrome for the wildcard's pattern and names it in plain words", async () => {
  const granted = new Set();
  const confirms = [];
  const gate = createOriginGate({
    confirm: async (req) => { confirms.push(req); granted.add(req.pattern); return "allow"; },
    permissionsContains: async (pattern) => granted.has(pattern),
    requestGrant: async () => { throw new Error("a signed approval needs no grant"); },
    decide: async () => { throw new Error("a signed approval needs no decision"); },
    log: fakeLog(),
  });
  const ctx = { session: "s1", policy: parsePolicy({ origins: ["https://*.example.com"], confirmTimeoutSeconds: 30 }) };
  assert.equal(await gate("https://shop.example.com/cart", ctx, "tab_open"), "https://shop.example.com");
  assert.equal(confirms.length, 1);
  assert.equal(confirms[0].pattern, "https://*.example.com/*");
  assert.match(confirms[0].detail, /example\.com and every subdomain/);
  // one grant covers the next subdomain: no second window
  assert.equal(await gate("https://www.example.com/", ctx, "page_text"), "https://www.example.com");
  assert.equal(confirms.length, 1);
});

test("the origin gate: a lookalike or sibling of a wildcard is asked as its own exact origin", async () => {
  const confirms = [];
  const decided = [];
  const gate = createOriginGate({
    confirm: async (req) => { confirms.push(req); return "deny"; },
    permissionsContains: async (pattern) => pattern === "https://*.example.com/*",
    requestGrant: async () => {},
    decide: async (origin) => { decided.push(origin); return { origin, ask: "click" }; },
    log: fakeLog(),
  });
  const ctx = { session: "s1", policy: parsePolicy({ origins: ["https://*.example.com"], confirmTimeoutSeconds: 30 }) };
  for (const evil of ["https://example.com.evil.test/", "https://evilexample.com/", "https://example.org/", "http://www.example.com/"]) {
    await assert.rejects(gate(evil, ctx, "tab_open"), (e) => e.code === "origin_not_approved", evil);
  }
  assert.deepEqual(decided, ["https://example.com.evil.test", "https://evilexample.com", "https://example.org", "http://www.example.com"]);
  assert.equal(confirms.length, 4);
  assert.ok(confirms.every((c) => !c.pattern.includes("*.")));
});

/** Chrome's regexFilter, case-insensitive, against the canonical URL. */
const regexAllows = (rules, tabId, url) => {
  const href = new URL(url).href;
  const hits = rules.filter((r) => r.condition.tabIds?.includes(tabId) && (
    (r.condition.urlFilter === undefined && r.condition.regexFilter === undefined)
    || (r.condition.urlFilter !== undefined && href.toLowerCase().startsWith(r.condition.urlFilter.slice(1).toLowerCase()))
    || (r.condition.regexFilter !== undefined && new RegExp(r.condition.regexFilter, "i").test(href))));
  return hits.sort((a, b) => b.priority - a.priority)[0]?.action.type === "allow";
};

test("stop-before-leave: a wildcard's allow rule lets its subdomains through and stops lookalikes", () => {
  assert.equal(allowRegex("https://*.example.com"), "^https://([a-z0-9-]+\\.)*example\\.com/");
  assert.equal(allowRegex("https://*.com"), null);
  assert.equal(allowRegex("https://example.com"), null);
  // Never an exact urlFilter for a wildcard (Chrome's URL parser would read "*" as "%2a").
  assert.equal(allowFilter("https://*.example.com"), null);
  assert.equal(initiatorHost("https://*.example.com"), "example.com");
  const rules = navBlockRules([7], ["https://*.example.com", "http://*.app.localhost:8123", "https://*.github.io"]);
  for (const ok of ["https://example.com/", "https://a.b.example.com/x?y", "http://x.app.localhost:8123/"]) assert.ok(regexAllows(rules, 7, ok), ok);
  for (const evil of ["https://evilexample.com/", "https://example.com.evil.test/", "https://evil.test/?a=.example.com/", "http://www.example.com/",
    "https://www.example.com:8443/", "http://x.app.localhost:8124/", "http://x.app.localhost/", "https://a.github.io/", "https://evil.test/#.example.com/"]) {
    assert.ok(!regexAllows(rules, 7, evil), evil);
  }
  assert.ok(!rules.some((r) => JSON.stringify(r.condition).includes("github")), "a refused wildcard adds no rule");
  assert.deepEqual(rules.filter((r) => r.condition.urlFilter !== undefined), [], "only regexFilters for wildcards");
  assert.equal(rules.filter((r) => r.condition.regexFilter !== undefined).length, 2);
});

test("the confirm window names a wildcard's grant in plain words, never as one site", async () => {
  const { originWords } = await import("../../extension/ui/confirm-page.js");
  assert.equal(originWords("https://shop.example.com", "https://*.example.com/*"),
    "https://shop.example.com — approved as example.com and every subdomain (https); Chrome's grant covers all of it");
  assert.equal(originWords("https://shop.example.com", "https://shop.example.com/*"), "https://shop.example.com");
  assert.equal(originWords("https://a.github.io", "https://*.github.io/*"), "https://a.github.io");
  assert.equal(originWords(undefined, null), "");
});
