import { test } from "node:test";
import assert from "node:assert/strict";
import { isApproved, normaliseOrigin, originOf, permissionPattern } from "../../extension/shared/origin.js";

test("originOf: exact scheme://host[:port], lower-case host, default ports dropped", () => {
  assert.equal(originOf("http://127.0.0.1:8000/a/b?q=1#f"), "http://127.0.0.1:8000");
  assert.equal(originOf("HTTPS://Example.COM:443/x"), "https://example.com");
  assert.equal(originOf("http://example.com:80/"), "http://example.com");
  assert.equal(originOf("https://example.com:80/"), "https://example.com:80");
  assert.equal(originOf("http://[::1]:8080/"), "http://[::1]:8080");
  assert.equal(originOf("http://bücher.example/"), "http://xn--bcher-kva.example");
  assert.equal(originOf("http://0x7f.1/"), "http://127.0.0.1", "the URL parser's canonical IPv4");
});

test("originOf: only http/https, no credentials, nothing unparsable", () => {
  for (const u of ["file:///etc/passwd", "chrome://settings", "javascript:alert(1)", "data:text/html,x", "ftp://h/",
    "about:blank", "chrome-extension://abc/confirm.html", "ws://h/", "not a url", "", null, 5, "http://user:pw@example.com/",
    "http://x".padEnd(9000, "x")]) {
    assert.equal(originOf(u), null, String(u).slice(0, 40));
  }
});

test("isApproved: exact equality only (lookalikes, ports, schemes, subdomains)", () => {
  const approved = ["http://127.0.0.1", "http://localhost:8000", "https://example.com"];
  assert.equal(isApproved("http://127.0.0.1", approved), true);
  assert.equal(isApproved(originOf("http://127.0.0.1:80/x"), approved), true);
  assert.equal(isApproved("http://localhost:8000", approved), true);
  for (const o of ["http://127.0.0.1.evil.test", "http://127.0.0.1:8080", "http://localhost:8001", "http://localhost",
    "https://127.0.0.1", "http://example.com", "https://sub.example.com", "https://example.com.evil.test",
    "https://evilexample.com", "https://example.co"]) {
    assert.equal(isApproved(o, approved), false, o);
  }
});

test("isApproved: entries must be bare origins; junk approves nothing", () => {
  assert.equal(isApproved("https://example.com", ["https://example.com/"]), false);
  assert.equal(isApproved("https://example.com", ["https://example.com/*"]), false);
  assert.equal(isApproved("https://example.com", ["*://example.com"]), false);
  assert.equal(isApproved("https://example.com", ["https://*.com"]), false);
  assert.equal(isApproved("https://example.com", ["https://EXAMPLE.com:443"]), true, "entries are normalised too");
  assert.equal(isApproved("https://example.com", "https://example.com"), false);
  assert.equal(isApproved("https://example.com", [null, 5, {}]), false);
  assert.equal(isApproved(null, ["https://example.com"]), false);
  assert.equal(normaliseOrigin("https://user@example.com"), null);
});

test("permissionPattern keeps a non-default port and needs a bare origin", () => {
  assert.equal(permissionPattern("http://127.0.0.1:8000"), "http://127.0.0.1:8000/*");
  assert.equal(permissionPattern("https://example.com"), "https://example.com/*");
  assert.equal(permissionPattern("https://example.com/path"), null);
  assert.equal(permissionPattern("file://x"), null);
  assert.equal(permissionPattern(undefined), null);
});
