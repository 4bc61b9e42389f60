import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { POLICY_WORDS, SWITCH_REFUSALS, switchOf, teach, turnOnWords } from "../../extension/shared/policy-words.js";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { fakeLog } from "./helpers/fakes.mjs";

const EXTENSION = new URL("../../extension/", import.meta.url).pathname;
const OPTIONS = readFileSync(join(EXTENSION, "options.html"), "utf8");

/** Every extension source file (not the generated catalogue). */
function sources(dir = EXTENSION) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : sources(path);
    return e.name.endsWith(".js") && e.name !== "catalogue.js" ? [path] : [];
  });
}

/** The words of every policy_denied the extension answers: the literal text after the code. */
function refusals() {
  const found = [];
  const at = /(?:CODE\.POLICY_DENIED|"policy_denied"),\s*(["`])((?:\\.|(?!\1)[^\\])*)\1/g;
  for (const path of sources()) {
    const text = readFileSync(path, "utf8");
    for (const m of text.matchAll(at)) found.push({ path: path.slice(EXTENSION.length), words: m[2] });
  }
  return found;
}

test("the scan finds the extension's policy_denied refusals, the password ones among them", () => {
  const all = refusals();
  assert.ok(all.length >= 10, String(all.length));
  assert.ok(all.some((r) => r.path === "page/actions.js" && /passwordFill is off/.test(r.words)));
  assert.ok(all.some((r) => r.path === "handlers/eval-upload.js" && /does not enable/.test(r.words)));
});

test("every policy_denied that names a policy switch is taught: the key, its exact command, the options control", () => {
  const keys = Object.keys(POLICY_WORDS);
  // A template's words are checked for every switch its ${key} can be.
  const cases = refusals().flatMap(({ path, words }) => !words.includes("${key}") ? [{ path, words }]
    : Object.keys(SWITCH_REFUSALS).map((k) => ({ path, words: words.replaceAll("${turnOnWords(key)}", "").replaceAll("${key}", k) })));
  for (const { path, words } of cases) {
    const named = keys.filter((k) => new RegExp(`\\b${k}\\b`).test(words));
    if (named.length === 0 && !/\bpolicy\b/.test(words)) continue; // a guard no setting turns off
    const key = switchOf(words);
    assert.ok(key !== null, `${path}: "${words}" names a policy switch in words teach() does not recognise`);
    const taught = teach("policy_denied", words, 500);
    assert.ok(taught.includes(`\`tabwarden policy set ${key}=`), `${path}: ${taught}`);
    assert.ok(taught.length <= 500);
  }
});

test("every switch in the table is a policy key; its control is a button on the options page; passwords name the alternative", () => {
  for (const [key, entry] of Object.entries(SWITCH_REFUSALS)) {
    assert.ok(Object.hasOwn(POLICY_WORDS, key), key);
    const words = turnOnWords(key);
    assert.match(words, new RegExp(`\`tabwarden policy set ${key}=${JSON.stringify(entry.value)}\``), key);
    if (entry.control !== undefined) {
      assert.ok(OPTIONS.includes(`>${entry.control}</button>`), `${key}: no button "${entry.control}" in options.html`);
      assert.ok(words.includes(`the "${entry.control}" button for "${POLICY_WORDS[key]}" on the extension's options page`), key);
    }
  }
  assert.match(turnOnWords("passwordFill"), /ask the person to sign in themselves/);
});

test("teach: once, within the limit, the way out never cut; other codes and guards as they are", () => {
  const pw = "refused to fill a password field (the policy's passwordFill is off)";
  const taught = teach("policy_denied", pw, 500);
  assert.ok(taught.startsWith(pw) && taught.includes("`tabwarden policy set passwordFill=true`"));
  assert.equal(teach("policy_denied", taught, 500), taught, "already taught: kept");
  const long = teach("policy_denied", `${"x".repeat(600)} (the policy's passwordFill is off)`, 500);
  assert.ok(long.length <= 500 && long.endsWith(turnOnWords("passwordFill")));
  assert.equal(teach("bad_request", pw, 500), pw);
  assert.equal(teach("policy_denied", "the element changed after it was confirmed; try again", 500), "the element changed after it was confirmed; try again");
  assert.equal(switchOf("the policy's madeUp is off"), null);
});

test("dispatch: a handler's policy_denied because a switch is off leaves naming the key and the command", async () => {
  const d = createDispatcher([["x_fill", () => { throw new BridgeError("policy_denied", "refused to fill a password field (the policy's passwordFill is off)"); }]], { log: fakeLog() });
  const reply = await d.dispatch({ type: "request", id: "r1", action: "x_fill", args: {}, session: "s1", policy: {} });
  assert.equal(reply.error.code, "policy_denied");
  assert.match(reply.error.message, /passwordFill is off.*`tabwarden policy set passwordFill=true` at a terminal.*sign in themselves/);
});
