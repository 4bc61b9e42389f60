// markdown.js — page_markdown's two halves: readPageBlocks, the function executeScript runs in
// the page (isolated world) to collect the visible structure as plain blocks, and the pure
// helpers that render those blocks as Markdown in the service worker. readPageBlocks is
// serialised into the page, so it must never reference anything outside its own body, never
// read form field values (inputs, textareas and selects are skipped whole, so password fields
// stay out) and never change the page. Every link and image address is masked here as a
// snapshot's links are (mask.js maskHref: no userinfo, secret-named or token-like query values
// by shape) before it is written into the Markdown; card masking and paging happen after.

import { maskHref } from "./mask.js";

/**
 * An inline run of text and its marks (strong, em, strike, code), inside a link when `href` is
 * set; an image when `img` is set (its alt text in `text`, its absolute http(s) src or "").
 * @typedef {{text: string, href?: string, b?: true, i?: true, s?: true, code?: true, img?: string}} Segment
 * @typedef {{type: "h", level: number, inline: Segment[], quote?: number}
 *   | {type: "p", inline: Segment[], quote?: number}
 *   | {type: "li", depth: number, ordered: boolean, n: number, inline: Segment[], quote?: number}
 *   | {type: "pre", text: string, lang?: string, quote?: number}
 *   | {type: "table", rows: Segment[][][], quote?: number}
 *   | {type: "hr", quote?: number}} Block
 */

/**
 * Runs in the page. Walks the visible elements and returns blocks plus the document URL they
 * came from (the caller checks the page did not navigate to another origin meanwhile). With
 * `main`: only the main content (the first `<main>` / `[role=main]`, else the longest
 * `<article>`, else the element whose paragraphs score highest, readability-style), without
 * navigation, asides, search, and page-level headers and footers.
 * @param {{main?: boolean}} [options]
 * @returns {{blocks: Block[], href: string, origin: string, truncated: boolean, main: string | null}}
 */
export function readPageBlocks(options) {
  const mainOnly = options !== null && typeof options === "object" && options.main === true;
  const MAX_NODES = 200000;
  const MAX_COLUMNS = 50;
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "CANVAS", "IFRAME", "OBJECT",
    "EMBED", "INPUT", "TEXTAREA", "SELECT", "OPTION", "DATALIST", "HEAD", "META", "LINK", "AUDIO", "VIDEO", "MAP"]);
  const BLOCK = new Set(["P", "DIV", "SECTION", "ARTICLE", "MAIN", "HEADER", "FOOTER", "NAV", "ASIDE", "FORM",
    "FIELDSET", "FIGURE", "FIGCAPTION", "TABLE", "THEAD", "TBODY", "TFOOT", "TR", "DL", "DT", "DD", "BLOCKQUOTE",
    "ADDRESS", "DETAILS", "SUMMARY", "DIALOG", "CAPTION", "LEGEND", "BODY", "CENTER", "UL", "OL", "LI", "PRE",
    "H1", "H2", "H3", "H4", "H5", "H6", "HR"]);
  const MARKS = { STRONG: "b", B: "b", EM: "i", I: "i", DEL: "s", S: "s", STRIKE: "s", CODE: "code", KBD: "code", SAMP: "code", TT: "code" };
  // main-content mode leaves these out: navigation, asides and search always; a header or footer
  // when it is the page's (not inside an article, aside, main, nav or section)
  const CHROME_TAGS = new Set(["NAV", "ASIDE"]);
  const CHROME_ROLES = new Set(["navigation", "complementary", "search", "banner", "contentinfo"]);
  const SECTIONING = new Set(["ARTICLE", "ASIDE", "MAIN", "NAV", "SECTION"]);
  const PARAGRAPHS = new Set(["P", "PRE", "BLOCKQUOTE", "TD"]);
  /** @type {Block[]} */
  const blocks = [];
  /** @type {Segment[]} */
  let inline = [];
  /** @type {any} */
  let pending = { type: "p" };
  /** @type {Array<{ordered: boolean, n: number}>} */
  const lists = [];
  let quote = 0;
  let cell = 0;
  let visited = 0;
  let truncated = false;

  /** @param {any} b */
  const push = (b) => blocks.push(quote > 0 ? { ...b, quote } : b);
  const flush = () => {
    if (cell > 0) {
      inline.push({ text: " " });
      return;
    }
    if (inline.some((s) => /\S/.test(s.text))) push({ ...pending, inline });
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
  /** @param {Element} el @param {string} name */
  const urlOf = (el, name) => {
    const raw = /** @type {any} */ (el)[name];
    const url = typeof raw === "string" ? raw : "";
    return /^(https?:|mailto:)/i.test(url) ? url : undefined;
  };
  /** @param {Element} el */
  const roleOf = (el) => String(el.getAttribute ? el.getAttribute("role") ?? "" : "").trim().toLowerCase();
  /** @param {Element} el @param {boolean} scoped inside sectioning content */
  const chrome = (el, scoped) => {
    const tag = String(el.tagName).toUpperCase();
    if (CHROME_TAGS.has(tag) || CHROME_ROLES.has(roleOf(el))) return true;
    return (tag === "HEADER" || tag === "FOOTER") && !scoped;
  };
  /** The code block's language, from class="language-x" (or lang-x) on it or its code. @param {Element} el */
  const languageOf = (el) => {
    const code = Array.from(el.childNodes).find((c) => c.nodeType === 1 && String(/** @type {Element} */ (c).tagName).toUpperCase() === "CODE");
    for (const e of code ? [el, code] : [el]) {
      const m = /(?:^|\s)lang(?:uage)?-([A-Za-z0-9_+#.-]{1,32})(?:\s|$)/.exec(String(/** @type {Element} */ (e).getAttribute("class") ?? ""));
      if (m) return m[1];
    }
    return undefined;
  };
  /** @param {string} text @param {any} marks */
  const segment = (text, marks) => {
    /** @type {any} */
    const s = { text };
    for (const k of ["href", "b", "i", "s", "code"]) if (marks[k] !== undefined) s[k] = marks[k];
    return s;
  };

  /**
   * One table: its rows (through thead/tbody/tfoot), each cell's inline content; its caption
   * as a paragraph before it.
   * @param {Element} table
   * @param {any} marks
   * @param {boolean} scoped
   */
  const walkTable = (table, marks, scoped) => {
    /** @type {Element[]} */
    const trs = [];
    /** @param {Element} el */
    const collect = (el) => {
      for (const c of Array.from(el.childNodes)) {
        if (c.nodeType !== 1) continue;
        const child = /** @type {Element} */ (c);
        const tag = String(child.tagName).toUpperCase();
        if (hidden(child)) continue;
        if (tag === "TR") trs.push(child);
        else if (tag === "THEAD" || tag === "TBODY" || tag === "TFOOT") collect(child);
        else if (tag === "CAPTION") {
          for (const n of Array.from(child.childNodes)) walk(n, marks, scoped);
          flush();
        }
      }
    };
    collect(table);
    /** @type {Segment[][][]} */
    const rows = [];
    for (const tr of trs) {
      /** @type {Segment[][]} */
      const row = [];
      for (const c of Array.from(tr.childNodes)) {
        if (c.nodeType !== 1) continue;
        const td = /** @type {Element} */ (c);
        const tag = String(td.tagName).toUpperCase();
        if ((tag !== "TD" && tag !== "TH") || hidden(td)) continue;
        inline = [];
        cell += 1;
        for (const n of Array.from(td.childNodes)) walk(n, marks, scoped);
        cell -= 1;
        row.push(inline);
        const span = Math.min(MAX_COLUMNS, Math.max(1, Number.parseInt(String(td.getAttribute("colspan") ?? "1"), 10) || 1));
        for (let k = 1; k < span; k++) row.push([]);
        if (row.length >= MAX_COLUMNS) break;
      }
      rows.push(row.slice(0, MAX_COLUMNS));
    }
    inline = [];
    if (rows.some((r) => r.some((cellInline) => cellInline.some((s) => /\S/.test(s.text))))) push({ type: "table", rows });
  };

  /**
   * @param {Node} node
   * @param {any} marks the enclosing link's href and the marks in force
   * @param {boolean} scoped inside sectioning content (a header or footer there is not the page's)
   */
  const walk = (node, marks, scoped) => {
    if (++visited > MAX_NODES) {
      truncated = true;
      return;
    }
    if (node.nodeType === 3) {
      inline.push(segment(String(/** @type {Text} */ (node).data), marks));
      return;
    }
    if (node.nodeType !== 1) return;
    const el = /** @type {Element} */ (node);
    const tag = String(el.tagName).toUpperCase();
    if (SKIP.has(tag) || hidden(el)) return;
    if (mainOnly && chrome(el, scoped)) return;
    const inner = scoped || SECTIONING.has(tag);
    const children = (/** @type {any} */ m) => {
      for (const child of Array.from(el.childNodes)) walk(child, m, inner);
    };
    if (tag === "BR") {
      inline.push({ text: " " });
      return;
    }
    if (tag === "IMG") {
      const alt = String(el.getAttribute("alt") ?? "").trim();
      if (alt !== "") {
        const src = /^https?:/i.test(String(/** @type {any} */ (el).src ?? "")) ? String(/** @type {any} */ (el).src) : "";
        inline.push(marks.href === undefined ? { text: alt, img: src } : { text: alt, img: src, href: marks.href });
      }
      return;
    }
    const mark = /** @type {Record<string, string>} */ (MARKS)[tag];
    if (mark !== undefined) {
      children({ ...marks, [mark]: true });
      return;
    }
    if (tag === "A") {
      const href = urlOf(el, "href");
      children(href === undefined ? marks : { ...marks, href });
      return;
    }
    if (cell > 0) {
      // inside a table cell everything is inline: blocks become spaces, a nested table its text
      if (tag === "PRE") children({ ...marks, code: true });
      else children(marks);
      if (BLOCK.has(tag) || tag === "TD" || tag === "TH") inline.push({ text: " " });
      return;
    }
    if (tag === "HR") {
      flush();
      push({ type: "hr" });
      return;
    }
    if (tag === "PRE") {
      flush();
      const text = String(/** @type {any} */ (el).innerText ?? el.textContent ?? "");
      const lang = languageOf(el);
      if (/\S/.test(text)) push(lang === undefined ? { type: "pre", text } : { type: "pre", text, lang });
      return;
    }
    if (tag === "TABLE") {
      flush();
      walkTable(el, marks, inner);
      return;
    }
    if (tag === "BLOCKQUOTE") {
      flush();
      quote += 1;
      children(marks);
      flush();
      quote -= 1;
      return;
    }
    const heading = /^H([1-6])$/.exec(tag);
    if (heading) {
      flush();
      pending = { type: "h", level: Number(heading[1]) };
      children(marks);
      flush();
      return;
    }
    if (tag === "UL" || tag === "OL") {
      flush();
      lists.push({ ordered: tag === "OL", n: 0 });
      children(marks);
      flush();
      lists.pop();
      return;
    }
    if (tag === "LI") {
      flush();
      const list = lists[lists.length - 1];
      if (list) list.n += 1;
      pending = { type: "li", depth: Math.max(0, lists.length - 1), ordered: list ? list.ordered : false, n: list ? list.n : 1 };
      children(marks);
      flush();
      return;
    }
    const block = BLOCK.has(tag);
    if (block) flush();
    children(marks);
    if (block) flush();
  };

  /**
   * Main-content mode's root: the first visible <main> / [role=main]; else the <article> with
   * the most text; else the element whose paragraphs score highest (each paragraph of 25+
   * characters scores 1 + its commas + a point per 100 characters, to its parent, half to its
   * grandparent; an element's score shrinks by its share of link text); else the body.
   * @param {Element} body
   */
  const mainRoot = (body) => {
    /** @type {Element | null} */
    let main = null;
    /** @type {Array<[Element, number]>} */
    const articles = [];
    /** @type {Map<Element, number>} */
    const scores = new Map();
    /** @type {Map<Element, [number, number]>} */
    const lengths = new Map();
    /** @type {Element[]} */
    const stack = [];
    let seen = 0;
    /** @param {Element} el @param {boolean} scoped @returns {[number, number]} text and link-text length */
    const scan = (el, scoped) => {
      let text = 0;
      let links = 0;
      stack.push(el);
      for (const c of Array.from(el.childNodes)) {
        if (++seen > MAX_NODES) break;
        if (c.nodeType === 3) {
          text += String(/** @type {Text} */ (c).data).replace(/\s+/g, " ").trim().length;
          continue;
        }
        if (c.nodeType !== 1) continue;
        const child = /** @type {Element} */ (c);
        const tag = String(child.tagName).toUpperCase();
        if (SKIP.has(tag) || hidden(child) || chrome(child, scoped)) continue;
        if (main === null && (tag === "MAIN" || roleOf(child) === "main")) main = child;
        const [t, l] = scan(child, scoped || SECTIONING.has(tag));
        text += t;
        links += tag === "A" ? t : l;
        if (tag === "ARTICLE") articles.push([child, t]);
      }
      stack.pop();
      const tag = String(el.tagName).toUpperCase();
      if (PARAGRAPHS.has(tag) && text >= 25) {
        const score = 1 + (String(el.textContent ?? "").match(/,/g) ?? []).length + Math.min(3, Math.floor(text / 100));
        const parent = stack[stack.length - 1];
        const grand = stack[stack.length - 2];
        if (parent) scores.set(parent, (scores.get(parent) ?? 0) + score);
        if (grand) scores.set(grand, (scores.get(grand) ?? 0) + score / 2);
      }
      if (scores.has(el)) lengths.set(el, [text, links]);
      return [text, links];
    };
    scan(body, false);
    if (main !== null) return main;
    if (articles.length > 0) return articles.reduce((a, b) => (b[1] > a[1] ? b : a))[0];
    let best = body;
    let top = 0;
    for (const [el, score] of scores) {
      const [text, links] = lengths.get(el) ?? [0, 0];
      const s = score * (text > 0 ? 1 - links / text : 0);
      if (s > top) {
        top = s;
        best = el;
      }
    }
    return best;
  };

  /** @param {Element} el whether it sits inside sectioning content */
  const scopedAt = (el) => {
    for (let e = /** @type {any} */ (el).parentElement; e; e = e.parentElement) if (SECTIONING.has(String(e.tagName).toUpperCase())) return true;
    return false;
  };

  let root = /** @type {Element | null} */ (document.body);
  if (root && mainOnly) root = mainRoot(root);
  if (root) {
    const tag = String(root.tagName).toUpperCase();
    const scoped = root !== document.body && scopedAt(root);
    if (root === document.body) walk(root, {}, false);
    else {
      // the root's children are walked (the root itself is kept whatever it is)
      const inner = scoped || SECTIONING.has(tag);
      for (const child of Array.from(root.childNodes)) walk(child, {}, inner);
    }
  }
  flush();
  const mainTag = mainOnly && root ? String(root.tagName).toLowerCase() : null;
  return { blocks, href: String(location.href), origin: String(globalThis.origin), truncated, main: mainTag };
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
 * A link's or image's address as it may be written: masked as a snapshot's links are
 * (mask.js maskHref), then made safe inside (...).
 * @param {string} href
 */
export const addressOf = (href) => escapeHref(maskHref(String(href)));

/**
 * `text` wrapped in `open`/`close`, its leading and trailing whitespace kept outside (a marker
 * next to a space does not open or close emphasis).
 * @param {string} text @param {string} open @param {string} close
 */
function wrap(text, open, close) {
  const core = text.trim();
  if (core === "") return text;
  return `${/^\s/.test(text) ? " " : ""}${open}${core}${close}${/\s$/.test(text) ? " " : ""}`;
}

/**
 * A code span: backticks one longer than any run inside, padded when the code starts or ends
 * with a backtick.
 * @param {string} text
 */
function codeSpan(text) {
  const core = text.trim();
  if (core === "") return text;
  const ticks = "`".repeat(Math.max(1, ...[...core.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  const pad = /^`|`$/.test(core) ? " " : "";
  return wrap(text, `${ticks}${pad}`, `${pad}${ticks}`);
}

/** @param {any} s the marks of a segment, as one key */
const marksKey = (s) => `${s.b === true ? "b" : ""}${s.i === true ? "i" : ""}${s.s === true ? "s" : ""}${s.code === true ? "c" : ""}`;

/**
 * Segments of one link (or of none) with their marks: runs of equal marks become one
 * `**strong**`, `*em*`, `~~struck~~` or `` `code` ``; an image `![alt](src)`.
 * @param {any[]} segments
 * @param {boolean} inLink brackets in the text are escaped
 */
function renderMarked(segments, inLink) {
  let out = "";
  let i = 0;
  while (i < segments.length) {
    const first = segments[i];
    if (typeof first.img === "string") {
      const alt = escapeLinkText(collapse(first.text).trim());
      out += ` ![${alt}](${first.img === "" ? "" : addressOf(first.img)}) `;
      i += 1;
      continue;
    }
    const key = marksKey(first);
    let text = "";
    while (i < segments.length && typeof segments[i].img !== "string" && marksKey(segments[i]) === key) text += String(segments[i++].text ?? "");
    text = collapse(text);
    if (first.code === true) text = codeSpan(text);
    else if (inLink) text = escapeLinkText(text);
    const open = `${first.s === true ? "~~" : ""}${first.b === true ? "**" : ""}${first.i === true ? "*" : ""}`;
    out += open === "" ? text : wrap(text, open, [...open].reverse().join(""));
  }
  return out;
}

/**
 * Inline segments as one Markdown line: adjacent segments of one link merge into [text](href)
 * (the address masked), marks and images as renderMarked writes them.
 * @param {Segment[]} segments
 * @returns {string}
 */
export function renderInline(segments) {
  let out = "";
  let i = 0;
  const list = (Array.isArray(segments) ? segments : []).filter((s) => s !== null && typeof s === "object");
  while (i < list.length) {
    const href = list[i].href;
    const run = [];
    while (i < list.length && list[i].href === href) run.push(list[i++]);
    const text = renderMarked(run, typeof href === "string");
    if (typeof href === "string" && href !== "") {
      const label = collapse(text).trim();
      const lead = /^\s/.test(text) ? " " : "";
      const tail = /\s$/.test(text) ? " " : "";
      out += label === "" ? lead + tail : `${lead}[${label}](${addressOf(href)})${tail}`;
    } else {
      out += text;
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
 * A GFM pipe table: the first row is the header, every row padded to the widest; a cell's
 * pipes escaped. A table of one column (a layout table) is its cells as paragraphs.
 * @param {unknown} rows
 * @returns {string}
 */
export function renderTable(rows) {
  const cells = (Array.isArray(rows) ? rows : []).filter(Array.isArray)
    .map((row) => row.map((c) => renderInline(/** @type {Segment[]} */ (c)).replace(/\|/g, "\\|")))
    .filter((row) => row.some((c) => c !== ""));
  const width = Math.max(0, ...cells.map((r) => r.length));
  if (width === 0) return "";
  if (width === 1) return cells.map((r) => r[0]).filter((c) => c !== "").join("\n\n");
  const line = (/** @type {string[]} */ r) => `| ${Array.from({ length: width }, (_, k) => r[k] ?? "").join(" | ")} |`;
  return [line(cells[0]), line(Array(width).fill("---")), ...cells.slice(1).map(line)].join("\n");
}

/**
 * Render blocks as Markdown: "# heading", paragraphs, "- item" / "1. item" (two spaces per
 * nesting level), fenced code (with its language), pipe tables, "---", "> " before each line of
 * a quoted block; blocks separated by a blank line, consecutive list items by a single newline.
 * @param {unknown} blocks
 * @returns {string}
 */
export function renderMarkdown(blocks) {
  const parts = [];
  let prevList = false;
  let prevQuote = 0;
  for (const b of Array.isArray(blocks) ? blocks : []) {
    if (b === null || typeof b !== "object") continue;
    /** @type {string} */
    let md;
    if (b.type === "hr") md = "---";
    else if (b.type === "pre") {
      const text = String(b.text ?? "").replace(/\n+$/, "");
      const fence = fenceFor(text);
      const lang = typeof b.lang === "string" && /^[A-Za-z0-9_+#.-]{1,32}$/.test(b.lang) ? b.lang : "";
      md = `${fence}${lang}\n${text}\n${fence}`;
    } else if (b.type === "table") {
      md = renderTable(b.rows);
      if (md === "") continue;
    } else {
      const line = renderInline(b.inline);
      if (line === "") continue;
      if (b.type === "h") md = `${"#".repeat(Math.min(6, Math.max(1, Number(b.level) || 1)))} ${line}`;
      else if (b.type === "li") {
        const depth = Math.min(10, Math.max(0, Number(b.depth) || 0));
        md = `${"  ".repeat(depth)}${b.ordered ? `${Number(b.n) || 1}.` : "-"} ${line}`;
      } else md = line;
    }
    const q = Math.min(10, Math.max(0, Number(b.quote) || 0));
    if (q > 0) md = md.split("\n").map((l) => `${"> ".repeat(q)}${l}`.trimEnd()).join("\n");
    const isList = b.type === "li";
    const shared = Math.min(q, prevQuote);
    const gap = isList && prevList && q === prevQuote ? "\n" : `\n${"> ".repeat(shared).trimEnd()}\n`;
    parts.push(parts.length === 0 ? md : gap + md);
    prevList = isList;
    prevQuote = q;
  }
  return parts.join("");
}
