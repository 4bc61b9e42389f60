// The extension's version (its manifest's `version`) in the popup's and the options page's
// header (#version): shown as given by the entry script, never taken from a worker answer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { runOptionsPage } from "../../extension/ui/options-page.js";
import { runPopupPage, versionText } from "../../extension/ui/popup-page.js";

const MANIFEST = JSON.parse(readFileSync(new URL("../../extension/manifest.json", import.meta.url), "utf8"));

function fakeDoc() {
  const els = new Map();
  const el = (id) => {
    if (!els.has(id)) {
      els.set(id, {
        id, textContent: "", hidden: false, disabled: false, value: "", checked: false, open: false,
        setAttribute() {}, removeAttribute() {}, addEventListener() {}, replaceChildren() {},
        classList: { toggle() {}, add() {}, remove() {}, contains: () => false },
        querySelector: () => null, querySelectorAll: () => [], focus() {},
      });
    }
    return els.get(id);
  };
  return { getElementById: el, createElement: (tag) => el(`new-${tag}-${els.size}`), el };
}

const api = { sendMessage: async () => ({ ok: false }), getAssertion: async () => null, createCredential: async () => null };

test("versionText: the manifest's version as vX.Y.Z; anything else shows nothing", () => {
  assert.equal(versionText(MANIFEST.version), `v${MANIFEST.version}`);
  assert.equal(versionText("0.1.0"), "v0.1.0");
  for (const bad of [undefined, null, "", 1, "<b>1</b>", "1.0 beta", "x".repeat(40)]) assert.equal(versionText(bad), "");
});

test("the popup shows the manifest's version in #version", async () => {
  const doc = fakeDoc();
  await runPopupPage({ doc, api, version: MANIFEST.version });
  assert.equal(doc.el("version").textContent, `v${MANIFEST.version}`);
});

test("the options page shows the manifest's version in #version", async () => {
  const doc = fakeDoc();
  await runOptionsPage({ doc, api, version: MANIFEST.version });
  assert.equal(doc.el("version").textContent, `v${MANIFEST.version}`);
});

test("popup.html and options.html have the #version slot in their header", () => {
  for (const page of ["popup.html", "options.html"]) {
    const html = readFileSync(new URL(`../../extension/${page}`, import.meta.url), "utf8");
    assert.match(html, /<h1>tabwarden <span id="version" class="version"><\/span><\/h1>/, page);
  }
});
