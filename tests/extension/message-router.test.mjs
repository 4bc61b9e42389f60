import { test } from "node:test";
import assert from "node:assert/strict";
import { MESSAGE_TABLE, TIER, TIER_PAGES, createMessageRouter, senderTier } from "../../extension/worker/message-router.js";
import { createAgentTabsRelay } from "../../extension/worker/agent-tabs-relay.js";
import { createPairing } from "../../extension/worker/pairing.js";
import { createPolicyRelay } from "../../extension/worker/policy-relay.js";
import { createPopupRelay } from "../../extension/worker/popup-relay.js";
import { confirmWindowMessages } from "../../extension/shared/confirm-window.js";
import { createPresenceConfirm } from "../../extension/shared/presence-confirm.js";
import { createConfirmBroker } from "../../extension/worker/confirm-broker.js";
import { createErrorReporter, pageErrorMessages } from "../../extension/worker/error-report.js";
import { fakeTimers } from "./helpers/fakes.mjs";

const EXT = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const OTHER = "abcdefghijklmnopabcdefghijklmnop";
const url = (page, id = EXT) => `chrome-extension://${id}/${page}`;
const SELF = { extensionId: EXT, pageUrl: (page) => url(page) };
const CONFIRMATION = "c-7";

/** A sender from `tier`'s own page (the confirm window showing CONFIRMATION). */
const fromTier = (tier) => ({ id: EXT, url: tier === TIER.CONFIRM ? `${url(TIER_PAGES[tier])}?id=${CONFIRMATION}` : url(TIER_PAGES[tier]) });

/** Senders that are none of our pages: each must be refused whatever the type. */
const STRANGERS = {
  "another extension's options page": { id: OTHER, url: url("options.html", OTHER) },
  "another extension claiming our page's URL": { id: OTHER, url: url("options.html") },
  "a content script (our id, a web page's URL)": { id: EXT, url: "https://evil.test/options.html", tab: { id: 3 }, frameId: 0 },
  "a content script on a page named like ours": { id: EXT, url: "https://evil.test/chrome-extension:/jlmldlloenidkbhnlcdhogbbeefcjhmf/popup.html", tab: { id: 3 } },
  "a web page (no extension id)": { url: url("options.html"), tab: { id: 4 } },
  "a lookalike path (suffix)": { id: EXT, url: `${url("options.html")}.evil` },
  "a lookalike path (folder)": { id: EXT, url: url("ui/options.html") },
  "a lookalike path (double slash)": { id: EXT, url: `chrome-extension://${EXT}//options.html` },
  "a lookalike path (case)": { id: EXT, url: url("Options.html") },
  "a lookalike path (encoded)": { id: EXT, url: url("options%2ehtml") },
  "a lookalike path (popup prefix)": { id: EXT, url: url("popup.html.html") },
  "another page of ours (the background page)": { id: EXT, url: url("background.js") },
  "the service worker itself (no URL)": { id: EXT },
  "no sender": undefined,
  "a sender that is not an object": "options.html",
};

/** Spies for every type of the table, each recording what it was called with. */
function spies() {
  const calls = [];
  const handlers = [...MESSAGE_TABLE.keys()].map((type) => [type, (msg) => {
    calls.push(msg.type);
    return MESSAGE_TABLE.get(type).sync ? { ok: true, routed: type } : Promise.resolve({ ok: true, routed: type });
  }]);
  return { calls, router: createMessageRouter({ ...SELF, handlers }) };
}

/** The refusal each type answered before the router existed. */
const refusalOf = (type) => (type === "confirm_details" || type === "confirm_answer" ? { ok: false } : { ok: false, code: "bad_request" });

test("the table: every type names its tiers; the confirm window's own messages answer at once", () => {
  const byTier = (tier) => [...MESSAGE_TABLE].filter(([, r]) => r.tiers.includes(tier)).map(([t]) => t).sort();
  assert.deepEqual(byTier(TIER.POPUP), ["agent_tabs_close", "agent_tabs_close_orphan", "agent_tabs_close_orphans", "agent_tabs_list", "page_error", "popup_kill", "popup_status"]);
  assert.deepEqual(byTier(TIER.CONFIRM), ["confirm_answer", "confirm_details", "confirm_presence_begin", "confirm_presence_complete", "page_error"]);
  assert.deepEqual(byTier(TIER.OPTIONS), ["agent_tabs_close", "agent_tabs_close_orphan", "agent_tabs_close_orphans", "agent_tabs_list",
    "audit_tail", "client_revoke", "clients_recent", "kill", "options_status", "page_error", "pair_begin", "pair_complete", "policy_get",
    "policy_restrict", "presence_begin", "presence_complete"]);
  assert.deepEqual([...MESSAGE_TABLE].filter(([, r]) => r.sync).map(([t]) => t).sort(), ["confirm_answer", "confirm_details"]);
  for (const [type, r] of MESSAGE_TABLE) {
    assert.ok(r.tiers.length > 0, type);
    assert.ok(Object.isFrozen(r) && Object.isFrozen(r.tiers), type);
  }
});

test("the relays the worker wires answer exactly the table's types: none missing, none unlisted", () => {
  const broker = createConfirmBroker({ ...fakeTimers(), newId: () => "x" });
  const hostCall = async () => ({});
  const relays = [
    createPairing({ hostCall, gate: { snapshot: () => ({ state: "unpinned", pinned: null }) }, storageSet: async () => {}, subtle: {}, randomBytes: () => new Uint8Array(0), nowMs: () => 0 }).messages,
    createPolicyRelay({ hostCall }).messages,
    createPopupRelay({ hostCall, sessionSnapshot: () => ({ phase: "ready" }), gateSnapshot: () => ({ state: "trusted" }), recent: async () => [] }).messages,
    createAgentTabsRelay({ lifecycle: { list: async () => [], closeOrphan: async () => false, closeOrphans: async () => 0, closeAgentTab: async () => false } }).messages,
    createPresenceConfirm({ broker, hostCall }).messages,
    confirmWindowMessages(broker),
    pageErrorMessages(createErrorReporter({ hostCall, now: () => 0 })),
  ];
  const types = relays.flatMap((m) => [...m.keys()]);
  assert.equal(new Set(types).size, types.length, "no type is answered twice");
  assert.deepEqual(types.sort(), [...MESSAGE_TABLE.keys()].sort());
  const router = createMessageRouter({ ...SELF, handlers: relays.flatMap((m) => [...m]) });
  for (const type of MESSAGE_TABLE.keys()) assert.ok(router.has(type), type);
});

test("every type from every stranger is refused with the old refusal, and no relay runs", async () => {
  for (const type of MESSAGE_TABLE.keys()) {
    for (const [who, sender] of Object.entries(STRANGERS)) {
      const { calls, router } = spies();
      const answer = router.route({ type, id: CONFIRMATION, tabId: 1, code: "123", label: "claude" }, sender);
      assert.equal(typeof answer?.then === "function", !MESSAGE_TABLE.get(type).sync, `${type} from ${who}: sync as before`);
      assert.deepEqual(await answer, refusalOf(type), `${type} from ${who}`);
      assert.deepEqual(calls, [], `${type} from ${who}: no relay ran`);
    }
  }
});

test("every type from each of our pages its row does not list is refused; from a listed page it routes", async () => {
  for (const [type, row] of MESSAGE_TABLE) {
    for (const tier of Object.values(TIER)) {
      const { calls, router } = spies();
      const answer = await router.route({ type, id: CONFIRMATION }, fromTier(tier));
      if (row.tiers.includes(tier)) {
        assert.deepEqual(answer, { ok: true, routed: type }, `${type} from the ${tier} page`);
        assert.deepEqual(calls, [type]);
      } else {
        assert.deepEqual(answer, refusalOf(type), `${type} from the ${tier} page`);
        assert.deepEqual(calls, [], `${type} from the ${tier} page: no relay ran`);
      }
    }
  }
  // The popup asking for an options-only message, by name (the case the relays each checked).
  const { calls, router } = spies();
  for (const type of ["policy_restrict", "kill", "pair_begin", "presence_complete", "client_revoke"]) {
    assert.deepEqual(await router.route({ type }, fromTier(TIER.POPUP)), { ok: false, code: "bad_request" }, type);
  }
  assert.deepEqual(calls, []);
});

test("a page's query or fragment does not change its tier; the confirm window speaks only of its own confirmation", async () => {
  const { calls, router } = spies();
  assert.deepEqual(await router.route({ type: "policy_get" }, { id: EXT, url: `${url("options.html")}?tab=policy#x` }), { ok: true, routed: "policy_get" });
  assert.deepEqual(await router.route({ type: "popup_kill" }, { id: EXT, url: `${url("popup.html")}#k` }), { ok: true, routed: "popup_kill" });
  calls.length = 0;
  const page = (q) => ({ id: EXT, url: `${url("confirm.html")}${q}` });
  for (const [msg, sender] of [
    [{ type: "confirm_answer", id: "c-8", decision: "allow" }, page("?id=c-7")], // another confirmation's window
    [{ type: "confirm_answer", decision: "allow" }, page("?id=c-7")], // no id
    [{ type: "confirm_answer", id: "", decision: "allow" }, page("?id=")],
    [{ type: "confirm_answer", id: 7, decision: "allow" }, page("?id=7")],
    [{ type: "confirm_details", id: "c-7" }, page("")], // a window naming nothing
    [{ type: "confirm_details", id: "c-7" }, page("#id=c-7")],
    [{ type: "confirm_presence_begin", id: "c-7" }, page("?id=c-8&id=c-7")], // the first id is the window's
  ]) {
    const want = msg.type === "confirm_presence_begin" ? { ok: false, code: "bad_request" } : { ok: false };
    assert.deepEqual(await router.route(msg, sender), want, `${JSON.stringify(msg)} ${sender.url}`);
  }
  assert.deepEqual(calls, []);
  assert.deepEqual(router.route({ type: "confirm_details", id: "c-7" }, page("?id=c-7&mode=presence")), { ok: true, routed: "confirm_details" });
  assert.deepEqual(calls, ["confirm_details"]);
});

test("what is not a table type is not answered at all: inherited names, malformed messages", () => {
  const { calls, router } = spies();
  for (const msg of [null, undefined, "policy_get", 5, [], { type: 5 }, {}, { type: "constructor" }, { type: "__proto__" },
    { type: "toString" }, { type: "hasOwnProperty" }, { type: "tabwarden_changed" }, { type: "request" }, { type: "POLICY_GET" },
    Object.assign(Object.create({ type: "policy_get" }), {})]) {
    assert.equal(router.route(msg, fromTier(TIER.OPTIONS)), undefined, JSON.stringify(msg));
  }
  assert.deepEqual(calls, []);
});

test("a router missing a handler, or handed a type the table does not list, does not start", () => {
  const all = [...MESSAGE_TABLE.keys()].map((type) => [type, () => ({})]);
  assert.throws(() => createMessageRouter({ ...SELF, handlers: all.slice(1) }), /has no handler/);
  assert.throws(() => createMessageRouter({ ...SELF, handlers: [...all, ["page_eval", () => ({})]] }), /no row in the table/);
  assert.throws(() => createMessageRouter({ ...SELF, handlers: [...all.slice(1), [all[0][0], "not a function"]] }), /no handler function/);
});

test("senderTier: this extension's id and the page's own URL, nothing else", () => {
  assert.deepEqual(senderTier(fromTier(TIER.OPTIONS), SELF), { tier: "options", confirmationId: null });
  assert.deepEqual(senderTier(fromTier(TIER.POPUP), SELF), { tier: "popup", confirmationId: null });
  assert.deepEqual(senderTier(fromTier(TIER.CONFIRM), SELF), { tier: "confirm", confirmationId: CONFIRMATION });
  for (const [who, sender] of Object.entries(STRANGERS)) assert.equal(senderTier(sender, SELF).tier, null, who);
  assert.equal(senderTier(fromTier(TIER.OPTIONS), { ...SELF, extensionId: "" }).tier, null, "an unknown own id trusts nobody");
  assert.equal(senderTier({ id: undefined, url: url("options.html") }, { ...SELF, extensionId: undefined }).tier, null);
  assert.equal(senderTier(fromTier(TIER.OPTIONS), { ...SELF, pageUrl: () => "" }).tier, null, "no page URL: no tier");
});
