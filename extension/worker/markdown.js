// markdown.js — page_markdown's two halves: readPageBlocks, the function executeScript runs in
// the page (isolated world) to collect the visible structure as plain blocks, and the pure
// helpers that render those blocks as Markdown in the service worker. readPageBlocks is
// serialised into the page, so it must never reference anything outside its own body, never
// read form field values (inputs, textareas and selects are skipped whole, so password fields
// stay out) and never change the page. Card masking and paging happen after rendering.

/**
 * @typedef {{text: string, href?: string}} Segment
 * @typedef {{type: "h", level: number, inline: Segment[]}
 *   | {type: "p", inline: Segment[]}
 *   | {type: "li", depth: number, ordered: boolean, n: number, inline: Segment[]}
 *   | {type: "pre", text: string}
 *   | {type: "hr"}} Block
 */

/**
 * Runs in the page. Walks the body's visible elements and returns blocks plus the document URL
 * they came from (the caller checks the page did not navigate to another origin meanwhile).
 * @returns {{blocks: Block[], href: string, origin: string, truncated: boolean}}
 */
export function readPageBlocks() {
  const MAX_NODES = 200000;
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "CANVAS", "IFRAME", "OBJECT",
    "EMBED", "INPUT", "TEXTAREA", "SELECT", "OPTION", "DATALIST", "HEAD", "META", "LINK", "AUDIO", "VIDEO", "MAP"]);
  const BLOCK = new Set(["P", "DIV", "SECTION", "ARTICLE", "MAIN", "HEADER", "FOOTER", "NAV", "ASIDE", "FORM",
    "FIELDSET", "FIGURE", "FIGCAPTION", "TABLE", "THEAD", "TBODY", "TFOOT", "TR", "DL", "DT", "DD", "BLOCKQUOTE",
    "ADDRESS", "DETAILS", "SUMMARY", "DIALOG", "CAPTION", "LEGEND", "BODY", "CENTER"]);
  /** @type {Block[]} */
  const blocks = [];
  /** @type {Segment[]} */
  let inline = [];
  /** @type {any} */
  let pending = { type: "p" };
  /** @type {Array<{ordered: boolean, n: number}>} */
  const lists = [];
  let visited = 0;
  let truncated = false;

  const flush = () => {
    if (inline.some((s) => /\S/.test(s.text))) blocks.push({ ...pending, inline });
    inline = [];
    pending = { type: "p" };
  };
  /** @param {Element} el */
  const hidden = (el) => {
    if (el.hasAttribute && el.hasAttribute("hidden")) return true;
    if (typeof el.checkVisibility === "function") {
      if (el.checkVisibility({ visibilityProperty: true })) return false;
      // an element with display: contents has no box of its own, yet its children show
      return getComputedStyle(el).display !== "contents";
    }
    return false;
  };
  /** @param {Element} el */
  const linkOf = (el) => {
    const raw = /** @type {any} */ (el).href;
    const href = typeof raw === "string" ? raw : "";
    return /^(https?:|mailto:)/i.test(href) ? href : undefined;
  };

  /**
   * @param {Node} node
   * @param {string | undefined} href
   */
  const walk = (node, href) => {
    if (++visited > MAX_NODES) {
      truncated = true;
      return;
    }
    if (node.nodeType === 3) {
      inline.push(href === undefined ? { text: String(/** @type {Text} */ (node).data) } : { text: String(/** @type {Text} */ (node).data), href });
      return;
    }
    if (node.nodeType !== 1) return;
    const el = /** @type {Element} */ (node);
    const tag = String(el.tagName).toUpperCase();
    if (SKIP.has(tag) || hidden(el)) return;
    if (tag === "BR") {
      inline.push({ text: " " });
      return;
    }
    if (tag === "HR") {
      flush();
      blocks.push({ type: "hr" });
      return;
    }
    if (tag === "IMG") {
      const alt = el.getAttribute("alt");
      if (alt) inline.push(href === undefined ? { text: alt } : { text: alt, href });
      return;
    }
    if (tag === "PRE") {
      flush();
      const text = String(/** @type {any} */ (el).innerText ?? el.textContent ?? "");
      if (/\S/.test(text)) blocks.push({ type: "pre", text });
      return;
    }
    const heading = /^H([1-6])$/.exec(tag);
    if (heading) {
      flush();
      pending = { type: "h", level: Number(heading[1]) };
      for (const child of Array.from(el.childNodes)) walk(child, href);
      flush();
      return;
    }
    if (tag === "UL" || tag === "OL") {
      flush();
      lists.push({ ordered: tag === "OL", n: 0 });
      for (const child of Array.from(el.childNodes)) walk(child, href);
      flush();
      lists.pop();
      return;
    }
    if (tag === "LI") {
      flush();
      const list = lists[lists.length - 1];
      if (list) list.n += 1;
      pending = { type: "li", depth: Math.max(0, lists.length - 1), ordered: list ? list.ordered : false, n: list ? list.n : 1 };
      for (const child of Array.from(el.childNodes)) walk(child, href);
      flush();
      return;
    }
    const here = tag === "A" ? linkOf(el) ?? href : href;
    const block = BLOCK.has(tag);
    if (block) flush();
    for (const child of Array.from(el.childNodes)) walk(child, here);
    if (block) flush();
    else if (tag === "TD" || tag === "TH") inline.push({ text: " " });
  };

  if (document.body) walk(document.body, undefined);
  flush();
  return { blocks, href: String(location.href), origin: String(globalThis.origin), truncated };
}

/**
 * Collapse runs of whitespace (including newlines) to one space.
 * @param {string} s
 */
export const collapse = (s) => String(s).replace(/\s+/g, " ");

/**
 * Link text inside [...]: brackets and backslashes escaped.
 * @param {string} s
 */
export const escapeLinkText = (s) => String(s).replace(/[\\[\]]/g, (c) => `\\${c}`);

/**
 * A URL safe inside (...): spaces, parentheses and angle brackets percent-encoded.
 * @param {string} href
 */
export const escapeHref = (href) =>
  String(href).replace(/[\s()<>]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);

/**
 * Inline segments as one Markdown line: adjacent segments of one link merge into [text](href).
 * @param {Segment[]} segments
 * @returns {string}
 */
export function renderInline(segments) {
  let out = "";
  let i = 0;
  const list = Array.isArray(segments) ? segments : [];
  while (i < list.length) {
    const href = list[i]?.href;
    let text = "";
    while (i < list.length && list[i]?.href === href) text += String(list[i++]?.text ?? "");
    if (typeof href === "string" && href !== "") {
      const label = collapse(text).trim();
      const lead = /^\s/.test(text) ? " " : "";
      const tail = /\s$/.test(text) ? " " : "";
      out += label === "" ? lead + tail : `${lead}[${escapeLinkText(label)}](${escapeHref(href)})${tail}`;
    } else {
      out += collapse(text);
    }
  }
  return collapse(out).trim();
}

/**
 * A fence longer than any backtick run inside `text`.
 * @param {string} text
 */
export function fenceFor(text) {
  const longest = Math.max(0, ...[...String(text).matchAll(/`+/g)].map((m) => m[0].length));
  return "`".repeat(Math.max(3, longest + 1));
}

/**
 * Render blocks as Markdown: "# heading", paragraphs, "- item" / "1. item" (two spaces per
 * nesting level), fenced code, "---"; blocks separated by a blank line, consecutive list items
 * by a single newline.
 * @param {unknown} blocks
 * @returns {string}
 */
export function renderMarkdown(blocks) {
  const parts = [];
  let prevList = false;
  for (const b of Array.isArray(blocks) ? blocks : []) {
    if (b === null || typeof b !== "object") continue;
    /** @type {string} */
    let md;
    if (b.type === "hr") md = "---";
    else if (b.type === "pre") {
      const text = String(b.text ?? "").replace(/\n+$/, "");
      const fence = fenceFor(text);
      md = `${fence}\n${text}\n${fence}`;
    } else {
      const line = renderInline(b.inline);
      if (line === "") continue;
      if (b.type === "h") md = `${"#".repeat(Math.min(6, Math.max(1, Number(b.level) || 1)))} ${line}`;
      else if (b.type === "li") {
        const depth = Math.min(10, Math.max(0, Number(b.depth) || 0));
        md = `${"  ".repeat(depth)}${b.ordered ? `${Number(b.n) || 1}.` : "-"} ${line}`;
      } else md = line;
    }
    const isList = b.type === "li";
    parts.push(parts.length === 0 ? md : (isList && prevList ? "\n" : "\n\n") + md);
    prevList = isList;
  }
  return parts.join("");
}
