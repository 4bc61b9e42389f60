import { test } from "node:test";
import assert from "node:assert/strict";
import {
  collapse, escapeHref, escapeLinkText, fenceFor, readPageBlocks, renderInline, renderMarkdown, renderTable,
} from "../../extension/worker/markdown.js";
import { maskText } from "../../extension/worker/mask.js";

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
  const node = {
    nodeType: 1, tagName: tag.toUpperCase(), childNodes: children, href: props.href, src: props.src, parentElement: null,
    style: { display: props.display ?? "block" }, innerText: props.innerText,
    textContent: children.map((c) => c.data ?? "").join(""),
    hasAttribute: (n) => Object.hasOwn(attrs, n), getAttribute: (n) => attrs[n] ?? null,
    checkVisibility: () => props.visible !== false && props.display !== "contents",
  };
  for (const c of children) if (c.nodeType === 1) c.parentElement = node;
  return node;
}
function inPage(body, href, fn, ...args) {
  const saved = { document: globalThis.document, location: globalThis.location, getComputedStyle: globalThis.getComputedStyle };
  Object.assign(globalThis, { document: { body }, location: { href }, getComputedStyle: (e) => e.style });
  try {
    return fn(...args);
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
  assert.equal(md, "## Sign *in*\n\nGo [here](https://ok.test/x).\n\njs link\n\ncontents shows\n\n- a\n- b\n  1. b1\n\n```\nx = 1\n```\n\n---\n\n![logo]()");
  for (const secret of ["hunter2", "draft secret", "var secret", "invisible", "hidden attr", "javascript:"]) assert.ok(!md.includes(secret), secret);
});

// --- tables, marks, quotes, code, images, main content --------------------------------

test("inline marks: strong, em, struck, code spans (longer fence around backticks), marks inside links", () => {
  assert.equal(renderInline([{ text: "a " }, { text: "bold", b: true }, { text: " and " }, { text: " both ", b: true, i: true },
    { text: "x" }, { text: "gone", s: true }]), "a **bold** and ***both*** x~~gone~~");
  assert.equal(renderInline([{ text: "run " }, { text: "a`b", code: true }, { text: " or " }, { text: "`x", code: true }]), "run ``a`b`` or `` `x ``");
  assert.equal(renderInline([{ text: "see ", href: "https://x.test/" }, { text: "[this]", href: "https://x.test/", b: true }]),
    "[see **\\[this\\]**](https://x.test/)");
  assert.equal(renderInline([{ text: "   ", b: true }, { text: "y" }]), "y", "an empty mark writes no markers");
});

test("images: ![alt](absolute src), inside a link [![alt](src)](href), no src when it is not http(s)", () => {
  assert.equal(renderInline([{ text: "Logo [v2]", img: "https://cdn.test/l o.png" }, { text: "home" }]), "![Logo \\[v2\\]](https://cdn.test/l%20o.png) home");
  assert.equal(renderInline([{ text: "Home", img: "https://cdn.test/h.png", href: "https://x.test/" }]), "[![Home](https://cdn.test/h.png)](https://x.test/)");
  assert.equal(renderInline([{ text: "inline", img: "" }]), "![inline]()");
});

test("tables: GFM pipe tables, first row the header, rows padded, pipes escaped; one column is paragraphs", () => {
  const c = (text, extra = {}) => [{ text, ...extra }];
  assert.equal(renderTable([[c("Name"), c("Price")], [c("Tea | hot"), c("3", { b: true })], [c("Cake")], [[], []]]),
    "| Name | Price |\n| --- | --- |\n| Tea \\| hot | **3** |\n| Cake |  |");
  assert.equal(renderTable([[c("only")], [c("layout")]]), "only\n\nlayout");
  assert.equal(renderTable([[[], []]]), "");
  assert.equal(renderTable("junk"), "");
});

test("blocks: quotes prefix every line (nested, lists, code), code fences carry a clean language", () => {
  const md = renderMarkdown([
    { type: "p", inline: [{ text: "before" }] },
    { type: "p", quote: 1, inline: [{ text: "said" }] },
    { type: "li", quote: 1, depth: 0, ordered: false, n: 1, inline: [{ text: "a" }] },
    { type: "li", quote: 1, depth: 0, ordered: false, n: 2, inline: [{ text: "b" }] },
    { type: "p", quote: 2, inline: [{ text: "deeper" }] },
    { type: "pre", quote: 1, text: "x\n\ny", lang: "js" },
    { type: "pre", text: "z", lang: "js\n```evil" },
  ]);
  assert.equal(md, "before\n\n> said\n>\n> - a\n> - b\n>\n> > deeper\n>\n> ```js\n> x\n>\n> y\n> ```\n\n```\nz\n```");
});

test("link and image addresses are masked as a snapshot's links are (userinfo, secret-named and token-like values, fragments)", () => {
  const attacker = "https://alice:hunter2@evil.test/cb?session=s3cr3tvalue&q=ok&t=a8f5f167f44f4964e6c998dee827110c#access_token=abcdef123456";
  const img = "https://cdn.test/x.png?sig=Zm9vYmFy0123456789abcdef&w=200";
  const md = renderMarkdown([{ type: "p", inline: [{ text: "Sign in", href: attacker }, { text: " " }, { text: "pic", img }, { text: "see", href: img }] },
    { type: "table", rows: [[[{ text: "h" }], [{ text: "k" }]], [[{ text: "go", href: attacker }], [{ text: "ok" }]]] }]);
  for (const secret of ["alice", "hunter2", "s3cr3tvalue", "a8f5f167f44f4964e6c998dee827110c", "abcdef123456", "Zm9vYmFy0123456789abcdef"]) {
    assert.ok(!md.includes(secret), `${secret} in ${md}`);
  }
  assert.ok(md.includes("[Sign in](https://evil.test/cb?session=[masked:%2011%20chars,%20letters+digits]&q=ok&t=[masked:%2032%20chars,%20hex]#access_token=[masked:%2012%20chars,%20letters+digits])"), md);
  assert.ok(md.includes("![pic](https://cdn.test/x.png?sig=[masked:%2024%20chars,%20base64]&w=200)"), md);
  assert.equal(maskText(md), md, "the text rules the handler runs next leave it as it is");
});

/** An article page: site chrome around a main element holding a table, marks, a quote, code and an image. */
function articlePage({ withMain = true } = {}) {
  const content = [
    el("header", {}, el("h1", {}, text("Release notes"))),
    el("p", {}, text("This is "), el("strong", {}, text("important")), text(" and "), el("em", {}, text("subtle")), text(", run "),
      el("code", {}, text("make all")), text(" then read the "), el("a", { href: "https://docs.test/guide/start" }, text("guide")), text(".")),
    el("table", {},
      el("caption", {}, text("Prices")),
      el("thead", {}, el("tr", {}, el("th", {}, text("Item")), el("th", {}, text("Cost")))),
      el("tbody", {},
        el("tr", {}, el("td", {}, el("a", { href: "https://shop.test/tea" }, text("Tea"))), el("td", {}, el("b", {}, text("3")))),
        el("tr", {}, el("td", { attrs: { colspan: "2" } }, el("p", {}, text("All")), el("p", {}, text("in"))))),
    ),
    el("blockquote", {}, el("p", {}, text("Quoted wisdom,")), el("p", {}, text("twice."))),
    el("pre", { innerText: "const x = 1;\n", attrs: { class: "highlight" } }, el("code", { attrs: { class: "hljs language-js" } }, text("const x = 1;\n"))),
    el("p", {}, el("img", { src: "https://img.test/cat.png", attrs: { alt: "A cat" } }), el("img", { src: "https://img.test/spacer.gif", attrs: { alt: "" } })),
    el("nav", {}, el("a", { href: "https://site.test/prev" }, text("Previous in main"))),
    el("footer", {}, text("Article footer stays")),
  ];
  return el("body", {},
    el("header", {}, el("a", { href: "https://site.test/" }, text("Site home"))),
    el("nav", {}, el("ul", {}, el("li", {}, el("a", { href: "https://site.test/a" }, text("Menu A"))))),
    withMain ? el("main", {}, ...content) : el("div", { attrs: { class: "wrap" } }, el("div", { attrs: { class: "content" } }, ...content)),
    el("aside", {}, text("Sponsored sidebar")),
    el("div", { attrs: { role: "contentinfo" } }, text("Site footer text")),
    el("footer", {}, text("Copyright footer")));
}

test("readPageBlocks keeps tables, marks, quotes, code with its language, images and links", () => {
  const out = inPage(articlePage(), "https://ok.test/notes", readPageBlocks);
  assert.equal(out.main, null);
  const md = renderMarkdown(out.blocks);
  assert.ok(md.includes("This is **important** and *subtle*, run `make all` then read the [guide](https://docs.test/guide/start)."), md);
  assert.ok(md.includes("Prices\n\n| Item | Cost |\n| --- | --- |\n| [Tea](https://shop.test/tea) | **3** |\n| All in |  |"), md);
  assert.ok(md.includes("> Quoted wisdom,\n>\n> twice."), md);
  assert.ok(md.includes("```js\nconst x = 1;\n```"), md);
  assert.ok(md.includes("![A cat](https://img.test/cat.png)") && !md.includes("spacer"), md);
  for (const chrome of ["Site home", "Menu A", "Sponsored sidebar", "Site footer text", "Copyright footer"]) assert.ok(md.includes(chrome), chrome);
});

test("main mode: the <main> element without navigation, asides, or the page's header and footer", () => {
  const out = inPage(articlePage(), "https://ok.test/notes", readPageBlocks, { main: true });
  assert.equal(out.main, "main");
  const md = renderMarkdown(out.blocks);
  assert.ok(md.startsWith("# Release notes\n\nThis is **important**"), md);
  assert.ok(md.includes("| Item | Cost |") && md.includes("![A cat](https://img.test/cat.png)") && md.includes("Article footer stays"), md);
  for (const chrome of ["Site home", "Menu A", "Sponsored sidebar", "Site footer text", "Copyright footer", "Previous in main"]) {
    assert.ok(!md.includes(chrome), `${chrome} in ${md}`);
  }
  assert.deepEqual(inPage(articlePage(), "https://ok.test/notes", readPageBlocks, { main: false }).main, null);
  const picked = inPage(articlePage({ withMain: false }), "https://ok.test/notes", readPageBlocks, { main: true });
  assert.equal(picked.main, "div", "no <main>: the block holding the paragraphs");
  const text2 = renderMarkdown(picked.blocks);
  assert.ok(text2.startsWith("This is **important**") && text2.includes("| Item | Cost |") && !text2.includes("Menu A"), text2);
});

test("main mode without <main>: [role=main], else the longest article, else the densest text block", () => {
  const roleMain = el("body", {}, el("nav", {}, text("Menu")), el("div", { attrs: { role: "main" } }, el("p", {}, text("Role main body"))));
  assert.equal(renderMarkdown(inPage(roleMain, "https://ok.test/", readPageBlocks, { main: true }).blocks), "Role main body");
  const articles = el("body", {}, el("article", {}, el("p", {}, text("Short teaser"))),
    el("article", {}, el("header", {}, el("h2", {}, text("Story"))), el("p", {}, text("The long story goes on and on for a while."))),
    el("footer", {}, text("Footer")));
  assert.equal(renderMarkdown(inPage(articles, "https://ok.test/", readPageBlocks, { main: true }).blocks), "## Story\n\nThe long story goes on and on for a while.");
  const para = (t) => el("p", {}, text(t));
  const links = (n) => el("p", {}, ...Array.from({ length: n }, (_, k) => el("a", { href: `https://x.test/${k}` }, text(`Link number ${k}, more link text here`))));
  const divs = el("body", {},
    el("div", { attrs: { class: "links" } }, links(6), links(6)),
    el("div", { attrs: { class: "story" } }, para("First paragraph of the real story, with commas, and more words."), para("Second paragraph, which is long enough to count as content here.")),
    el("div", { attrs: { class: "tiny" } }, text("x")));
  const md = renderMarkdown(inPage(divs, "https://ok.test/", readPageBlocks, { main: true }).blocks);
  assert.equal(md, "First paragraph of the real story, with commas, and more words.\n\nSecond paragraph, which is long enough to count as content here.");
  const empty = el("body", {}, el("nav", {}, text("Only a menu")), el("div", {}, text("short")));
  assert.equal(renderMarkdown(inPage(empty, "https://ok.test/", readPageBlocks, { main: true }).blocks), "short", "no candidate: the body, chrome still dropped");
});
