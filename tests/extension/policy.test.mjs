import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_MAX_AGENT_TABS, NO_POLICY, POLICY_FLAGS, parsePolicy } from "../../extension/worker/policy.js";
import { isApproved } from "../../extension/shared/origin.js";

const EXT = fileURLToPath(new URL("../../extension/", import.meta.url));

/** What the narrowest policy answers, field by field (comparable with deepEqual). */
function answers(p) {
  return {
    approvedOrigins: [...p.approvedOrigins],
    confirmList: p.confirmList === null ? null : [...p.confirmList],
    flags: POLICY_FLAGS.filter((f) => p.allows(f)),
    confirmTimeoutMs: p.confirmTimeoutMs,
    clickGraceSeconds: p.clickGraceSeconds,
    provenance: p.provenance,
    maxAgentTabs: p.maxAgentTabs,
  };
}

const NARROWEST = {
  approvedOrigins: [], confirmList: null, flags: [], confirmTimeoutMs: 40_000, clickGraceSeconds: 0,
  provenance: "confirm", maxAgentTabs: DEFAULT_MAX_AGENT_TABS,
};

test("anything that is not a plain object reads as the narrowest policy: nothing approved, every action confirmed, flags off", () => {
  class Policyish { constructor() { this.origins = ["http://a.test"]; this.passwordFill = true; } }
  for (const raw of [undefined, null, [], [["origins", ["http://a.test"]]], "all", 5, true, new Map([["origins", ["http://a.test"]]]),
    new Policyish(), Object.create({ origins: ["http://a.test"], passwordFill: true })]) {
    const p = parsePolicy(raw);
    assert.deepEqual(answers(p), NARROWEST, String(raw));
    assert.equal(p.approves("http://a.test"), false);
    assert.equal(p.confirms("tab_close"), true, "an unreadable confirm list confirms everything");
  }
  assert.deepEqual(answers(NO_POLICY), NARROWEST);
  assert.deepEqual(DEFAULT_MAX_AGENT_TABS, 20);
});

test("a full, well-formed policy answers what it says", () => {
  const p = parsePolicy({
    origins: ["http://127.0.0.1:8000", "https://Example.COM:443"], confirm: ["submit", "tab_close"],
    eval: true, upload: false, passwordFill: true, clickGraceSeconds: 30, confirmTimeoutSeconds: 90,
    presenceConfirm: false, closeTabsOnSessionEnd: true, maxAgentTabs: 5, dialogArming: true,
    pageFetch: false, consoleCapture: true, networkCapture: false, provenance: "strict",
  });
  assert.deepEqual(answers(p), {
    approvedOrigins: ["http://127.0.0.1:8000", "https://example.com"], confirmList: ["submit", "tab_close"],
    flags: ["eval", "passwordFill", "closeTabsOnSessionEnd", "dialogArming", "consoleCapture"],
    confirmTimeoutMs: 90_000, clickGraceSeconds: 30, provenance: "strict", maxAgentTabs: 5,
  });
  assert.equal(p.approves("https://example.com"), true);
  assert.equal(p.approves("http://127.0.0.1:8000"), true);
  assert.equal(p.confirms("submit"), true);
  assert.equal(p.confirms("press"), false);
});

test("approves() is shared/origin.js isApproved over the raw list for exact entries, for every entry and candidate", () => {
  const lists = [
    ["http://a.test"], ["HTTP://A.TEST"], ["http://a.test/"], ["http://a.test:80"], ["http://a.test:8080"],
    ["https://a.test"], ["http://a.test", 5, null, {}, ["http://b.test"]], ["*"], ["http://a.test.evil.test"],
    ["http://user@a.test"], ["http://[::1]:8080"], ["http://bücher.example"], ["file:///etc"], ["chrome://settings"], [""], [],
  ];
  const candidates = ["http://a.test", "https://a.test", "http://a.test:8080", "http://b.test", "http://a.test.evil.test",
    "http://evil.test", "http://[::1]:8080", "http://xn--bcher-kva.example", "HTTP://A.TEST", "http://a.test/", null, "", "*"];
  for (const list of lists) {
    const p = parsePolicy({ origins: list });
    for (const o of candidates) assert.equal(p.approves(o), isApproved(o, list), `${JSON.stringify(list)} ${o}`);
  }
  // A subdomain approval (shared/approval.js; tests/extension/approval.test.mjs) is the one
  // non-exact form: a.test and the names below it, on that scheme and port.
  const wild = parsePolicy({ origins: ["http://*.a.test"] });
  assert.deepEqual(candidates.filter((o) => wild.approves(o)), ["http://a.test", "HTTP://A.TEST"]);
  assert.equal(wild.approves("http://x.a.test"), true);
  // Not a list: approves nothing, whatever it holds.
  for (const origins of ["http://a.test", { 0: "http://a.test", length: 1 }, new Set(["http://a.test"]), null, 1]) {
    assert.equal(parsePolicy({ origins }).approves("http://a.test"), false, String(origins));
    assert.deepEqual(parsePolicy({ origins }).approvedOrigins, []);
  }
});

test("flags are on only when exactly true; allows() knows only the policy's flags, never an inherited name", () => {
  for (const v of ["true", 1, {}, [], "yes", null, undefined, false, new Boolean(true)]) {
    const p = parsePolicy(Object.fromEntries(POLICY_FLAGS.map((f) => [f, v])));
    assert.deepEqual(POLICY_FLAGS.filter((f) => p.allows(f)), [], String(v));
  }
  const all = parsePolicy(Object.fromEntries(POLICY_FLAGS.map((f) => [f, true])));
  assert.deepEqual(POLICY_FLAGS.filter((f) => all.allows(f)), [...POLICY_FLAGS]);
  for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "origins", "confirm", "provenance", ""]) {
    assert.equal(parsePolicy({ [name]: true }).allows(name), false, name);
    assert.equal(all.allows(name), false, name);
  }
});

test("the confirm list: a list's string entries; anything else confirms every action", () => {
  assert.equal(parsePolicy({ confirm: [] }).confirms("submit"), false);
  assert.equal(parsePolicy({ confirm: [] }).confirms("constructor"), false);
  const mixed = parsePolicy({ confirm: ["submit", 5, null, { press: true }, ["press"], "submit"] });
  assert.deepEqual(mixed.confirmList, ["submit"]);
  assert.equal(mixed.confirms("submit"), true);
  assert.equal(mixed.confirms("press"), false);
  for (const confirm of [undefined, null, "submit", { submit: true }, 1, new Set(["submit"])]) {
    const p = parsePolicy({ confirm });
    assert.equal(p.confirmList, null);
    for (const a of ["submit", "press", "tab_close", "anything", "constructor"]) assert.equal(p.confirms(a), true, `${String(confirm)} ${a}`);
  }
});

test("timeouts, grace, provenance and the tab cap: the ranges trust/policy.py sets, else the narrow default", () => {
  const t = (v) => parsePolicy({ confirmTimeoutSeconds: v }).confirmTimeoutMs;
  assert.deepEqual([5, 30, 600, 7.5, 1, 0, -5, 10_000].map(t), [5_000, 30_000, 600_000, 7_500, 5_000, 5_000, 5_000, 600_000]);
  for (const v of [NaN, Infinity, -Infinity, "30", null, undefined, [30], {}]) assert.equal(t(v), 40_000, String(v));
  const g = (v) => parsePolicy({ clickGraceSeconds: v }).clickGraceSeconds;
  assert.deepEqual([30, 2.5, 600, 1e9].map(g), [30, 2.5, 600, 600]);
  for (const v of [0, -1, NaN, Infinity, "30", null, undefined, true]) assert.equal(g(v), 0, String(v));
  const m = (v) => parsePolicy({ provenance: v }).provenance;
  assert.deepEqual(["strict", "off", "confirm", "loose", "STRICT", "", null, 1, ["strict"]].map(m),
    ["strict", "off", "confirm", "confirm", "confirm", "confirm", "confirm", "confirm", "confirm"]);
  const cap = (v) => parsePolicy({ maxAgentTabs: v }).maxAgentTabs;
  assert.deepEqual([1, 5, 200].map(cap), [1, 5, 200]);
  for (const v of [0, 201, -1, 2.5, "5", NaN, null, undefined]) assert.equal(cap(v), 20, String(v));
});

test("deeply frozen: the object, its lists and its functions; a later change to the raw JSON changes nothing", () => {
  const raw = { origins: ["http://a.test"], confirm: ["submit"], passwordFill: true };
  const p = parsePolicy(raw);
  for (const part of [p, p.approvedOrigins, p.confirmList, p.approves, p.confirms, p.allows]) assert.ok(Object.isFrozen(part));
  // Modules are strict: a write throws, and the answers stay.
  assert.throws(() => { p.approvedOrigins.push("http://evil.test"); }, TypeError);
  assert.throws(() => { p.confirmTimeoutMs = 1; }, TypeError);
  assert.throws(() => { p.approves = () => true; }, TypeError);
  assert.throws(() => { p.allows.call = () => true; }, TypeError);
  raw.origins.push("http://evil.test");
  raw.confirm.length = 0;
  raw.passwordFill = false;
  assert.equal(p.approves("http://evil.test"), false);
  assert.equal(p.confirms("submit"), true);
  assert.equal(p.allows("passwordFill"), true);
});

test("hostile input: __proto__ keys, a polluted prototype, getters and null-prototype objects add nothing", () => {
  // JSON.parse makes "__proto__" an own key; it is not a policy key, and nothing it holds is read.
  const viaJson = parsePolicy(JSON.parse('{"__proto__": {"passwordFill": true, "origins": ["http://evil.test"], "confirm": []}}'));
  assert.deepEqual(answers(viaJson), NARROWEST);
  // A polluted Object.prototype: only the policy's own keys count.
  const keys = ["origins", "confirm", "passwordFill", "pageFetch", "confirmTimeoutSeconds", "clickGraceSeconds", "provenance", "maxAgentTabs"];
  try {
    Object.assign(Object.prototype, {
      origins: ["http://evil.test"], confirm: [], passwordFill: true, pageFetch: true, confirmTimeoutSeconds: 600,
      clickGraceSeconds: 600, provenance: "off", maxAgentTabs: 200,
    });
    assert.deepEqual(answers(parsePolicy({})), NARROWEST);
    assert.equal(parsePolicy({ origins: ["http://a.test"] }).approves("http://evil.test"), false);
  } finally {
    for (const k of keys) delete Object.prototype[k];
  }
  // A null-prototype object is a plain object: its own keys are read.
  const bare = Object.assign(Object.create(null), { origins: ["http://a.test"], pageFetch: true });
  assert.equal(parsePolicy(bare).approves("http://a.test"), true);
  assert.equal(parsePolicy(bare).allows("pageFetch"), true);
  // A getter is read once, when the policy is parsed: it cannot answer differently later.
  let reads = 0;
  const shifty = { get origins() { reads += 1; return reads === 1 ? ["http://a.test"] : ["http://evil.test"]; } };
  const p = parsePolicy(shifty);
  assert.equal(reads, 1);
  for (let i = 0; i < 3; i += 1) {
    assert.equal(p.approves("http://a.test"), true);
    assert.equal(p.approves("http://evil.test"), false);
  }
  assert.equal(reads, 1);
  // A list whose entries lie about what they are (objects with toString) approves nothing.
  const liar = { toString: () => "http://a.test" };
  assert.equal(parsePolicy({ origins: [liar] }).approves("http://a.test"), false);
  assert.equal(parsePolicy({ confirm: [liar] }).confirms("http://a.test"), false);
});

test("huge lists are read once, in full, and answer as isApproved would", () => {
  const many = Array.from({ length: 100_000 }, (_, i) => `http://h${i}.test`);
  const p = parsePolicy({ origins: [...many, "http://h0.test", 7, "not an origin"], confirm: many.map((_, i) => `a${i}`) });
  assert.equal(p.approvedOrigins.length, 100_000, "duplicates and invalid entries dropped");
  assert.equal(p.approves("http://h99999.test"), true);
  assert.equal(p.approves("http://h100000.test"), false);
  assert.equal(p.confirms("a99999"), true);
  assert.equal(p.confirms("a100000"), false);
  // A sparse list of a million holes approves nothing and confirms nothing.
  const holes = parsePolicy({ origins: new Array(1_000_000), confirm: new Array(1_000_000) });
  assert.deepEqual([holes.approvedOrigins.length, holes.confirmList?.length], [0, 0]);
});

// The raw JSON is read in worker/policy.js only. These patterns are the digs the handlers and
// worker modules used to make; none may come back anywhere else in the extension.
const RAW_DIGS = [
  /isPlainObject\(\s*(?:ctx\.)?policy\s*\)/,
  /\bpolicy\)?\??\.origins\b/,
  /\bpolicy\)?\??\.confirm\b(?!s|Timeout|List)/,
  /\bpolicy\)?\??\.confirmTimeoutSeconds\b/,
  /\bpolicy\)?\s*\??\.?\[/,
  new RegExp(`\\bpolicy\\)?\\??\\.(?:${POLICY_FLAGS.join("|")})\\b`),
];

/** Lines of `source` that dig into a raw policy (comments skipped). */
function rawDigs(source) {
  return source.split("\n").filter((line) => {
    const code = line.trim();
    if (code.startsWith("//") || code.startsWith("*") || code.startsWith("/*")) return false;
    return RAW_DIGS.some((re) => re.test(code));
  });
}

/**
 * Every .js file the service worker loads or the pages inject: background.js, worker/, handlers/,
 * shared/ and page/. Not ui/: the options page shows and edits the host's record itself (it
 * cannot load worker/ modules) and enforces nothing.
 */
function extensionSources() {
  const out = [join(EXT, "background.js")];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".js")) out.push(path);
    }
  };
  for (const room of ["worker", "handlers", "shared", "page"]) walk(join(EXT, room));
  return out;
}

test("no module but worker/policy.js reads the raw policy (the scan catches each old dig)", () => {
  for (const old of [
    "const approved = isPlainObject(ctx.policy) ? ctx.policy.origins : undefined;",
    "const origins = /** @type {any} */ (ctx.policy)?.origins;",
    "return isPlainObject(ctx.policy) && ctx.policy.passwordFill === true;",
    "const list = isPlainObject(ctx.policy) ? ctx.policy.confirm : undefined;",
    "const s = isPlainObject(policy) ? policy.confirmTimeoutSeconds : undefined;",
    "const on = (ctx, key) => ctx.policy[key] === true;",
    "dialogs.setArming(tabId, ctx?.policy?.dialogArming === true);",
    "await navBlock.policy(policy.origins);",
  ]) assert.equal(rawDigs(old).length, 1, old);
  for (const fine of ["ctx.policy.approves(o)", "ctx.policy.confirms(\"submit\")", "ctx.policy.confirmTimeoutMs",
    "ctx.policy.allows(\"passwordFill\")", "policy.approvedOrigins", "// was isPlainObject(ctx.policy)"]) {
    assert.deepEqual(rawDigs(fine), [], fine);
  }
  const sources = extensionSources();
  assert.ok(sources.length > 50 && sources.some((p) => p.endsWith(join("handlers", "interact.js"))), "the scan sees the extension");
  const found = sources.filter((path) => !path.endsWith(join("worker", "policy.js")))
    .flatMap((path) => rawDigs(readFileSync(path, "utf8")).map((line) => `${path.slice(EXT.length)}: ${line.trim()}`));
  assert.deepEqual(found, []);
});
