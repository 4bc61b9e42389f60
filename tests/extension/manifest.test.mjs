import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const EXT = fileURLToPath(new URL("../../extension/", import.meta.url));
const manifest = JSON.parse(readFileSync(join(EXT, "manifest.json"), "utf8"));

/** Chrome's extension id: sha256(DER public key), first 32 hex digits mapped 0-f -> a-p. */
function extensionId(keyBase64) {
  const hex = createHash("sha256").update(Buffer.from(keyBase64, "base64")).digest("hex").slice(0, 32);
  return [...hex].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join("");
}

/** Every .js file under extension/, as paths relative to it. */
function jsFiles(dir = EXT) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return jsFiles(p);
    return e.name.endsWith(".js") ? [relative(EXT, p)] : [];
  });
}

/** Source with comments removed (rough, enough for these files: no "//" inside strings). */
const code = (file) => readFileSync(join(EXT, file), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");

test("manifest basics", () => {
  assert.equal(manifest.manifest_version, 3);
  assert.equal(manifest.name, "tabwarden");
  assert.equal(manifest.version, "0.1.0");
  assert.equal(manifest.minimum_chrome_version, "120");
  assert.equal(typeof manifest.description, "string");
  assert.ok(manifest.description.length > 0 && manifest.description.length <= 132);
  assert.deepEqual(manifest.background, { service_worker: "background.js", type: "module" });
  assert.deepEqual(manifest.content_security_policy, { extension_pages: "script-src 'self'; object-src 'none'" });
});

test("permissions: each one is here for a reason (docs/adr/0003), nothing else", () => {
  // Why each permission exists:
  //  nativeMessaging — the only channel to `tabwarden host` (hop 3).
  //  tabs            — read tab URLs/titles for the origin gate and tab_list; back/forward/reload,
  //                    activate (tab_focus, page_screenshot).
  //  scripting       — executeScript: page_text, page_markdown, page_scrape, storage_get,
  //                    page_eval (MAIN world, policy-gated), page_upload (policy-gated).
  //  cookies         — cookie_get: chrome.cookies.getAll for the tab's URL; values leave masked.
  //  debugger        — on the tabs a session owns, from tab_open until they leave it (ADR
  //                    0005): dialogs (dialog_open, page_dialog), trusted input (page_mouse,
  //                    page_hover) and page_screenshot. Chrome shows its banner meanwhile.
  //                    (tabs.captureVisibleTab would need "<all_urls>", every site at install.)
  //  storage         — chrome.storage.local holds the pinned host record (host key, fingerprint,
  //                    browser label, credential id) from pairing on the options page; pages
  //                    cannot read or write it (worker/pinning.js, docs/protocol.md);
  //                    and the trust-record epoch ratchet per pinned key (worker/epoch-ratchet.js,
  //                    catching a rolled-back record), beside it.
  //  alarms          — one wake alarm (worker/wake.js): Chrome starts a stopped worker to deliver
  //                    it, so the bridge comes back with no browser event.
  //  webNavigation   — getAllFrames for page_frames and the `frame` argument (which frames an
  //                    owned tab has, each frame's url for its own origin gate), and
  //                    onCreatedNavigationTarget: a tab an owned tab opens (target=_blank,
  //                    window.open) joins its session. Its install warning ("Read your
  //                    browsing history") is the one `tabs` already carries: nothing new is asked.
  //                    Also onErrorOccurred and getFrame: a top-frame request our rules stopped.
  //  declarativeNetRequest — session rules scoped (tabIds) to the tabs live sessions own: their
  //                    top frame cannot leave for an unapproved origin, the request is stopped
  //                    before it is sent (worker/nav-block.js). Block and allow rules need
  //                    no host permission with this one ("...WithHostAccess" would need the
  //                    blocked site's, which by definition is not granted). Chrome's warning:
  //                    "Block content on any page"; no rule ever covers a tab of the person's.
  //  downloads       — chrome.downloads.search only (page_wait_download): where Chrome
  //                    saved a download an owned tab's debugger reported finished (so the MCP
  //                    server can copy it into its sandbox) and why a failed one stopped. The
  //                    debugger says which tab started it but neither of those; CDP's download
  //                    redirection is browser-level, which Chrome refuses to extensions. Never
  //                    download, open, remove, erase or redirect (tests/extension/files.test.mjs).
  assert.deepEqual(manifest.permissions, ["nativeMessaging", "tabs", "scripting", "cookies", "debugger", "storage", "alarms", "webNavigation", "downloads", "declarativeNetRequest"]);
  // No site is granted at install: approving an origin in the confirm window requests its host
  // permission there (the click is the gesture Chrome needs), ADR 0003.
  assert.deepEqual(manifest.optional_host_permissions, ["http://*/*", "https://*/*"]);
  for (const key of ["host_permissions", "optional_permissions", "content_scripts",
    "web_accessible_resources", "externally_connectable"]) {
    assert.equal(manifest[key], undefined, key);
  }
});

test("screenshots never use captureVisibleTab (it needs <all_urls>)", () => {
  for (const file of jsFiles()) assert.doesNotMatch(code(file), /captureVisibleTab/, file);
});

test("confirm.html is a static page: no inline script or handlers, textContent-only script", () => {
  const html = readFileSync(join(EXT, "confirm.html"), "utf8");
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  assert.equal(scripts.length, 1);
  assert.match(scripts[0][1], /type="module"/);
  assert.match(scripts[0][1], /src="confirm\.js"/);
  assert.equal(scripts[0][2].trim(), "");
  assert.doesNotMatch(html, /\son[a-z]+\s*=/i);
  for (const id of ["allow", "deny", "tool", "origin", "detail", "status"]) assert.match(html, new RegExp(`id="${id}"`));
  assert.ok(existsSync(join(EXT, "confirm.css")));
  for (const file of ["confirm.js", join("ui", "confirm-page.js")]) {
    assert.doesNotMatch(code(file), /innerHTML|outerHTML|insertAdjacentHTML|document\.write/, file);
  }
});

test("options.html is the options page: static, no inline script, textContent-only scripts", () => {
  assert.equal(manifest.options_page, "options.html");
  assert.equal(manifest.options_ui, undefined);
  const html = readFileSync(join(EXT, "options.html"), "utf8");
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  assert.equal(scripts.length, 1);
  assert.match(scripts[0][1], /type="module"/);
  assert.match(scripts[0][1], /src="options\.js"/);
  assert.equal(scripts[0][2].trim(), "");
  assert.doesNotMatch(html, /\son[a-z]+\s*=/i);
  assert.doesNotMatch(html, /<form\b/i, "a form would submit (navigate) on Enter");
  for (const id of ["code", "pair", "status", "fingerprint", "pairing", "gate", "policy", "killed", "enrolled", "policy-status",
    "origin", "approve-origin", "enable-eval", "enable-upload", "restrict-eval", "restrict-upload", "kill", "unkill"]) {
    assert.match(html, new RegExp(`id="${id}"`));
  }
  assert.match(html, /<label for="origin">/);
  for (const id of ["approve-origin", "enable-eval", "enable-upload", "restrict-eval", "restrict-upload", "kill", "unkill"]) {
    assert.match(html, new RegExp(`<button id="${id}" type="button"`), `${id} is a real, keyboard-usable button`);
  }
  assert.match(html, /<label for="code">One-time code from <code>tabwarden pair<\/code><\/label>/);
  // The "no authenticator" box sits right before its own label, in one row.
  assert.match(html, /<div class="check">\s*<input id="window-only" type="checkbox">\s*<label for="window-only">/);
  // Sections with headings and a nav to each.
  for (const [id, heading] of [["status", "Status"], ["sites", "Sites"], ["permissions", "Permissions"], ["clients", "Clients"], ["audit", "Audit"]]) {
    assert.match(html, new RegExp(`<section id="${id}-section" aria-labelledby="${id}-heading">\\s*<h2 id="${id}-heading">${heading}</h2>`));
    assert.match(html, new RegExp(`<nav [^>]*>[\\s\\S]*<a href="#${id}-section">${heading}</a>[\\s\\S]*</nav>`));
  }
  assert.doesNotMatch(html, /policy epoch|window-only\b(?!")/i, "plain words, not internal ones");
  assert.ok(existsSync(join(EXT, "options.css")));
  for (const file of ["options.js", join("ui", "options-page.js"), join("worker", "pairing.js"), join("worker", "pinning.js"),
    join("ui", "policy-page.js"), join("worker", "policy-relay.js"), join("shared", "canonical-json.js")]) {
    assert.doesNotMatch(code(file), /innerHTML|outerHTML|insertAdjacentHTML|document\.write/, file);
  }
});

test("the key derives extension id jlmldlloenidkbhnlcdhogbbeefcjhmf", () => {
  assert.equal(extensionId(manifest.key), "jlmldlloenidkbhnlcdhogbbeefcjhmf");
  assert.notEqual(extensionId(manifest.key.replace("QIDAQAB", "QIDAQAC")), "jlmldlloenidkbhnlcdhogbbeefcjhmf");
});

test("only background.js and shared/chrome-api.js touch the chrome global", () => {
  const allowed = new Set(["background.js", join("shared", "chrome-api.js")]);
  const files = jsFiles();
  assert.ok(files.length >= 8, files.join(","));
  for (const file of files) {
    const uses = /\bchrome\s*[.[]/.test(code(file)) || /\bglobalThis\s*\.\s*chrome\b/.test(code(file));
    if (!allowed.has(file)) assert.equal(uses, false, `${file} must not touch chrome`);
  }
  assert.ok(/\bchrome\s*\./.test(code("background.js")));
});

test("every module imports by a relative path with .js that exists (loadable unpacked, no build)", () => {
  for (const file of jsFiles()) {
    for (const m of code(file).matchAll(/\b(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/g)) {
      const spec = m[1];
      assert.ok(spec.startsWith("./") || spec.startsWith("../"), `${file}: bare import ${spec}`);
      assert.ok(spec.endsWith(".js"), `${file}: ${spec} needs .js`);
      const target = resolve(dirname(join(EXT, file)), spec);
      assert.ok(target.startsWith(EXT), `${file}: ${spec} escapes extension/`);
      assert.ok(existsSync(target), `${file}: ${spec} missing`);
    }
  }
});

test("every module opens with a purpose comment", () => {
  for (const file of jsFiles()) {
    const first = readFileSync(join(EXT, file), "utf8").split("\n", 1)[0];
    assert.match(first, /^\/\/ \S+/, file);
  }
});

test("action: the toolbar popup is popup.html, a static page; still no web_accessible_resources", () => {
  const { default_icon: actionIcons, ...action } = manifest.action;
  assert.deepEqual(action, { default_title: "tabwarden", default_popup: "popup.html" });
  assert.deepEqual(actionIcons, manifest.icons);
  assert.equal(manifest.web_accessible_resources, undefined);
  const html = readFileSync(join(EXT, "popup.html"), "utf8");
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  assert.equal(scripts.length, 1);
  assert.match(scripts[0][1], /type="module"/);
  assert.match(scripts[0][1], /src="popup\.js"/);
  assert.equal(scripts[0][2].trim(), "");
  assert.doesNotMatch(html, /\son[a-z]+\s*=/i);
  for (const id of ["state", "kill", "recent"]) assert.match(html, new RegExp(`id="${id}"`));
  assert.ok(existsSync(join(EXT, "popup.css")));
  for (const file of ["popup.js", join("ui", "popup-page.js"), join("ui", "clients-page.js")]) {
    assert.doesNotMatch(code(file), /innerHTML|outerHTML|insertAdjacentHTML|document\.write/, file);
  }
});

test("confirm.html has the presence-mode #tap button; options.html the MCP clients section", () => {
  const confirmHtml = readFileSync(join(EXT, "confirm.html"), "utf8");
  assert.match(confirmHtml, /<button id="tap" type="button"[^>]*hidden[^>]*>Confirm with your security key<\/button>/);
  const options = readFileSync(join(EXT, "options.html"), "utf8");
  for (const id of ["clients-paired", "clients-recent", "clients-status"]) assert.match(options, new RegExp(`id="${id}"`));
});

test("icons: 16, 32, 48 and 128 px PNGs (scripts/draw-icons), each of the size it is declared as", () => {
  assert.deepEqual(Object.keys(manifest.icons), ["16", "32", "48", "128"]);
  for (const [size, file] of Object.entries(manifest.icons)) {
    const png = readFileSync(join(EXT, file));
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], file);
    assert.equal(png.toString("latin1", 12, 16), "IHDR", file);
    assert.equal(png.readUInt32BE(16), Number(size), `${file} width`);
    assert.equal(png.readUInt32BE(20), Number(size), `${file} height`);
  }
});
