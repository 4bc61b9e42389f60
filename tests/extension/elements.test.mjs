import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import vm from "node:vm";
import { PAGE_OPS } from "../../extension/worker/elements.js";
import { maskCards } from "../../extension/worker/redact.js";
import { FakeDocument, runIn } from "./helpers/fake-dom.mjs";
import { PAGE_FILES, callPageOp } from "./helpers/page-code.mjs";

const URL_A = "http://127.0.0.1:8000/a";
const ORIGIN = "http://127.0.0.1:8000";

/** Run one op in `doc` with the gated origin: its whole answer (with `target`). */
const opWhole = (doc, name, a = {}) => runIn(doc, callPageOp, [name, { origin: ORIGIN, ...a }]);
/** The same, without the `target` an element op adds (locate.test.mjs tests it). */
const op = async (doc, name, a = {}) => {
  const r = await opWhole(doc, name, a);
  if (r === null || typeof r !== "object" || !("target" in r)) return r;
  const { target: _target, ...rest } = r;
  return rest;
};

function loginPage() {
  const doc = new FakeDocument(URL_A, "Login");
  const user = doc.h("input", { id: "user", name: "user", value: "4111 1111 1111 1111" });
  const pw = doc.h("input", { id: "pw", type: "password", value: "hunter2", placeholder: "Password" });
  const form = doc.h("form", { id: "f" }, user, pw, doc.h("button", { id: "go" }, "Sign in"));
  doc.body.append(
    doc.h("h1", {}, "Welcome"),
    form,
    doc.h("a", { id: "away", href: "/b" }, doc.h("span", { id: "inner" }, "Elsewhere")),
    doc.h("a", { id: "hash", href: "#top" }, "Top"),
    doc.h("a", { id: "js", href: "javascript:void 0" }, "JS"),
    doc.h("button", { id: "plain", type: "button" }, "Menu"),
    doc.h("button", { id: "loose" }, "No form"),
    doc.h("input", { id: "secret", type: "hidden", value: "x" }),
    doc.h("button", { id: "gone", _hidden: true }, "Hidden"),
    doc.h("div", { id: "note" }, "Read the  terms carefully"),
  );
  return doc;
}

/** The offsets of a scroll answer (atTop / atBottom depend on the fake page's size). */
const xy = ({ scrollX, scrollY }) => ({ scrollX, scrollY });

test("the in-page card masking agrees with worker/redact.js on samples", async () => {
  const samples = [
    "4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111", "card 5500 0000 0000 0004 exp",
    "4111 1111 1111 1111 12", "1234 5678 9012 3456", "2024-01-31", "$1,299.00", "1234567890123456789012345",
    "378282246310005", "call 555 0100", "0000000000000", "6011\u00a00009\u00a09013\u00a09424", "no digits",
  ];
  const doc = new FakeDocument(URL_A);
  for (const s of samples) doc.body.append(doc.h("button", {}, s));
  const r = await op(doc, "snapshot");
  assert.deepEqual(r.snapshot.map((i) => i.name), samples.map(maskCards));
  assert.ok(r.snapshot.some((i) => i.name.includes("[card]")));
});

test("snapshot: refs for visible interactive elements, open shadow roots, no password value, masked values", async () => {
  const doc = loginPage();
  const host = doc.h("x-widget", { id: "host" });
  host.attachShadow().append(doc.h("button", { id: "deep" }, "Deep"));
  doc.body.append(host, doc.h("div", { role: "tab" }, "Tab one"), doc.h("div", { role: "presentation" }, "skip"));
  const r = await op(doc, "snapshot");
  assert.equal(r.url, URL_A);
  assert.equal(r.title, "Login");
  assert.equal(r.truncated, false);
  assert.match(r.docToken, /^[0-9a-f]{32}$/);
  const byName = Object.fromEntries(r.snapshot.map((i) => [i.name, i]));
  assert.deepEqual(r.snapshot.map((i) => i.ref), r.snapshot.map((_, n) => `@e${n + 1}`));
  assert.deepEqual(byName.Welcome, { ref: "@e1", role: "heading", name: "Welcome", tag: "h1", level: 1 });
  assert.deepEqual(byName.user, { ref: "@e2", role: "textbox", name: "user", tag: "input", value: "[card]" });
  assert.deepEqual(byName.Password, { ref: "@e3", role: "textbox", name: "Password", tag: "input" });
  assert.equal(byName["Sign in"].role, "button");
  assert.equal(byName.Elsewhere.role, "link");
  assert.equal(byName.Deep.tag, "button");
  assert.equal(byName["Tab one"].role, "tab");
  for (const gone of ["Hidden", "skip", "x"]) assert.equal(byName[gone], undefined, gone);
  assert.ok(!JSON.stringify(r).includes("hunter2"));
});

test("snapshot: the doc token stays for the document; a new document gets a new one", async () => {
  const doc = loginPage();
  const a = await op(doc, "snapshot");
  const b = await op(doc, "snapshot");
  assert.equal(a.docToken, b.docToken);
  const c = await op(loginPage(), "snapshot");
  assert.notEqual(c.docToken, a.docToken);
});

test("resolve: refs need the matching token, a live element and the same document", async () => {
  const doc = loginPage();
  const { docToken, snapshot } = await op(doc, "snapshot");
  const signIn = snapshot.find((i) => i.name === "Sign in").ref;
  assert.deepEqual(await op(doc, "getState", { target: { ref: signIn }, docToken }),
    { tag: "button", type: "submit", disabled: false, visible: true, text: "Sign in", box: { x: 10, y: 20, width: 100, height: 20 }, inViewport: true });
  const bad = (r) => r.error && r.error.code === "bad_ref";
  assert.ok(bad(await op(doc, "getState", { target: { ref: signIn }, docToken: "other" })));
  assert.ok(bad(await op(doc, "getState", { target: { ref: signIn } })));
  assert.ok(bad(await op(doc, "getState", { target: { ref: "@e999" }, docToken })));
  // same refs in a fresh document (cross-document navigation): never another element
  const next = loginPage();
  assert.ok(bad(await op(next, "getState", { target: { ref: signIn }, docToken })));
  // an element removed from the page
  doc.getElementById("go").remove();
  assert.ok(bad(await op(doc, "getState", { target: { ref: signIn }, docToken })));
});

test("stable refs: an element keeps its ref across snapshots; a ref never names another element", async () => {
  const doc = new FakeDocument(URL_A, "Account");
  const del = doc.h("button", { id: "del" }, "Delete account");
  const cancel = doc.h("button", { id: "cancel" }, "Cancel");
  doc.body.append(del, cancel);
  const first = await op(doc, "snapshot");
  const refOf = (snap, name) => snap.snapshot.find((i) => i.name === name)?.ref;
  const delRef = refOf(first, "Delete account");
  const cancelRef = refOf(first, "Cancel");
  assert.deepEqual([delRef, cancelRef], ["@e1", "@e2"]);
  const text = async (ref, docToken) => {
    const r = await op(doc, "getState", { target: { ref }, docToken });
    return r.error ? r.error.code : r.text;
  };

  // removed: the old first ref answers bad_ref and "first" is not handed to Cancel
  del.remove();
  const second = await op(doc, "snapshot");
  assert.equal(second.docToken, first.docToken);
  assert.equal(refOf(second, "Cancel"), cancelRef);
  assert.equal(await text(delRef, first.docToken), "bad_ref");
  assert.equal(await text(cancelRef, first.docToken), "Cancel");

  // inserted before everything: a new number, the old ones unchanged
  const keep = doc.h("button", { id: "keep" }, "Keep account");
  doc.body.prepend(keep);
  const third = await op(doc, "snapshot");
  assert.deepEqual(third.snapshot.map((i) => [i.name, i.ref]), [["Keep account", "@e3"], ["Cancel", cancelRef]]);
  assert.equal(await text("@e3", first.docToken), "Keep account");

  // reordered: each ref follows its element
  doc.body.prepend(cancel);
  const fourth = await op(doc, "snapshot");
  assert.deepEqual(fourth.snapshot.map((i) => [i.name, i.ref]), [["Cancel", cancelRef], ["Keep account", "@e3"]]);
  assert.equal(await text(cancelRef, first.docToken), "Cancel");
  assert.equal(await text("@e3", first.docToken), "Keep account");

  // the removed element put back is the same element: its ref still names it (and nothing else)
  doc.body.append(del);
  const fifth = await op(doc, "snapshot");
  assert.equal(refOf(fifth, "Delete account"), delRef);
  assert.equal(await text(delRef, first.docToken), "Delete account");

  assert.equal(fifth.lastRef, 3);

  // a new document (cross-document navigation) numbers after the tab's highest ref, so no ref of
  // the old document names one of its elements, even under the new document's token
  const next = new FakeDocument(URL_A, "Account");
  next.body.append(next.h("button", {}, "Delete account"), next.h("button", {}, "Cancel"));
  const fresh = await runIn(next, callPageOp, ["snapshot", { origin: ORIGIN, refFloor: fifth.lastRef }]);
  assert.notEqual(fresh.docToken, first.docToken);
  assert.deepEqual(fresh.snapshot.map((i) => i.ref), ["@e4", "@e5"]);
  for (const [ref, token] of [[delRef, first.docToken], [delRef, fresh.docToken], [cancelRef, fresh.docToken]]) {
    const stale = await runIn(next, callPageOp, ["getState", { origin: ORIGIN, target: { ref }, docToken: token }]);
    assert.equal(stale.error.code, "bad_ref", `${ref} under ${token === first.docToken ? "the old" : "the new"} token`);
  }
  // a floor is only a hint to a new document: an existing one keeps its numbering, junk is 0
  const again = await op(doc, "snapshot", { refFloor: 500 });
  assert.equal(refOf(again, "Cancel"), cancelRef);
  for (const refFloor of [-5, 1.5, "7", null]) {
    const d = new FakeDocument(URL_A);
    d.body.append(d.h("button", {}, "x"));
    assert.equal((await runIn(d, callPageOp, ["snapshot", { origin: ORIGIN, refFloor }])).snapshot[0].ref, "@e1", String(refFloor));
  }
});

test("stable refs: numbers are never reused, even after the store forgets refs of removed elements", async () => {
  const doc = new FakeDocument(URL_A);
  const rounds = 21; // 21 x 1000 refs: past MAX_LIVE (20 000), so the store prunes
  const seen = new Set();
  let last = [];
  for (let round = 0; round < rounds; round++) {
    for (const b of last) b.remove();
    last = Array.from({ length: 1000 }, (_, n) => doc.h("button", {}, `r${round} b${n}`));
    doc.body.append(...last);
    const snap = await op(doc, "snapshot");
    assert.equal(snap.snapshot.length, 1000);
    for (const item of snap.snapshot) {
      assert.ok(!seen.has(item.ref), `${item.ref} handed out twice`);
      seen.add(item.ref);
    }
  }
  assert.equal(seen.size, rounds * 1000);
  assert.ok(doc.world.map.size <= 20_000, `the store holds ${doc.world.map.size} refs`);
  const state = (ref) => op(doc, "getState", { target: { ref }, docToken: doc.world.doc });
  assert.equal((await state("@e1")).error.code, "bad_ref"); // pruned: still never another element
  assert.equal((await state(`@e${rounds * 1000}`)).text, `r${rounds - 1} b999`);
});

test("resolve: selector (+index, shadow roots), text exact before substring, errors", async () => {
  const doc = loginPage();
  const host = doc.h("x-widget", {});
  host.attachShadow().append(doc.h("button", { id: "deep", class: "b" }, "Deep"));
  doc.body.append(host);
  const state = (target) => op(doc, "getState", { target });
  assert.equal((await state({ selector: "button", index: 1 })).text, "Menu");
  assert.equal((await state({ selector: "button" })).error.code, "ambiguous", "several and no index");
  assert.equal((await state({ selector: "#deep" })).text, "Deep");
  assert.equal((await state({ text: "Sign  in" })).tag, "button");
  assert.equal((await state({ text: "Elsewhere" })).tag, "span"); // innermost
  assert.equal((await state({ text: "the terms" })).error.code, "element_not_found"); // exact unless asked
  assert.equal((await state({ text: "the terms", match: "substring" })).tag, "div");
  assert.equal((await state({ text: "Hidden" })).error.code, "element_not_found"); // invisible
  assert.match((await state({ selector: "button", index: 50 })).error.message, /at index 50 \(\d+ found\)/);
  assert.equal((await state({ selector: "a >>> b" })).error.code, "bad_request");
  assert.equal((await state({ xpath: "//a" })).error.code, "bad_request");
  assert.equal((await state({})).error.code, "bad_request");
});

test("describe classifies clicks: submit, link, plain", async () => {
  const doc = loginPage();
  const kind = async (id) => (await op(doc, "describe", { target: { selector: `#${id}` } })).kind;
  assert.equal(await kind("go"), "submit");
  assert.equal(await kind("away"), "link");
  assert.equal(await kind("inner"), "link"); // a span inside a link
  assert.equal(await kind("hash"), "plain");
  assert.equal(await kind("js"), "plain");
  assert.equal(await kind("plain"), "plain");
  assert.equal(await kind("loose"), "plain"); // <button> with no form and no type
  assert.equal((await op(doc, "describe", { target: { selector: "#go" } })).desc, 'button "Sign in"');
  assert.equal((await op(doc, "describe", { target: { selector: "#user" }, forKey: "Enter" })).kind, "submit");
});

test("describe of a submit says how the form is sent: its method, or the submitter's formmethod", async () => {
  const doc = loginPage();
  assert.equal((await op(doc, "describe", { target: { selector: "#go" } })).fields.method, "get", "no method attribute: GET");
  doc.getElementById("f").setAttribute("method", "POST");
  assert.equal((await op(doc, "describe", { target: { selector: "#go" } })).fields.method, "post");
  assert.equal((await op(doc, "describe", { target: { selector: "#user" }, forKey: "Enter" })).fields.method, "post");
  doc.getElementById("go").setAttribute("formmethod", "get");
  assert.equal((await op(doc, "describe", { target: { selector: "#go" } })).fields.method, "get", "the submitter's formmethod wins");
});

test("describe of a submit names the fields the form will send: names only, never a value", async () => {
  const doc = loginPage();
  const form = doc.getElementById("f");
  doc.getElementById("pw").setAttribute("name", "password");
  form.append(
    doc.h("input", { type: "checkbox", name: "remember" }), // unchecked: not sent
    doc.h("input", { type: "checkbox", name: "terms", checked: "" }),
    doc.h("input", { type: "hidden", name: "csrf", value: "tok-s3cret" }),
    doc.h("input", { name: "off", disabled: "", value: "x" }),
    doc.h("input", { name: "4111 1111 1111 1111" }),
    doc.h("textarea", { name: "note" }),
  );
  const d = await op(doc, "describe", { target: { selector: "#go" } });
  assert.deepEqual(d.fields, { names: ["user", "password (password)", "terms", "csrf", "[card]", "note"], more: 0, method: "get" });
  const text = JSON.stringify(d);
  for (const secret of ["hunter2", "tok-s3cret", "4111"]) assert.ok(!text.includes(secret), secret);
  assert.deepEqual((await op(doc, "describe", { target: { selector: "#user" }, forKey: "Enter" })).fields.names[0], "user");
  assert.equal((await op(doc, "describe", { target: { selector: "#away" } })).fields, undefined, "a link sends no form");
  // Bounded: twenty names, the rest counted.
  for (let i = 0; i < 30; i += 1) form.append(doc.h("input", { name: `f${i}` }));
  const many = (await op(doc, "describe", { target: { selector: "#go" } })).fields;
  assert.equal(many.names.length, 20);
  assert.equal(many.more, 16);
});

/** page_click's page side: arm at the element's point, a trusted click there (CDP input), then clickResult. */
async function armedClick(doc, selector, expectKind, { click = true } = {}) {
  const at = await op(doc, "point", { target: { selector }, armClick: { expectKind } });
  if (at.error || at.covered) return { at };
  if (click) doc.clickAt(at.x, at.y);
  return { at, r: await op(doc, "clickResult") };
}

test("click: armed at the element's point, the trusted click runs its activation; a changed kind arms nothing", async () => {
  const doc = loginPage();
  const { at, r } = await armedClick(doc, "#go", "submit");
  assert.equal(at.covered, false);
  assert.deepEqual(r, { armed: true, clicked: true, url: URL_A, navigation: { sameDocument: false, url: URL_A } });
  assert.deepEqual(doc.log.filter((l) => l[0] === "submit"), [["submit", "f"]]);
  const changed = await op(doc, "point", { target: { selector: "#away" }, armClick: { expectKind: "plain" } });
  assert.equal(changed.error.code, "policy_denied");
  assert.deepEqual(await op(doc, "clickResult"), { armed: false, url: URL_A }, "nothing was armed");
  assert.ok(!doc.log.some((l) => l[0] === "navigate"));
  assert.equal((await op(doc, "point", { target: { selector: "#go" }, armClick: { expectKind: "submit" } })).covered, false);
  assert.deepEqual(await op(doc, "clickResult", { cancel: true }), { armed: false, url: URL_A }, "cancel forgets the arm");
});

test("click: says which navigation it started from the navigate event: none, same-document, cross-document, cancelled", async () => {
  const doc = loginPage();
  const nav = async (selector, kind) => (await armedClick(doc, selector, kind)).r.navigation;
  assert.equal(await nav("#plain", "plain"), null);
  assert.equal(await nav("#js", "plain"), null);
  assert.deepEqual(await nav("#hash", "plain"), { sameDocument: true, url: `${URL_A}#top` });
  assert.deepEqual(await nav("#away", "link"), { sameDocument: false, url: "http://127.0.0.1:8000/b" });
  // The page cancels the navigation (its own navigate listener): nothing started.
  doc.navigation.addEventListener("navigate", (e) => e.preventDefault());
  assert.equal(await nav("#away", "link"), null);
});

test("click: a covered element arms nothing; a click the page slides something under is stopped there and named", async () => {
  const doc = loginPage();
  const banner = doc.h("div", { id: "banner" }, "Cookie banner");
  doc.body.append(banner);
  doc.cover = banner;
  const { at, r } = await armedClick(doc, "#away", "link");
  assert.equal(at.covered, true);
  assert.match(at.hitTarget, /Cookie banner/);
  assert.equal(r, undefined);
  assert.deepEqual(await op(doc, "clickResult"), { armed: false, url: URL_A });
  // Free at the check, covered when the click comes: stopped before the page's listeners, nothing activated.
  doc.cover = null;
  let bannerClicks = 0;
  banner.addEventListener("click", () => { bannerClicks += 1; });
  const armed = await op(doc, "point", { target: { selector: "#away" }, armClick: { expectKind: "link" } });
  assert.equal(armed.covered, false);
  doc.cover = banner;
  doc.clickAt(armed.x, armed.y);
  const after = await op(doc, "clickResult");
  assert.equal(after.clicked, false);
  assert.match(after.elsewhere, /Cookie banner/);
  assert.equal(after.navigation, null);
  assert.equal(bannerClicks, 0);
  assert.ok(!doc.log.some((l) => l[0] === "navigate"));
});

test("fill: sets the value with input/change; refuses password (resolved node or focused node)", async () => {
  const doc = loginPage();
  doc.body.append(doc.h("textarea", { id: "ta" }));
  assert.deepEqual(await op(doc, "fill", { target: { selector: "#ta" }, value: "hi" }), { filled: true });
  assert.equal(doc.getElementById("ta").value, "hi");
  assert.deepEqual(doc.getElementById("ta").events, ["input", "change"]);
  const r = await op(doc, "fill", { target: { selector: "#pw" }, value: "x" });
  assert.equal(r.error.code, "policy_denied");
  assert.match(r.error.message, /password/);
  assert.equal(doc.getElementById("pw").value, "hunter2");
  // a text field whose focus lands on a password input inside a shadow root
  const host = doc.h("x-login", {});
  const inner = doc.h("input", { type: "password" });
  host.attachShadow().append(inner);
  const decoy = doc.h("input", { id: "decoy" });
  decoy.focus = () => doc.setFocus(inner);
  doc.body.append(host, decoy);
  assert.equal((await op(doc, "fill", { target: { selector: "#decoy" }, value: "x" })).error.code, "policy_denied");
  assert.equal(decoy.value, "");
  assert.deepEqual(await op(doc, "fill", { target: { selector: "#pw" }, value: "ok", allowPassword: true }), { filled: true });
  assert.equal((await op(doc, "fill", { target: { selector: "#go" }, value: "x" })).error.code, "bad_request");
});

test("press: Enter in a form field submits via its submit button; characters into a password are refused", async () => {
  const doc = loginPage();
  assert.deepEqual(await op(doc, "press", { target: { selector: "#user" }, key: "Enter", expectKind: "submit" }), { pressed: true });
  assert.deepEqual(doc.log.filter((l) => l[0] === "submit"), [["submit", "f"]]);
  assert.deepEqual(doc.getElementById("user").events.slice(0, 2), ["keydown", "keypress"]);
  assert.equal((await op(doc, "press", { target: { selector: "#user" }, key: "Enter", expectKind: "plain" })).error.code, "policy_denied");
  assert.equal((await op(doc, "press", { target: { selector: "#pw" }, key: "a" })).error.code, "policy_denied");
  doc.getElementById("pw").focus();
  assert.equal((await op(doc, "press", { key: "b" })).error.code, "policy_denied");
  assert.equal(doc.getElementById("pw").value, "hunter2");
  assert.deepEqual(await op(doc, "press", { key: "Escape" }), { pressed: true });
});

test("select, check, scroll, getState", async () => {
  const doc = loginPage();
  const sel = doc.h("select", { id: "s" }, doc.h("option", { value: "a" }, "Apple"), doc.h("option", { value: "b" }, "Banana"));
  const box = doc.h("input", { id: "c", type: "checkbox" });
  const radio = doc.h("input", { id: "r", type: "radio", checked: "" });
  doc.body.append(sel, box, radio);
  assert.deepEqual(await op(doc, "select", { target: { selector: "#s" }, value: "Banana" }), { selected: ["b"], labels: ["Banana"] });
  assert.equal((await op(doc, "select", { target: { selector: "#s" }, value: "zz" })).error.code, "element_not_found");
  assert.equal((await op(doc, "select", { target: { selector: "#s" }, value: ["a", "b"] })).error.code, "bad_request");
  assert.deepEqual(await op(doc, "check", { target: { selector: "#c" }, checked: true }), { checked: true });
  assert.deepEqual(await op(doc, "check", { target: { selector: "#c" }, checked: true }), { checked: true });
  assert.deepEqual(await op(doc, "check", { target: { selector: "#c" }, checked: false }), { checked: false });
  assert.equal((await op(doc, "check", { target: { selector: "#r" }, checked: false })).error.code, "bad_request");
  assert.deepEqual(xy(await op(doc, "scroll", { to: { x: 0, y: 300 } })), { scrollX: 0, scrollY: 300 });
  assert.deepEqual(xy(await op(doc, "scroll", { to: "top" })), { scrollX: 0, scrollY: 0 });
  assert.deepEqual(await op(doc, "getState", { target: { selector: "#pw" } }),
    { tag: "input", type: "password", disabled: false, visible: true, text: "", box: { x: 10, y: 20, width: 100, height: 20 }, inViewport: true });
  assert.deepEqual(await op(doc, "getState", { target: { selector: "#c" } }),
    { tag: "input", type: "checkbox", checked: false, disabled: false, visible: true, text: "", box: { x: 10, y: 20, width: 100, height: 20 }, inViewport: true });
  assert.equal((await op(doc, "getState", { target: { selector: "#s" } })).value, "b");
});

test("waitFor polls until visible / absent or the timeout", async () => {
  const doc = loginPage();
  assert.deepEqual(await op(doc, "waitFor", { selector: "#go", state: "visible", timeoutMs: 0 }), { matched: true });
  assert.deepEqual(await op(doc, "waitFor", { text: "Hidden", state: "absent", timeoutMs: 0 }), { matched: true });
  const late = doc.h("p", { id: "late" }, "Done");
  setTimeout(() => doc.body.append(late), 30);
  assert.deepEqual(await op(doc, "waitFor", { selector: "#late", state: "visible", timeoutMs: 2000 }), { matched: true });
  assert.deepEqual(await op(doc, "waitFor", { selector: "#nope", state: "visible", timeoutMs: 150 }), { matched: false });
});

test("every op refuses a document of another origin than the gated one", async () => {
  const doc = loginPage();
  for (const name of ["snapshot", "click", "fill", "waitFor"]) {
    const r = await runIn(doc, callPageOp, [name, { origin: "http://evil.test", target: { selector: "#go" }, value: "x" }]);
    assert.equal(r.error.code, "origin_not_approved", name);
  }
  assert.ok(!doc.log.some((l) => l[0] === "submit"));
});

test("callPageOp is self-contained (no free identifiers from the module) and fails closed without the page code", async () => {
  // Rebuild it from its source alone, as chrome.scripting does, and run a trivial op.
  const rebuilt = new Function(`return (${callPageOp.toString()})`)();
  const r = await runIn(new FakeDocument(URL_A), rebuilt, ["getState", { origin: "http://elsewhere.test" }]);
  assert.equal(r.error.code, "origin_not_approved");
  // A navigation between the two injections: the new document's world has no page code.
  const installed = globalThis.tabwardenElements;
  delete globalThis.tabwardenElements;
  try {
    const doc = new FakeDocument(URL_A);
    doc.body.append(doc.h("button", { id: "b" }, "B"));
    const bare = await runIn(doc, rebuilt, ["click", { origin: ORIGIN, target: { selector: "#b" }, expectKind: "plain" }]);
    assert.deepEqual(bare, { notInstalled: true });
    assert.deepEqual(doc.getElementById("b").events, [], "nothing ran");
  } finally {
    globalThis.tabwardenElements = installed;
  }
});

test("the page files run as classic scripts, twice in one world, define only their globals and return nothing", () => {
  const world = vm.createContext({ crypto, Map, WeakRef, Set, Object, String, Number, Math, JSON, Promise, Error, URL });
  const before = new Set(Object.getOwnPropertyNames(world));
  for (const round of [1, 2]) {
    for (const file of PAGE_FILES) {
      const source = readFileSync(new URL(`../../extension/${file}`, import.meta.url), "utf8");
      assert.doesNotMatch(source, /^\s*(import|export)\b/m, `${file} must stay a classic script`);
      // executeScript({files}) hands the script's completion value back: it must be nothing.
      assert.equal(new vm.Script(source, { filename: file }).runInContext(world), undefined, `${file} round ${round}`);
    }
  }
  const added = Object.getOwnPropertyNames(world).filter((n) => !before.has(n)).sort();
  assert.deepEqual(added, ["tabwardenActions", "tabwardenDom", "tabwardenElements", "tabwardenLocate", "tabwardenPick", "tabwardenRedact", "tabwardenSnapshot"]);
  assert.deepEqual([...world.tabwardenElements.PAGE_OPS].sort(), [...PAGE_OPS].sort());
});

test("the worker and the page share one masking rule: page/redact.js", () => {
  assert.equal(maskCards, globalThis.tabwardenRedact.maskCards);
  assert.deepEqual([...globalThis.tabwardenElements.PAGE_OPS].sort(), [...PAGE_OPS].sort());
  // No other file in extension/ carries a Luhn check of its own.
  const root = new URL("../../extension/", import.meta.url);
  const holders = [];
  for (const dir of ["", "worker/", "ui/", "shared/", "handlers/", "page/"]) {
    for (const name of readdirSync(new URL(dir, root))) {
      if (!name.endsWith(".js")) continue;
      if (/luhn|charCodeAt\(i\) - 48/i.test(readFileSync(new URL(dir + name, root), "utf8"))) holders.push(dir + name);
    }
  }
  assert.deepEqual(holders.sort(), ["page/redact.js", "worker/redact.js"]);
});

test("select by value, label or optionIndex; several for <select multiple>; wrong_element for a custom combobox", async () => {
  const doc = loginPage();
  const sel = doc.h("select", { id: "s" }, doc.h("option", { value: "a" }, "Apple"), doc.h("option", { value: "b" }, "Banana"));
  const many = doc.h("select", { id: "m", multiple: "" }, doc.h("option", { value: "r" }, "Red"), doc.h("option", { value: "g" }, "Green"),
    doc.h("option", { value: "u" }, "Blue"));
  const combo = doc.h("div", { id: "combo", role: "combobox" }, "Pick");
  doc.body.append(sel, many, combo);
  const at = (selector, a) => op(doc, "select", { target: { selector }, ...a });
  assert.deepEqual(await at("#s", { label: "Banana" }), { selected: ["b"], labels: ["Banana"] });
  assert.equal((await at("#s", { label: "b" })).error.code, "element_not_found", "label matches labels only");
  assert.deepEqual(await at("#s", { optionIndex: 0 }), { selected: ["a"], labels: ["Apple"] });
  assert.equal((await at("#s", { optionIndex: 5 })).error.code, "element_not_found");
  assert.deepEqual(await at("#m", { value: ["g", "Blue"] }), { selected: ["g", "u"], labels: ["Green", "Blue"] });
  const wrong = await at("#combo", { value: "Red" });
  assert.equal(wrong.error.code, "wrong_element");
  assert.match(wrong.error.message, /custom combobox/);
  assert.equal((await at("#user", { value: "x" })).error.code, "wrong_element");
  // described as something else, so nobody was asked: a <select> found now is refused, untouched
  assert.equal((await at("#s", { value: "a", unasked: true })).error.code, "policy_denied");
  assert.equal(sel.value, "a");
});

test("clear empties a text field under fill's password rule; not a field is wrong_element", async () => {
  const doc = loginPage();
  assert.deepEqual(await op(doc, "clear", { target: { selector: "#user" } }), { cleared: true });
  assert.equal(doc.getElementById("user").value, "");
  assert.equal((await op(doc, "clear", { target: { selector: "#pw" } })).error.code, "policy_denied");
  assert.equal(doc.getElementById("pw").value, "hunter2");
  assert.deepEqual(await op(doc, "clear", { target: { selector: "#pw" }, allowPassword: true }), { cleared: true });
  assert.equal((await op(doc, "clear", { target: { selector: "#go" } })).error.code, "wrong_element");
});

test("scroll the page by dx / dy", async () => {
  const doc = loginPage();
  assert.deepEqual(xy(await op(doc, "scroll", { to: { x: 10, y: 100 } })), { scrollX: 10, scrollY: 100 });
  assert.deepEqual(xy(await op(doc, "scroll", { dx: 5, dy: 50 })), { scrollX: 5, scrollY: 50 }); // each call starts at 0 here
  const top = await op(doc, "scroll", { to: "top" });
  assert.equal(top.atTop, true);
});
