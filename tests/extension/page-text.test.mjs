import { test } from "node:test";
import assert from "node:assert/strict";
import { readPageText } from "../../extension/worker/page-text.js";

test("readPageText is self-contained and reads only body.innerText, location.href and the document's origin", () => {
  const src = readPageText.toString();
  assert.doesNotMatch(src, /\bimport\b|\brequire\b|\.value\b|innerHTML/);
  const saved = { document: globalThis.document, location: globalThis.location, origin: globalThis.origin };
  try {
    // a password input's value never reaches innerText; the function cannot see it
    globalThis.document = { body: { innerText: "Login\nUser" }, querySelector: () => ({ value: "hunter2" }) };
    globalThis.location = { href: "http://127.0.0.1:8000/login" };
    globalThis.origin = "http://127.0.0.1:8000";
    // run it the way executeScript does: from its source, with no closure
    const fn = new Function(`return (${src})`)();
    assert.deepEqual(fn(), { text: "Login\nUser", href: "http://127.0.0.1:8000/login", origin: "http://127.0.0.1:8000" });
    globalThis.document = { body: null };
    assert.deepEqual(fn(), { text: "", href: "http://127.0.0.1:8000/login", origin: "http://127.0.0.1:8000" });
  } finally {
    globalThis.document = saved.document;
    globalThis.location = saved.location;
    globalThis.origin = saved.origin;
  }
});
