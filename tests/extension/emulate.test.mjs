// page_emulate: which overrides go together and that a zone and a locale are real ones
// (handlers/emulate.js emulateSettings), the commands an owned tab gets and none for a tab the
// session does not own, typed lineage checked against the tab's site, and every override ended
// when the session lets the tab go (worker/debugger.js release, EMULATION_CLEARS) before the
// debugger detaches.
import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { emulateHandlers, emulateSettings, knownTimezone } from "../../extension/handlers/emulate.js";
import { EMULATION_CLEARS, createDebuggerManager } from "../../extension/worker/debugger.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { argsRefusal } from "../../extension/worker/dispatch.js";
import { parsePolicy } from "../../extension/worker/policy.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";

const OK = "http://127.0.0.1:8000";
const S1 = { session: "s1", policy: parsePolicy({ origins: [OK], confirm: [] }) };
const SEEN = { userAgent: "Bot/1", locale: "de-DE", timezone: "Asia/Tokyo", colorScheme: "dark", geolocationPermission: "prompt" };

test("emulate settings: what goes together; an unknown zone or a malformed locale is named", () => {
  assert.deepEqual(emulateSettings({ userAgent: "Bot/1", colorScheme: "dark" }), { userAgent: "Bot/1", colorScheme: "dark" });
  assert.deepEqual(emulateSettings({ geolocation: { latitude: 48.85, longitude: 2.35 } }),
    { geolocation: { latitude: 48.85, longitude: 2.35, accuracy: 50 } });
  assert.equal(emulateSettings({ reset: true }), null);
  assert.ok(knownTimezone("Asia/Tokyo") && knownTimezone("UTC") && !knownTimezone("Mars/Olympus_Mons"));
  assert.deepEqual(emulateSettings({}), {}, "nothing given: a read");
  for (const [bad, words] of [[{ reset: true, colorScheme: "dark" }, /reset takes no other/],
    [{ timezone: "Mars/Olympus_Mons" }, /Mars\/Olympus_Mons.*IANA/], [{ locale: "de-DE-x-" }, /BCP 47/]]) {
    assert.throws(() => emulateSettings(bad), (e) => e instanceof BridgeError && e.code === "bad_request" && words.test(e.message), JSON.stringify(bad));
  }
  // Shapes and ranges are the wire schema's: refused before any handler runs.
  for (const bad of [{ geolocation: { latitude: 91, longitude: 0 } }, { geolocation: { latitude: 0, longitude: -181 } },
    { userAgent: "a\r\nCookie: x" }, { userAgent: "" }, { colorScheme: "sepia" }, { timezone: "../etc/passwd" }, { locale: "de_DE;" }]) {
    assert.notEqual(argsRefusal("page_emulate", { tabId: 1, ...bad }), null, JSON.stringify(bad));
  }
});

function harness() {
  const ownership = createOwnership();
  const timers = fakeTimers();
  const tabs = new Map();
  const sent = [];
  const marked = [];
  const checked = [];
  const browser = {
    getTab: async (id) => { const t = tabs.get(id); if (!t) throw new Error("No tab"); return { ...t }; },
    executeScriptArgs: async (tabId) => [{ result: { href: tabs.get(tabId).url, ...SEEN } }],
  };
  const cdp = {
    ensure: async () => {},
    emulating: (tabId) => { marked.push(tabId); },
    send: async (_ctx, tabId, method, params) => {
      sent.push([tabId, method, params]);
      if (method === "Emulation.setLocaleOverride" && params.locale === "zz-ZZ") throw new BridgeError("internal_error", "the debugger step failed: Invalid locale name");
      return {};
    },
  };
  const ensureOrigin = async (url, ctx) => {
    const o = url && new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const provenance = { check: async (args, _ctx, action, origin) => { checked.push([action, origin]); } };
  const routes = new Map(emulateHandlers(/** @type {any} */ ({
    browser, ownership, loads: createLoadWatcher(timers), ensureOrigin, confirm: async () => "deny", cdp, provenance,
  })));
  const open = (id, url, session = "s1") => { tabs.set(id, { id, url, windowId: 1 }); ownership.claim(session, id); };
  return { open, sent, marked, checked, tabs, call: (a, args, ctx = S1) => schemaChecked((n) => routes.get(n))(a, args, ctx) };
}

test("page_emulate: each override on the owned tab, then what the page sees; lineage checked for typed text", async () => {
  const h = harness();
  h.open(1, `${OK}/`);
  const r = await h.call("page_emulate", { tabId: 1, userAgent: "Bot/1", geolocation: { latitude: 48.85, longitude: 2.35, accuracy: 10 },
    colorScheme: "dark", locale: "de-DE", timezone: "Asia/Tokyo" });
  assert.deepEqual(r.page, SEEN);
  assert.deepEqual(h.marked, [1], "the manager knows before the first override");
  assert.deepEqual(h.sent.map(([, m, p]) => [m, p]), [
    ["Emulation.setUserAgentOverride", { userAgent: "Bot/1" }],
    ["Emulation.setGeolocationOverride", { latitude: 48.85, longitude: 2.35, accuracy: 10 }],
    ["Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: "dark" }] }],
    ["Emulation.setLocaleOverride", { locale: "de-DE" }],
    ["Emulation.setTimezoneOverride", { timezoneId: "Asia/Tokyo" }],
  ]);
  assert.deepEqual(h.checked, [["page_emulate", OK]]);
  h.sent.length = 0;
  // Nothing given: what the page is told now, and no command.
  const now = await h.call("page_emulate", { tabId: 1 });
  assert.deepEqual([now.emulating, now.page, h.sent], [null, SEEN, []]);
  assert.equal((await h.call("page_emulate", { tabId: 1, reset: true })).emulating, null);
  assert.deepEqual(h.sent.map(([, m]) => m), EMULATION_CLEARS.map(([m]) => m));
  // A locale Chrome does not have: the caller's mistake, named.
  await assert.rejects(h.call("page_emulate", { tabId: 1, locale: "zz-ZZ" }), (e) => e.code === "bad_request" && /zz-ZZ/.test(e.message));
});

test("page_emulate: a tab the session does not own, or not on an approved site, gets nothing", async () => {
  const h = harness();
  h.open(2, `${OK}/theirs`, "s2");
  h.open(3, "https://evil.test/");
  h.tabs.set(4, { id: 4, url: `${OK}/person`, windowId: 1 }); // the person's own tab: nobody's
  await assert.rejects(h.call("page_emulate", { tabId: 2, timezone: "Asia/Tokyo" }), (e) => e.code === "tab_not_owned");
  await assert.rejects(h.call("page_emulate", { tabId: 4, userAgent: "Bot/1" }), (e) => e.code === "tab_not_owned");
  await assert.rejects(h.call("page_emulate", { tabId: 3, colorScheme: "dark" }), (e) => e.code === "origin_not_approved");
  assert.deepEqual([h.sent, h.marked], [[], []], "nothing sent, nothing marked");
});

test("debugger: release ends every override page_emulate set, before it detaches; a tab without one is only detached", async () => {
  const calls = [];
  const owners = new Map([[1, "s1"], [2, "s1"]]);
  const api = {
    attach: async (tabId) => { calls.push([tabId, "attach"]); },
    detach: async (tabId) => { calls.push([tabId, "detach"]); },
    send: async (tabId, method) => { calls.push([tabId, method]); return {}; },
  };
  const dialogs = { removed() {}, forget() {}, navigated() {} };
  const step = (_ctx, _what, work) => work;
  const manager = createDebuggerManager({ api, owned: (id) => owners.has(id), dialogs, step, log: { warn() {} } });
  await manager.ensure(S1, 1);
  await manager.ensure(S1, 2);
  manager.emulating(1);
  manager.emulating(7); // not owned: never marked
  calls.length = 0;
  owners.clear(); // the session ended
  manager.release(1);
  manager.release(2);
  // release detaches once the attachment's promise settles: turn the event loop until both did.
  const detached = (id) => calls.some(([t, m]) => t === id && m === "detach");
  for (let turn = 0; turn < 1000 && !(detached(1) && detached(2)); turn++) await new Promise((resolve) => setImmediate(resolve));
  const of = (id) => calls.filter(([t]) => t === id).map(([, m]) => m);
  assert.deepEqual(of(1), [...EMULATION_CLEARS.map(([m]) => m), "detach"]);
  assert.deepEqual(of(2), ["detach"]);
  assert.deepEqual(of(7), []);
});
