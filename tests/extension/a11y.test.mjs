import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_FIND, axRows, compose, merge, rankFind, sparse, statesOf } from "../../extension/worker/a11y.js";

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
  assert.deepEqual(merge(a, d, 10), { items: [{ ref: "@e1" }, { ref: "@e2" }, { ref: "@e3", source: "dom" }, { ref: "@e4", source: "dom" }], truncated: false });
  assert.deepEqual(merge(a, d, 3).truncated, true);
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
