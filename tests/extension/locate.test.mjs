// page/locate.js picking an element by text, selector or xpath: exact text by default (whitespace
// collapsed, case-sensitive), substring and ignoreCase only when asked, several matches without an
// index answer `ambiguous` with the candidates (refs of this document), and every element op's
// answer names what it acted on (`target`, page_snapshot's role and name).
import { test } from "node:test";
import assert from "node:assert/strict";
import { FakeDocument, runIn } from "./helpers/fake-dom.mjs";
import { callPageOp } from "./helpers/page-code.mjs";

const ORIGIN = "http://127.0.0.1:8000";
const op = (doc, name, a = {}) => runIn(doc, callPageOp, [name, { origin: ORIGIN, ...a }]);

function page() {
  const doc = new FakeDocument(`${ORIGIN}/t`, "Targets");
  doc.body.append(
    doc.h("button", { id: "save" }, "Save"),
    doc.h("p", { id: "para" }, "Save the draft before you leave"),
    doc.h("button", { id: "nulla" }, "nulla"),
    doc.h("p", { id: "lorem" }, "Lorem ipsum nulla pariatur"),
    doc.h("button", { id: "spaced" }, "  Send \n  now  "),
    doc.h("button", { id: "hidden", _hidden: true }, "Save"),
  );
  return doc;
}

const target = (doc, t) => op(doc, "getState", { target: t });

test("text is matched whole by default: the button, not the paragraph that contains the word", async () => {
  const doc = page();
  const r = await target(doc, { text: "nulla" });
  assert.equal(r.tag, "button");
  assert.equal(r.target.role, "button");
  assert.equal(r.target.name, "nulla");
  assert.match(r.target.ref, /^@e\d+$/);
  assert.equal((await target(doc, { text: "Save" })).tag, "button", "the hidden button does not count");
  const none = await target(doc, { text: "draft" });
  assert.equal(none.error.code, "element_not_found");
  assert.match(none.error.message, /substring/, "the answer says how to ask for a part");
});

test("substring only when asked; one match is taken, several answer ambiguous with every candidate", async () => {
  const doc = page();
  assert.equal((await target(doc, { text: "draft", match: "substring" })).tag, "p");
  const r = await target(doc, { text: "nulla", match: "substring" });
  assert.equal(r.error.code, "ambiguous");
  assert.match(r.error.message, /^2 elements match text "nulla" \(substring\): @e\d+ button "nulla", @e\d+ p "Lorem ipsum nulla paria…"; pass one of these refs/);
  // the candidates' refs are this document's: they name those very elements
  assert.equal(typeof r.error.refs.docToken, "string");
  const refs = [...r.error.message.matchAll(/@e\d+/g)].map((m) => m[0]);
  assert.equal(refs.length, 2);
  assert.equal((await op(doc, "getState", { target: { ref: refs[0] }, docToken: r.error.refs.docToken })).tag, "button");
  assert.equal((await op(doc, "getState", { target: { ref: refs[1] }, docToken: r.error.refs.docToken })).text, "Lorem ipsum nulla pariatur");
  // index chooses among the matches, in document order
  assert.equal((await target(doc, { text: "nulla", match: "substring", index: 1 })).tag, "p");
  assert.equal((await target(doc, { text: "nulla", match: "substring", index: 0 })).tag, "button");
  assert.equal((await target(doc, { text: "nulla", match: "substring", index: 2 })).error.code, "element_not_found");
});

test("ambiguous acts on nothing: a click on an ambiguous name clicks no element", async () => {
  const doc = page();
  const r = await op(doc, "click", { target: { text: "Save", match: "substring" }, expectKind: "plain" });
  assert.equal(r.error.code, "ambiguous");
  for (const id of ["save", "para", "hidden"]) assert.deepEqual(doc.getElementById(id).events, [], id);
});

test("ignoreCase and whitespace: collapsed on both sides, case only when asked", async () => {
  const doc = page();
  assert.equal((await target(doc, { text: "Send now" })).target.name, "Send now");
  assert.equal((await target(doc, { text: " Send   now " })).tag, "button");
  assert.equal((await target(doc, { text: "send now" })).error.code, "element_not_found");
  assert.equal((await target(doc, { text: "send NOW", ignoreCase: true })).tag, "button");
  assert.equal((await target(doc, { text: "SAVE THE", ignoreCase: true, match: "substring" })).tag, "p");
});

test("a selector or xpath matching several is ambiguous too; index or a narrower one chooses", async () => {
  const doc = page();
  const r = await target(doc, { selector: "button" });
  assert.equal(r.error.code, "ambiguous");
  assert.match(r.error.message, /^4 elements match selector "button": /);
  assert.equal((await target(doc, { selector: "button", index: 2 })).target.name, "Send now");
  assert.equal((await target(doc, { selector: "#save" })).target.name, "Save");
  // (xpath takes the same rule; the fake DOM has no document.evaluate: tests/browser/shared/test_exact_targets.py)
});

test("the candidate list is capped and says how many there are; the message stays short", async () => {
  const doc = new FakeDocument(`${ORIGIN}/many`, "Many");
  for (let i = 0; i < 30; i++) doc.body.append(doc.h("button", {}, `Delete item number ${i} of the very long list of things`));
  const r = await target(doc, { text: "Delete", match: "substring" });
  assert.equal(r.error.code, "ambiguous");
  assert.match(r.error.message, /^30 elements match text "Delete" \(substring\) \(the first \d+\): /);
  assert.ok(r.error.message.length <= 480, r.error.message);
  assert.ok([...r.error.message.matchAll(/@e\d+/g)].length <= 10);
});
