// page_snapshot's text runs in dom mode (page/snapshot.js, `text: true`), as the accessibility
// mode lists StaticText (worker/a11y.js axRows): each visible run of text is a row {role: "text",
// name} without a ref, in document order among the elements, never one a row already says (a
// link's or a button's text is its name, a field's text its value), never hidden text, card
// numbers masked, none with compact; and the one interactive-first rule both modes cut by
// (page/pick.js), with the text runs cut before any control.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { pick as workerPick, MAX_NODES } from "../../extension/worker/a11y.js";
import { FakeDocument, runIn } from "./helpers/fake-dom.mjs";
import { callPageOp } from "./helpers/page-code.mjs";

const URL_A = "http://127.0.0.1:8000/a";
const ORIGIN = "http://127.0.0.1:8000";
const snap = (doc, a = {}) => runIn(doc, callPageOp, ["snapshot", { origin: ORIGIN, ...a }]);

function articlePage() {
  const doc = new FakeDocument(URL_A, "Article");
  const host = doc.h("x-note", { id: "host" });
  host.attachShadow().append(doc.h("p", {}, "In the shadow"));
  doc.body.append(
    doc.h("h1", {}, "Release notes"),
    doc.h("p", {}, "Hello ", doc.h("b", {}, "world"), " again"),
    doc.h("a", { href: "/more" }, "Read more"),
    doc.h("p", { _hidden: true }, "Not shown"),
    doc.h("label", {}, "Name ", doc.h("input", { id: "name", value: "alice" })),
    doc.h("textarea", { id: "t" }, "draft text"),
    doc.h("p", {}, "card 4111 1111 1111 1111 on file"),
    host,
    doc.h("button", {}, "Save"),
    doc.h("p", {}, "   "),
  );
  return doc;
}

test("text: true lists the text runs in document order among the elements, without refs", async () => {
  const r = await snap(articlePage(), { text: true });
  const rows = r.snapshot.map((i) => (i.role === "text" ? `text:${i.name}` : `${i.role}:${i.name}`));
  assert.deepEqual(rows, [
    "heading:Release notes",
    "text:Hello", "text:world", "text:again",
    "link:Read more",
    "text:Name", "textbox:", // (the fake DOM names no field by its label)
    "textbox:",
    "text:card [card] on file",
    "text:In the shadow",
    "button:Save",
  ]);
  for (const row of r.snapshot.filter((i) => i.role === "text")) assert.deepEqual(Object.keys(row).sort(), ["name", "role"]);
  // Every element row keeps its ref; hidden text, a field's text and blank runs are no rows.
  assert.ok(r.snapshot.filter((i) => i.role !== "text").every((i) => /^@e\d+$/.test(i.ref)));
  const all = JSON.stringify(r);
  for (const gone of ["Not shown", "draft text", "4111"]) assert.ok(!all.includes(gone), gone);
});

test("without text, or with compact, the walk lists elements only, as before", async () => {
  for (const a of [{}, { text: false }, { text: true, compact: true }]) {
    const r = await snap(articlePage(), a);
    assert.ok(r.snapshot.every((i) => i.role !== "text"), JSON.stringify(a));
    assert.ok(r.snapshot.every((i) => typeof i.ref === "string"));
  }
});

test("a long run is shortened and says its length; the cut keeps controls before text", async () => {
  const doc = new FakeDocument(URL_A, "Long");
  doc.body.append(doc.h("p", {}, "x".repeat(300)), doc.h("p", {}, "tail"), doc.h("button", {}, "Go"), doc.h("button", {}, "Stop"));
  const whole = await snap(doc, { text: true });
  const long = whole.snapshot[0];
  assert.equal(long.name.length, 200);
  assert.deepEqual(long.shortened, { name: { chars: 300, readWith: "page_text" } });
  const cut = await snap(doc, { text: true, maxNodes: 2 });
  assert.deepEqual(cut.snapshot.map((i) => i.name), ["Go", "Stop"]);
  assert.equal(cut.truncated, true);
  assert.deepEqual({ rows: cut.cut.rows, interactive: cut.cut.interactive }, { rows: 2, interactive: 0 });
  assert.match(cut.cut.rest, /every interactive element is listed; 2 other rows/);
});

test("one interactive-first rule: the worker's pick is page/pick.js's, and no other file holds one", () => {
  assert.equal(workerPick, globalThis.tabwardenPick.pick);
  assert.equal(MAX_NODES, globalThis.tabwardenPick.MAX_NODES);
  const root = new URL("../../extension/", import.meta.url);
  const holders = [];
  for (const dir of ["", "worker/", "ui/", "shared/", "handlers/", "page/"]) {
    for (const name of readdirSync(new URL(dir, root))) {
      if (!name.endsWith(".js")) continue;
      if (/are listed\): call again with skip/.test(readFileSync(new URL(dir + name, root), "utf8"))) holders.push(dir + name);
    }
  }
  assert.deepEqual(holders, ["page/pick.js"]);
});
