import { test } from "node:test";
import assert from "node:assert/strict";
import {
  collapse, escapeHref, escapeLinkText, fenceFor, readPageBlocks, renderInline, renderMarkdown,
} from "../../extension/worker/markdown.js";

test("inline: whitespace collapses, link segments merge into [text](href), escaped", () => {
  assert.equal(collapse(" a \n\t b "), " a b ");
  assert.equal(renderInline([{ text: "See " }, { text: "the ", href: "https://x.test/a b" }, { text: "docs", href: "https://x.test/a b" }, { text: " now." }]),
    "See [the docs](https://x.test/a%20b) now.");
  assert.equal(escapeLinkText("a [b] \\c"), "a \\[b\\] \\\\c");
  assert.equal(escapeHref("https://x.test/(x)<y>"), "https://x.test/%28x%29%3Cy%3E");
  assert.equal(renderInline([{ text: "x" }, { text: "  ", href: "https://x.test/" }, { text: "y" }]), "x y");
  assert.equal(renderInline(null), "");
});

test("blocks: headings, paragraphs, nested and ordered lists, code fences, rules", () => {
  const md = renderMarkdown([
    { type: "h", level: 1, inline: [{ text: "Title" }] },
    { type: "p", inline: [{ text: "Hello " }, { text: "world", href: "https://w.test/" }] },
    { type: "li", depth: 0, ordered: false, n: 1, inline: [{ text: "one" }] },
    { type: "li", depth: 1, ordered: true, n: 1, inline: [{ text: "inner" }] },
    { type: "li", depth: 0, ordered: false, n: 2, inline: [{ text: "two" }] },
    { type: "p", inline: [{ text: "   " }] },
    { type: "pre", text: "a ``` b\n" },
    { type: "hr" },
    { type: "h", level: 9, inline: [{ text: "deep" }] },
  ]);
  assert.equal(md, "# Title\n\nHello [world](https://w.test/)\n\n- one\n  1. inner\n- two\n\n````\na ``` b\n````\n\n---\n\n###### deep");
  assert.equal(fenceFor("no ticks"), "```");
  assert.equal(renderMarkdown("junk"), "");
});

// --- a tiny fake DOM for the page-side walker ------------------------------------------------
const text = (data) => ({ nodeType: 3, data });
function el(tag, props = {}, ...children) {
  const attrs = props.attrs ?? {};
  return {
    nodeType: 1, tagName: tag.toUpperCase(), childNodes: children, href: props.href,
    style: { display: props.display ?? "block" }, innerText: props.innerText,
    textContent: children.map((c) => c.data ?? "").join(""),
    hasAttribute: (n) => Object.hasOwn(attrs, n), getAttribute: (n) => attrs[n] ?? null,
    checkVisibility: () => props.visible !== false && props.display !== "contents",
  };
}
function inPage(body, href, fn) {
  const saved = { document: globalThis.document, location: globalThis.location, getComputedStyle: globalThis.getComputedStyle };
  Object.assign(globalThis, { document: { body }, location: { href }, getComputedStyle: (e) => e.style });
  try {
    return fn();
  } finally {
    Object.assign(globalThis, saved);
  }
}

test("readPageBlocks walks visible structure, skips form fields, scripts and hidden nodes", () => {
  const body = el("body", {},
    el("h2", {}, text("Sign "), el("em", {}, text("in"))),
    el("p", {}, text("Go "), el("a", { href: "https://ok.test/x" }, text("here")), text(".")),
    el("a", { href: "javascript:alert(1)" }, text("js link")),
    el("input", { attrs: { type: "password", value: "hunter2" } }),
    el("textarea", {}, text("draft secret")),
    el("script", {}, text("var secret = 1")),
    el("div", { visible: false }, text("invisible")),
    el("div", { attrs: { hidden: "" } }, text("hidden attr")),
    el("div", { display: "contents" }, text("contents shows")),
    el("ul", {}, el("li", {}, text("a")), el("li", {}, text("b"), el("ol", {}, el("li", {}, text("b1"))))),
    el("pre", { innerText: "x = 1\n" }),
    el("hr"),
    el("img", { attrs: { alt: "logo" } }),
  );
  const out = inPage(body, "https://ok.test/page", readPageBlocks);
  assert.equal(out.href, "https://ok.test/page");
  assert.equal(out.truncated, false);
  const md = renderMarkdown(out.blocks);
  assert.equal(md, "## Sign in\n\nGo [here](https://ok.test/x).\n\njs link\n\ncontents shows\n\n- a\n- b\n  1. b1\n\n```\nx = 1\n```\n\n---\n\nlogo");
  for (const secret of ["hunter2", "draft secret", "var secret", "invisible", "hidden attr", "javascript:"]) assert.ok(!md.includes(secret), secret);
});
