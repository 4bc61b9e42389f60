// a11y.js — page_snapshot's accessibility mode and page_find, as pure functions: Chrome's
// accessibility tree (CDP Accessibility.getFullAXTree nodes) -> the rows a snapshot lists (role
// and name as Chrome computed them, heading level, states, depth), the rule that says when that
// tree is too sparse to trust alone (then the DOM walk's rows are merged in), the merge, and
// page_find's ranking. Pure: no chrome, no DOM, no CDP calls (handlers/interact.js makes those
// and maps each row's backendDOMNodeId to its element and stable ref in the page's isolated world:
// docs/platform-facts-a11y.md). It must never emit an ignored node (aria-hidden, display:none,
// inert, …), never list more than `maxNodes` rows (it says `truncated`), and never take a value
// from the tree (a password field's AX value is its bullets, one per character: the page side's
// shownValue is the only value shown).

import "../page/pick.js";

/** @param {unknown} v @returns {v is Record<string, any>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * What a snapshot answers beside its rows when it has nothing to reference: the page half's
 * document text (page/snapshot.js: `text`, `note`, and `textShortened` when capped), kept only
 * when the rows the answer lists are headings at most (the accessibility tree may list what
 * the DOM walk did not); otherwise nothing.
 * @param {Record<string, unknown>} page the page half's answer
 * @param {Array<Record<string, unknown>>} rows the rows the answer lists
 * @returns {Record<string, unknown>}
 */
export function documentText(page, rows) {
  if (typeof page.text !== "string" || !rows.every((r) => r.role === "heading")) return {};
  const shortened = isObject(page.shortened) && isObject(page.shortened.text) ? { shortened: { text: page.shortened.text } } : {};
  return { text: page.text, note: String(page.note ?? ""), ...shortened };
}

/** Roles that are noise in a snapshot: text runs (their text is their parent's name), wrappers. */
export const NOISE_ROLES = new Set([
  "none", "presentation", "generic", "StaticText", "InlineTextBox", "LineBreak", "ListMarker",
  "RootWebArea", "WebArea", "Ignored", "IgnoredRole", "LabelText", "paragraph", "Abbr", "Unknown",
]);
/** Roles a person acts on: compact mode lists only these (plus nothing else). */
export const INTERACTIVE_ROLES = new Set([
  "button", "link", "textbox", "searchbox", "checkbox", "radio", "switch", "combobox", "listbox",
  "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "slider", "spinbutton",
  "treeitem", "DisclosureTriangle", "PopUpButton", "MenuListPopup", "MenuListOption", "scrollbar",
  // DPUB-ARIA's link subroles (footnote and bibliography references, their back links):
  // links, which Chrome's tree names by their subrole.
  "doc-noteref", "doc-backlink", "doc-biblioref", "doc-glossref",
]);
/** Roles whose accessible name does not come from their content: the page side gives their text. */
export const TEXT_ROLES = new Set(["listitem", "row", "cell", "gridcell", "article", "blockquote", "caption", "term", "definition"]);
/** States copied from AX properties: tri-state ones keep "mixed"; flags only when true. */
const TRISTATE = ["checked", "pressed"];
const BOOLEAN = ["expanded", "selected"];
const FLAGS = ["disabled", "required", "focused", "readonly", "modal", "multiselectable", "busy"];
/** Most rows a snapshot may list (page/pick.js), and the default. */
export const MAX_NODES = globalThis.tabwardenPick.MAX_NODES;
export const DEFAULT_NODES = 1000;
/** Most matches page_find answers with, and the default. */
export const MAX_FIND = 50;
export const DEFAULT_FIND = 10;

/**
 * @typedef {{value?: unknown}} AXValue
 * @typedef {{nodeId: string, ignored?: boolean, role?: AXValue, name?: AXValue, parentId?: string,
 *   childIds?: string[], backendDOMNodeId?: number, properties?: Array<{name: string, value?: AXValue}>}} AXNode
 * @typedef {{backendId: number | null, role: string, name: string, depth: number, level?: number,
 *   states?: Record<string, boolean | string>, needText: boolean}} AXRow
 */

/** @param {unknown} s */
const collapse = (s) => (typeof s === "string" ? s.replace(/\s+/g, " ").trim() : "");

/** Whether `role` is one a person acts on. @param {string} role */
export const isInteractive = (role) => INTERACTIVE_ROLES.has(role);

/**
 * The states and heading level in a node's AX properties.
 * @param {AXNode["properties"]} props
 * @returns {{level?: number, states?: Record<string, boolean | string>}}
 */
export function statesOf(props) {
  /** @type {Record<string, boolean | string>} */
  const states = {};
  /** @type {number | undefined} */
  let level;
  for (const p of Array.isArray(props) ? props : []) {
    const v = p?.value?.value;
    if (p.name === "level" && Number.isInteger(v) && /** @type {number} */ (v) > 0) level = /** @type {number} */ (v);
    else if (TRISTATE.includes(p.name)) {
      if (v === "mixed") states[p.name] = "mixed";
      else if (v === "true" || v === true) states[p.name] = true;
      else if (v === "false" || v === false) states[p.name] = false;
    } else if (BOOLEAN.includes(p.name) && typeof v === "boolean") states[p.name] = v;
    else if (FLAGS.includes(p.name) && v === true) states[p.name] = true;
    else if (p.name === "invalid" && typeof v === "string" && v !== "false") states.invalid = true;
  }
  return { ...(level !== undefined ? { level } : {}), ...(Object.keys(states).length > 0 ? { states } : {}) };
}

/**
 * What a snapshot left out when it could not list every row (page/pick.js).
 * @typedef {{rows: number, interactive: number, skip?: number, rest: string}} Cut
 */

/**
 * Which of the rows a snapshot lists when it may list `max`: interactive rows first, never a
 * silent cut. The one copy of this rule is page/pick.js, which the page's DOM walk uses too.
 * @type {<R>(rows: R[], acts: (row: R) => boolean, max: number, skip?: number) => {kept: R[], cut: Cut | null}}
 */
export const pick = globalThis.tabwardenPick.pick;

/**
 * The rows of the tree under `scope` (a backendDOMNodeId; the root when absent), in document
 * order: unignored nodes of a meaningful role with a DOM node, compact = interactive only, at
 * most maxNodes chosen by `pick` (interactive rows first; `cut` and `truncated` say what was
 * left out) from row `skip` on. `interactive` counts every interactive row of the scope,
 * listed or not (the sparse check compares it with the DOM walk); `scopeFound` is false when the
 * scope's node is not in the tree (hidden, or not rendered). With `text`, each run of text
 * (StaticText) is a row too: role "text", its text as name, no element (`backendId` null).
 * @param {unknown} nodes
 * @param {{compact?: boolean, scope?: number | null, maxNodes?: number, skip?: number, text?: boolean}} [opts]
 * @returns {{rows: AXRow[], truncated: boolean, cut: Cut | null, interactive: number, scopeFound: boolean}}
 */
export function axRows(nodes, { compact = false, scope = null, maxNodes = DEFAULT_NODES, skip = 0, text = false } = {}) {
  const list = /** @type {AXNode[]} */ (Array.isArray(nodes) ? nodes.filter((n) => n && typeof n.nodeId === "string") : []);
  /** @type {Map<string, AXNode>} */
  const byId = new Map(list.map((n) => [n.nodeId, n]));
  /** @type {AXNode | undefined} */
  let start;
  if (scope !== null && scope !== undefined) start = list.find((n) => n.backendDOMNodeId === scope);
  else start = list.find((n) => n.parentId === undefined || !byId.has(n.parentId)) ?? list[0];
  /** @type {AXRow[]} */
  const all = [];
  let interactive = 0;
  if (start === undefined) return { rows: [], truncated: false, cut: null, interactive, scopeFound: false };
  // Each entry: the node, its depth, and whether a listed ancestor's name already says its text
  // (a link's or a heading's text runs are its name: not repeated as text rows).
  /** @type {Array<[AXNode, number, boolean]>} */
  const stack = [[start, 0, false]];
  const seen = new Set();
  while (stack.length > 0) {
    const [node, depth, said] = /** @type {[AXNode, number, boolean]} */ (stack.pop());
    if (seen.has(node.nodeId)) continue; // a malformed tree must not loop
    seen.add(node.nodeId);
    const role = typeof node.role?.value === "string" ? node.role.value : "";
    const listed = node.ignored !== true && role !== "" && !NOISE_ROLES.has(role) && Number.isInteger(node.backendDOMNodeId);
    let childDepth = depth;
    let childSaid = said;
    if (listed) {
      const acts = isInteractive(role);
      if (acts) interactive += 1;
      if (!compact || acts) {
        const name = collapse(node.name?.value);
        all.push({
          backendId: /** @type {number} */ (node.backendDOMNodeId), role, name, depth, ...statesOf(node.properties),
          needText: name === "" && TEXT_ROLES.has(role),
        });
        childDepth = depth + 1;
        childSaid = said || name !== "" || TEXT_ROLES.has(role);
      }
    } else if (text && !compact && !said && role === "StaticText" && node.ignored !== true) {
      const words = collapse(node.name?.value);
      if (words !== "") all.push({ backendId: null, role: "text", name: words, depth, needText: false });
    }
    const kids = Array.isArray(node.childIds) ? node.childIds : [];
    for (let i = kids.length - 1; i >= 0; i--) {
      const kid = byId.get(kids[i]);
      if (kid !== undefined) stack.push([kid, childDepth, childSaid]);
    }
  }
  const { kept, cut } = pick(all, (row) => isInteractive(row.role), maxNodes, skip);
  return { rows: kept, truncated: cut !== null, cut, interactive, scopeFound: true };
}

/**
 * The accessibility tree is sparse — far fewer interactive nodes than the DOM walk finds (a
 * canvas app, role-less custom widgets, an unfinished tree) — when it has under half of the
 * DOM walk's interactive elements, and the walk found at least 3. Then the snapshot merges.
 * @param {number} axInteractive
 * @param {number} domInteractive
 */
export function sparse(axInteractive, domInteractive) {
  return domInteractive >= 3 && axInteractive * 2 < domInteractive;
}

/**
 * The a11y rows, then the DOM walk's rows whose ref the tree did not list (marked source
 * "dom"), at most maxNodes in all, chosen by `pick` (interactive rows first; `cut` says what
 * was left out).
 * @param {Array<Record<string, unknown>>} axItems
 * @param {Array<Record<string, unknown>>} domItems
 * @param {number} maxNodes
 * @returns {{items: Array<Record<string, unknown>>, truncated: boolean, cut: Cut | null}}
 */
export function merge(axItems, domItems, maxNodes) {
  const have = new Set(axItems.map((i) => i.ref));
  /** @type {Array<Record<string, unknown>>} */
  const all = [...axItems, ...domItems.filter((d) => !have.has(d.ref)).map((d) => ({ ...d, source: "dom" }))];
  const { kept, cut } = pick(all, (i) => typeof i.role === "string" && isInteractive(i.role), maxNodes);
  return { items: kept, truncated: cut !== null, cut };
}

/**
 * Two cuts as one (the tree's own and the merge's): the rows and interactive rows of both; the
 * first one's `skip` and `rest` when it left interactive rows out, else the second's.
 * @param {Cut | null} a
 * @param {Cut | null} b
 * @returns {Cut | null}
 */
export function joinCuts(a, b) {
  if (a === null || b === null) return a ?? b;
  const lead = a.interactive > 0 ? a : b;
  return { ...lead, rows: a.rows + b.rows, interactive: a.interactive + b.interactive };
}

/**
 * page_find's answer: rows whose role is `role` (any case) and whose name matches `name` (any
 * case, whitespace collapsed) — exact names first, then prefixes, then substrings (`exact`: only
 * exact), visible on screen before visible off screen before the rest, then document order.
 * @template {{ref: string, role: string, name: string, visible?: boolean, inViewport?: boolean}} R
 * @param {R[]} rows
 * @param {{role?: string | null, name?: string | null, exact?: boolean, limit?: number}} q
 * @returns {{matches: R[], total: number}}
 */
export function rankFind(rows, { role = null, name = null, exact = false, limit = DEFAULT_FIND }) {
  const wantRole = typeof role === "string" && role !== "" ? role.toLowerCase() : null;
  const wantName = typeof name === "string" && collapse(name) !== "" ? collapse(name).toLowerCase() : null;
  /** @type {Array<[number, number, number, R]>} */
  const hits = [];
  rows.forEach((row, index) => {
    if (wantRole !== null && String(row.role).toLowerCase() !== wantRole) return;
    let kind = 0;
    if (wantName !== null) {
      const have = collapse(row.name).toLowerCase();
      kind = have === wantName ? 0 : exact ? -1 : have.startsWith(wantName) ? 1 : have.includes(wantName) ? 2 : -1;
      if (kind < 0) return;
    }
    const seen = row.visible === true && row.inViewport === true ? 0 : row.visible === true ? 1 : 2;
    hits.push([kind, seen, index, row]);
  });
  hits.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  return { matches: hits.slice(0, limit).map((h) => h[3]), total: hits.length };
}

/**
 * The snapshot rows of the tree's rows that the page side could describe: `described[i]` is
 * the page's {ref, tag, value?, text?, visible, inViewport} for `rows[i]`, or null (not an
 * element a ref may name). Names (Chrome's, else the page's text for TEXT_ROLES) pass `mask`
 * and are capped at `maxName`; `visible` and `inViewport` stay for page_find (the snapshot
 * drops them).
 * @param {AXRow[]} rows
 * @param {unknown[]} described
 * @param {{mask: (s: string) => string, maxName: number}} opts
 * @returns {Array<Record<string, unknown>>}
 */
export function compose(rows, described, { mask, maxName }) {
  /** @type {Array<Record<string, unknown>>} */
  const out = [];
  const cap = (/** @type {string} */ s) => (s.length > maxName ? `${s.slice(0, maxName - 1)}…` : s);
  rows.forEach((row, i) => {
    if (row.backendId === null) { // a run of text (axRows `text`): no element, no ref
      const words = mask(row.name);
      /** @type {Record<string, unknown>} */
      const item = { role: "text", name: cap(words), depth: row.depth };
      if (words.length > maxName) item.shortened = { name: { chars: words.length, readWith: "page_text" } };
      out.push(item);
      return;
    }
    const d = /** @type {Record<string, unknown> | null | undefined} */ (described[i]);
    if (d === null || d === undefined || typeof d !== "object" || typeof d.ref !== "string") return;
    const fromText = row.name === "" && typeof d.text === "string";
    const name = mask(row.name !== "" ? row.name : fromText ? collapse(/** @type {string} */ (d.text)) : "");
    /** @type {Record<string, unknown>} */
    const item = { ref: d.ref, role: row.role, name: cap(name), tag: String(d.tag ?? "") };
    /** @type {Record<string, {chars: number, readWith: string}>} */
    const shortened = {};
    const given = isObject(d.shortened) ? d.shortened : {};
    // A name the page half shortened (the element's text) keeps its full length from there.
    if (fromText && isObject(given.text)) shortened.name = { chars: Number(given.text.chars), readWith: "page_text" };
    else if (name.length > maxName) shortened.name = { chars: name.length, readWith: "page_text" };
    if (typeof d.value === "string") item.value = d.value;
    if (typeof d.value === "string" && isObject(given.value)) shortened.value = { chars: Number(given.value.chars), readWith: "page_get_state" };
    if (typeof d.href === "string") item.href = d.href;
    if (Object.keys(shortened).length > 0) item.shortened = shortened;
    if (row.level !== undefined) item.level = row.level;
    if (row.states !== undefined) item.states = row.states;
    item.depth = row.depth;
    item.visible = d.visible === true;
    item.inViewport = d.inViewport === true;
    out.push(item);
  });
  return out;
}
