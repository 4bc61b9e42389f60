// A snapshot's honesty in the service worker's pure parts: link addresses are masked as URLs by
// their key in every reply (mask.js LINK_FIELDS / maskHref), idempotently; the accessibility
// mode's rows keep the page half's href and say what was shortened (a11y.js compose); a document
// with nothing to reference answers its text (a11y.js documentText), rows to act on do not.
import { test } from "node:test";
import assert from "node:assert/strict";
import { maskHref, maskOutcome } from "../../extension/worker/mask.js";
import { compose, documentText } from "../../extension/worker/a11y.js";

const TOKEN_LIKE = "a1B2c3D4e5F6g7H8i9J0k1L2";

test("an href is masked as a URL wherever it sits in a reply, and masking it again changes nothing", () => {
  const href = `http://user:pw@site.test/out?code=oauth-123&u=${TOKEN_LIKE}&next=%2Fhome#access_token=abc123def456`;
  const reply = { ok: true, result: { snapshot: [{ ref: "@e1", role: "link", name: "Go", tag: "a", href }], items: [{ attrs: { href } }] } };
  const once = maskOutcome("page_snapshot", /** @type {any} */ (reply));
  const twice = maskOutcome("page_snapshot", once);
  assert.deepEqual(twice, once);
  for (const masked of [once.result.snapshot[0].href, once.result.items[0].attrs.href]) {
    assert.ok(masked.startsWith("http://site.test/out?code=[masked"), masked);
    for (const secret of ["oauth-123", TOKEN_LIKE, "abc123def456", "user:pw"]) assert.ok(!masked.includes(secret), masked);
    assert.ok(masked.includes("next=%2Fhome"), masked);
  }
  assert.equal(maskHref("/relative?x=1"), "/relative?x=1");
  assert.equal(maskHref("mailto:bob@site.test"), "mailto:bob@site.test");
  assert.equal(maskHref("https://site.test/plain"), "https://site.test/plain");
});

test("a11y rows keep the page half's href and mark what was shortened", () => {
  const rows = [
    { role: "link", name: "", needText: true, depth: 1 },
    { role: "textbox", name: "N".repeat(250), needText: false, depth: 1 },
  ];
  const described = [
    { ref: "@e1", tag: "a", href: "http://site.test/a", text: "t".repeat(199) + "…", shortened: { text: { chars: 900, readWith: "page_text" } }, visible: true, inViewport: true },
    { ref: "@e2", tag: "textarea", value: "v".repeat(199) + "…", shortened: { value: { chars: 500, readWith: "page_get_state" } }, visible: true, inViewport: true },
  ];
  const [link, box] = compose(/** @type {any} */ (rows), described, { mask: (s) => s, maxName: 200 });
  assert.equal(link.href, "http://site.test/a");
  assert.deepEqual(link.shortened, { name: { chars: 900, readWith: "page_text" } });
  assert.deepEqual(box.shortened, { name: { chars: 250, readWith: "page_text" }, value: { chars: 500, readWith: "page_get_state" } });
  assert.ok(String(box.name).endsWith("…") && String(box.name).length === 200);
});

test("a document's text is answered only when the rows give nothing to act on", () => {
  const page = { text: "Plain words", note: "no elements to reference", shortened: { text: { chars: 30000, readWith: "page_text" } } };
  assert.deepEqual(documentText(page, []), { text: "Plain words", note: "no elements to reference", shortened: { text: { chars: 30000, readWith: "page_text" } } });
  assert.deepEqual(documentText(page, [{ role: "heading" }]).text, "Plain words");
  assert.deepEqual(documentText(page, [{ role: "link" }]), {});
  assert.deepEqual(documentText({}, []), {});
});
