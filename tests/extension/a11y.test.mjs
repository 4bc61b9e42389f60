import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_FIND, axRows, compose, joinCuts, merge, pick, rankFind, sparse, statesOf } from "../../extension/worker/a11y.js";

/** An AX node as CDP Accessibility.getFullAXTree answers it. */
const ax = (nodeId, role, { name = "", parent, kids = [], ignored = false, props = {}, backend = Number(nodeId) } = {}) => ({
  nodeId, ignored, role: { type: "role", value: role }, name: { type: "computedString", value: name },
  ...(parent !== undefined ? { parentId: parent } : {}), childIds: kids, backendDOMNodeId: backend,
  properties: Object.entries(props).map(([k, v]) => ({ name: k, value: { type: "x", value: v } })),
});

/** A page as Chrome's tree: heading, a checked checkbox, an aria-hidden button, text runs, a password box. */
function tree() {
  return [
    ax("1", "RootWebArea", { name: "Title", kids: ["2"] }),
    ax("2", "none", { parent: "1", ignored: true, kids: ["3", "4", "5", "8", "9"] }),
    ax("3", "heading", { name: "Head  two", parent: "2", props: { level: 2 }, kids: ["6"] }),
    ax("4", "checkbox", { name: "Agree", parent: "2", props: { checked: "true", focusable: true, disabled: true, invalid: "false" } }),
    ax("5", "none", { parent: "2", ignored: true, kids: ["7"] }),
    ax("6", "StaticText", { name: "Head two", parent: "3" }),
    ax("7", "button", { name: "hidden", parent: "5", ignored: true }),
    ax("8", "textbox", { name: "Password", parent: "2", props: { required: true, readonly: false } }),
    ax("9", "list", { parent: "2", kids: ["10", "11"] }),
    ax("10", "listitem", { parent: "9", kids: ["12"] }),
    ax("11", "listitem", { name: "", parent: "9" }),
    ax("12", "link", { name: "Go", parent: "10" }),
  ];
}

test("axRows: document order, depth, states, level; ignored subtrees, text runs and wrappers left out", () => {
  const { rows, truncated, interactive, scopeFound } = axRows(tree());
  assert.equal(scopeFound, true);
  assert.equal(truncated, false);
  assert.deepEqual(rows.map((r) => [r.role, r.name, r.depth]), [
    ["heading", "Head two", 0], ["checkbox", "Agree", 0], ["textbox", "Password", 0], ["list", "", 0],
    ["listitem", "", 1], ["link", "Go", 2], ["listitem", "", 1],
  ]);
  assert.equal(rows[0].level, 2);
  assert.deepEqual(rows[1].states, { checked: true, disabled: true });
  assert.deepEqual(rows[2].states, { required: true });
  assert.equal(rows[4].needText, true); // a listitem's name is not its content: the page gives its text
  assert.equal(interactive, 3); // checkbox, textbox, link — the hidden button does not count
  assert.ok(!rows.some((r) => r.name === "hidden"));
});

test("axRows: compact lists interactive nodes only; scope; maxNodes bounds and says truncated", () => {
  assert.deepEqual(axRows(tree(), { compact: true }).rows.map((r) => r.role), ["checkbox", "textbox", "link"]);
  const scoped = axRows(tree(), { scope: 9 });
  assert.deepEqual(scoped.rows.map((r) => [r.role, r.depth]), [["list", 0], ["listitem", 1], ["link", 2], ["listitem", 1]]);
  assert.equal(axRows(tree(), { scope: 999 }).scopeFound, false);
  const bounded = axRows(tree(), { maxNodes: 2 });
  assert.equal(bounded.rows.length, 2);
  assert.equal(bounded.truncated, true);
  assert.equal(bounded.interactive, 3); // still counted past the bound, for the sparse check
});

test("axRows: a malformed tree (cycles, junk) neither loops nor throws", () => {
  const loop = [ax("1", "RootWebArea", { kids: ["2"] }), ax("2", "button", { name: "B", parent: "1", kids: ["1", "2"] })];
  assert.deepEqual(axRows(loop).rows.map((r) => r.name), ["B"]);
  assert.deepEqual(axRows(null).rows, []);
  assert.deepEqual(axRows([null, 3, { nodeId: 5 }]).rows, []);
});

test("statesOf: tri-state, booleans, flags only when set", () => {
  const p = (o) => Object.entries(o).map(([name, value]) => ({ name, value: { value } }));
  assert.deepEqual(statesOf(p({ checked: "mixed", pressed: "false", expanded: false, selected: true, focused: true, invalid: "spelling" })),
    { states: { checked: "mixed", pressed: false, expanded: false, selected: true, focused: true, invalid: true } });
  assert.deepEqual(statesOf(p({ disabled: false, required: false, level: 0 })), {});
  assert.deepEqual(statesOf(undefined), {});
});

test("sparse: under half the DOM walk's interactive elements, and the walk found at least 3", () => {
  assert.equal(sparse(1, 10), true);
  assert.equal(sparse(5, 10), false);
  assert.equal(sparse(0, 2), false);
});

test("merge: a11y rows first, then the DOM rows the tree missed, bounded", () => {
  const a = [{ ref: "@e1" }, { ref: "@e2" }];
  const d = [{ ref: "@e2" }, { ref: "@e3" }, { ref: "@e4" }];
  assert.deepEqual(merge(a, d, 10), { items: [{ ref: "@e1" }, { ref: "@e2" }, { ref: "@e3", source: "dom" }, { ref: "@e4", source: "dom" }], truncated: false, cut: null });
  assert.deepEqual(merge(a, d, 3).truncated, true);
  // Bounded, the merge keeps interactive rows before structure, wherever they came from.
  const h = [{ ref: "@e1", role: "heading" }, { ref: "@e2", role: "heading" }];
  const b = [{ ref: "@e3", role: "button" }, { ref: "@e4", role: "link" }];
  const m = merge(h, b, 3);
  assert.deepEqual(m.items.map((i) => i.ref), ["@e1", "@e3", "@e4"]);
  assert.deepEqual({ rows: m.cut?.rows, interactive: m.cut?.interactive }, { rows: 1, interactive: 0 });
});

test("pick: interactive rows before structure, document order kept, every cut said with how to list the rest", () => {
  const rows = ["h", "b", "h", "b", "h", "b", "b"].map((k, i) => ({ i, acts: k === "b" }));
  const acts = (/** @type {{acts: boolean}} */ r) => r.acts;
  assert.deepEqual(pick(rows, acts, 7), { kept: rows, cut: null });
  const five = pick(rows, acts, 5);
  assert.deepEqual(five.kept.map((r) => r.i), [0, 1, 3, 5, 6]); // all four buttons, then the first heading
  assert.deepEqual({ ...five.cut, rest: undefined }, { rows: 2, interactive: 0, rest: undefined });
  assert.match(five.cut?.rest ?? "", /every interactive element is listed; 2 other rows .*maxNodes/);
  const two = pick(rows, acts, 2);
  assert.deepEqual(two.kept.map((r) => r.i), [1, 3]);
  assert.equal(two.cut?.rows, 5);
  assert.equal(two.cut?.interactive, 2);
  assert.equal(two.cut?.skip, 5); // the first button left out
  assert.match(two.cut?.rest ?? "", /2 interactive elements were left out .*skip: 5/);
  // Paging on with skip lists the buttons left out: none is lost.
  const next = pick(rows, acts, 2, two.cut?.skip);
  assert.deepEqual(next.kept.map((r) => r.i), [5, 6]);
  assert.equal(next.cut, null);
  assert.deepEqual(joinCuts(null, two.cut), two.cut);
  assert.deepEqual(joinCuts(five.cut, two.cut), { ...two.cut, rows: 7, interactive: 2 });
});

test("axRows: over maxNodes, every interactive node is listed before structure; text rows only with text", () => {
  const kids = Array.from({ length: 30 }, (_, i) => String(i + 2));
  const nodes = [ax("1", "RootWebArea", { kids }), ...kids.map((id, i) => (i % 3 === 0
    ? ax(id, "button", { name: `b${id}`, parent: "1" })
    : ax(id, "heading", { name: `h${id}`, parent: "1", props: { level: 2 } })))];
  const r = axRows(nodes, { maxNodes: 12 });
  assert.equal(r.rows.filter((x) => x.role === "button").length, 10); // all ten, though 20 headings come first in order
  assert.equal(r.rows.length, 12);
  assert.deepEqual({ rows: r.cut?.rows, interactive: r.cut?.interactive, truncated: r.truncated }, { rows: 18, interactive: 0, truncated: true });
  // Text: the runs no listed ancestor's name already says, as rows without an element.
  const page = [
    ax("1", "RootWebArea", { kids: ["2", "4"] }),
    ax("2", "paragraph", { parent: "1", kids: ["3", "5"] }),
    ax("3", "StaticText", { name: " Hello   world ", parent: "2" }),
    ax("5", "link", { name: "more", parent: "2", kids: ["6"] }),
    ax("6", "StaticText", { name: "more", parent: "5" }),
    ax("4", "StaticText", { name: "", parent: "1" }),
  ];
  assert.deepEqual(axRows(page).rows.map((x) => x.role), ["link"]);
  assert.deepEqual(axRows(page, { text: true }).rows.map((x) => [x.role, x.name, x.backendId === null]), [["text", "Hello world", true], ["link", "more", false]]);
  assert.deepEqual(axRows(page, { text: true, compact: true }).rows.map((x) => x.role), ["link"]);
  const composed = compose(axRows(page, { text: true }).rows, [null, { ref: "@e1", tag: "a" }], { mask: (s) => s.replace("world", "[w]"), maxName: 200 });
  assert.deepEqual(composed[0], { role: "text", name: "Hello [w]", depth: 0 });
  assert.equal(composed[1].ref, "@e1");
});

test("compose: names masked and capped, page text for TEXT_ROLES, undescribable rows dropped, no AX value", () => {
  const rows = axRows(tree()).rows;
  const described = rows.map((r, i) => (r.role === "list" ? null : { ref: `@e${i + 1}`, tag: "x", visible: true, inViewport: i < 2, text: "4111 1111 1111 1111" }));
  const out = compose(rows, described, { mask: (s) => s.replace(/4111[ 0-9]+/, "[card]"), maxName: 7 });
  assert.equal(out.length, rows.length - 1);
  assert.equal(out[0].name, "Head t…");
  assert.equal(out.find((i) => i.role === "listitem").name, "[card]");
  assert.ok(out.every((i) => !("value" in i)));
});

test("rankFind: exact, then prefix, then substring; visible first; limit; role filter", () => {
  const rows = [
    { ref: "@e1", role: "button", name: "Save draft", visible: true, inViewport: true },
    { ref: "@e2", role: "button", name: "Autosave", visible: true, inViewport: true },
    { ref: "@e3", role: "button", name: "save", visible: false },
    { ref: "@e4", role: "link", name: "Save", visible: true, inViewport: true },
    { ref: "@e5", role: "button", name: "Save", visible: true, inViewport: false },
    { ref: "@e6", role: "button", name: "Save", visible: true, inViewport: true },
  ];
  const refs = (r) => r.matches.map((m) => m.ref);
  assert.deepEqual(refs(rankFind(rows, { role: "button", name: "save" })), ["@e6", "@e5", "@e3", "@e1", "@e2"]);
  assert.deepEqual(refs(rankFind(rows, { role: "BUTTON", name: "save", exact: true })), ["@e6", "@e5", "@e3"]);
  assert.deepEqual(refs(rankFind(rows, { name: "Save", limit: 2 })), ["@e4", "@e6"]);
  assert.equal(rankFind(rows, { name: "Save", limit: 2 }).total, 6);
  assert.deepEqual(refs(rankFind(rows, { role: "link" })), ["@e4"]);
  assert.equal(MAX_FIND, 50);
});

test("axRows: DPUB-ARIA link subroles (footnote refs, back links) are interactive: a cut keeps them and says so truly", () => {
  const subroles = ["doc-noteref", "doc-backlink", "doc-biblioref", "doc-glossref"];
  const kids = Array.from({ length: 24 }, (_, i) => String(i + 2));
  const nodes = [ax("1", "RootWebArea", { kids }), ...kids.map((id, i) => (i % 6 < subroles.length
    ? ax(id, subroles[i % 6], { name: `[${id}]`, parent: "1" })
    : ax(id, "heading", { name: `h${id}`, parent: "1", props: { level: 2 } })))];
  const r = axRows(nodes, { maxNodes: 16 });
  assert.deepEqual(r.rows.filter((x) => subroles.includes(x.role)).length, 16); // every footnote link, before any heading
  assert.equal(r.cut?.interactive, 0);
  assert.match(r.cut?.rest ?? "", /every interactive element is listed; 8 other rows/);
  assert.deepEqual(axRows(nodes, { compact: true }).rows.map((x) => x.role), Array.from({ length: 4 }, () => subroles).flat());
});
