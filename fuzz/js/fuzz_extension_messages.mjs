// Invariant: every message the extension's service worker validates — a host `request` (dispatch.js validateRequest and the Map dispatcher), a confirm page's runtime message (confirm-window.js's messages behind message-router.js's confirm tier), an options page's policy or pairing message (policy-relay.js, validDetail, pairing.js), a popup message (popup-relay.js), each through message-router.js — never throws and is accepted exactly when an independent model of its documented shape accepts it: no handler runs for an action the Map lacks ("constructor", "__proto__"), no reply carries an unexpected exception's text, no answer or host call is made for an untrusted sender or a malformed message, and no host key is pinned that the host did not prove; and chunking.js chunkReply always rejoins to its input in slices within the byte budget, never splitting a surrogate pair.
//
// fuzz_extension_messages.mjs — a seeded structure-aware mutator (no dependencies): valid seed
// messages for each target are bent (fields dropped, retyped, renamed, swapped for edge values)
// and fed to the extension's pure modules (worker/, shared/). Run by `python -m fuzz.run` (as
// fuzz_extension_messages) or directly:
//   node fuzz/js/fuzz_extension_messages.mjs --runs 100000 --seed 1 [--seconds S] [--replay FILE]
// Prints "ok <n> runs" and exits 0, or prints the failing target and input (JSON, also written
// to --artifact FILE) and exits 1.

import { nonEmpty, plain, runTargets } from "./mutator.mjs";
import { chunkReply, utf8Length } from "../../extension/worker/chunking.js";
import { canonicalJson } from "../../extension/shared/canonical-json.js";
import { confirmWindowMessages } from "../../extension/shared/confirm-window.js";
import { MESSAGE_TABLE, createMessageRouter, senderTier } from "../../extension/worker/message-router.js";
import { createDispatcher, validateRequest } from "../../extension/worker/dispatch.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { CODE } from "../../extension/shared/error-codes.js";
import { TAP_ACTIONS, createPolicyRelay, validDetail } from "../../extension/worker/policy-relay.js";
import { createPairing } from "../../extension/worker/pairing.js";
import { createPopupRelay } from "../../extension/worker/popup-relay.js";

const EXT = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const CONFIRM_URL = `chrome-extension://${EXT}/confirm.html`;
const OPTIONS_URL = `chrome-extension://${EXT}/options.html`;
const SECRET = "SECRET-must-not-leak-7f3a";

const EDGE = [
  null, true, false, 0, -1, 1.5, NaN, Infinity, 2 ** 53, "", " ", "x", "request", "reply", "allow", "deny",
  "constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "tab_list", "unkill", "policy.widen",
  "pair_client", "\ud800", "\u0000", "a".repeat(200), "a".repeat(201), "é".repeat(70000), [], [1, "a"], {},
  { __proto__: null }, JSON.parse('{"__proto__": {"x": 1}}'), new Date(0), Object.create({ inherited: 1 }),
];
const KEYS = ["type", "id", "action", "args", "session", "policy", "decision", "detail", "challengeId", "response", "key", "value", "label", "limit", "__proto__", "constructor", "x"];

// --- the models ---------------------------------------------------------------------------------

/** docs/protocol.md's `request`, written out again. */
function modelRequest(m) {
  return plain(m) && nonEmpty(m.id) && m.type === "request" && nonEmpty(m.action) && plain(m.args)
    && nonEmpty(m.session) && m.session.length <= 200 && plain(m.policy);
}

function check(cond, what) {
  if (!cond) throw new Error(`invariant broken: ${what}`);
}

const SELF = { extensionId: EXT, pageUrl: (page) => `chrome-extension://${EXT}/${page}` };

/** The worker's one door (worker/message-router.js) over `handlers`: the table's rows for them. */
function routed(handlers) {
  const handling = new Map(handlers);
  const router = createMessageRouter({ ...SELF, handlers: handling, table: new Map([...MESSAGE_TABLE].filter(([t]) => handling.has(t))) });
  return (msg, sender) => router.route(msg, sender);
}

// --- targets ------------------------------------------------------------------------------------

const ROUTES = new Map([
  ["tab_list", (args) => ({ tabs: [], echo: Object.keys(args).length })],
  ["page_text", () => { throw new Error(SECRET); }],
  ["page_click", () => { throw new BridgeError(CODE.CONFIRM_DENIED, "denied"); }],
  ["page_eval", () => 42],
]);
const silent = { warn: () => {} };
const dispatcher = createDispatcher(ROUTES, { log: silent });

async function targetRequest(msg) {
  const checked = validateRequest(msg);
  check(checked.ok === modelRequest(msg), `validateRequest says ${checked.ok}`);
  if (checked.ok) {
    for (const k of ["id", "action", "args", "session"]) check(checked.request[k] === msg[k], `request.${k} copied`);
    // The policy is read once at the door (worker/policy.js): frozen, approving only what it lists.
    const { policy } = checked.request;
    check(Object.isFrozen(policy) && Object.isFrozen(policy.approvedOrigins), "request.policy read once, frozen");
    const listed = Object.hasOwn(msg.policy, "origins") && Array.isArray(msg.policy.origins) ? msg.policy.origins : [];
    check(policy.approvedOrigins.length <= listed.length, "request.policy approves only listed origins");
  }
  const reply = await dispatcher.dispatch(msg);
  const id = plain(msg) && nonEmpty(msg.id) ? msg.id : null;
  if (id === null) {
    check(reply === null, "a message without an id is dropped");
    return;
  }
  check(plain(reply) && reply.type === "reply" && reply.id === id, "reply names the request's id");
  check(!JSON.stringify(reply).includes(SECRET), "an unexpected exception's text leaked into a reply");
  if (reply.ok) {
    check(checked.ok && ROUTES.has(msg.action) && plain(reply.result), "ok only for a routed, valid request");
  } else {
    check(typeof reply.error?.code === "string" && typeof reply.error?.message === "string", "error shape");
    if (checked.ok && !ROUTES.has(msg.action)) check(reply.error.code === CODE.UNKNOWN_ACTION, "unknown action code");
    if (!checked.ok) check(reply.error.code === CODE.BAD_REQUEST, "bad request code");
  }
}

function fakeBroker(pendingPresence) {
  const answers = [];
  return {
    answers,
    details: (id) => (id === "c1" ? { id, kind: "action", tool: "page_click", origin: "", detail: "", pattern: null, presence: pendingPresence ? { action: "confirm.eval", detail: "x" } : null } : null),
    answer: (id, decision, opts) => {
      answers.push([id, decision, opts]);
      return id === "c1";
    },
  };
}

function modelTrusted(sender, id) {
  if (!plain(sender) || sender.id !== EXT || typeof sender.url !== "string" || !nonEmpty(id)) return false;
  const base = sender.url.split(/[?#]/, 1)[0];
  if (base !== CONFIRM_URL) return false;
  try {
    return new URL(sender.url).searchParams.get("id") === id;
  } catch {
    return false;
  }
}

async function targetConfirm(input) {
  const { msg, sender, presence } = plain(input) ? input : { msg: input, sender: undefined, presence: false };
  const broker = fakeBroker(presence === true);
  const from = senderTier(plain(sender) ? sender : undefined, SELF);
  const id = plain(msg) ? msg.id : undefined;
  const trusted = from.tier === "confirm" && nonEmpty(id) && id === from.confirmationId;
  check(trusted === modelTrusted(sender, id), `the router's confirm tier says ${trusted}`);
  const out = routed(confirmWindowMessages(broker))(msg, plain(sender) ? sender : undefined);
  const ours = plain(msg) && (msg.type === "confirm_details" || msg.type === "confirm_answer");
  if (!ours) {
    check(out === undefined && broker.answers.length === 0, "not a confirm message: ignored");
    return;
  }
  check(plain(out) && typeof out.ok === "boolean", "answer shape");
  if (!trusted) check(!out.ok && broker.answers.length === 0, "untrusted sender: refused, nothing answered");
  for (const [id, decision, opts] of broker.answers) {
    check(id === msg.id, "answered only its own id");
    if (decision === "allow") check(msg.decision === "allow" && presence !== true, "allow only from an allow click, never for presence");
    if (opts?.keepWindow === true) check(decision === "deny" && msg.keepWindow === true, "a window is kept only for a deny that asked");
  }
  if (out.ok && msg.type === "confirm_details") check(out.details?.id === msg.id, "details for its own id");
}

function modelDetail(action, detail) {
  if (typeof detail !== "string") return false;
  if (action === "unkill") return detail === "";
  if (action !== "policy.widen" && action !== "pair_client") return false;
  let value;
  try {
    value = JSON.parse(detail);
  } catch {
    return false;
  }
  if (!plain(value) || Object.keys(value).length === 0 || detail.length > 64 * 1024) return false;
  try {
    if (canonicalJson(value) !== detail) return false;
  } catch {
    return false;
  }
  if (action === "pair_client") {
    return Object.keys(value).sort().join(",") === "exe,label,sha256" && Object.values(value).every(nonEmpty);
  }
  return true;
}

async function targetPolicy(input) {
  const { msg, sender } = plain(input) ? input : { msg: input, sender: undefined };
  const calls = [];
  const relay = createPolicyRelay({
    hostCall: async (action, args) => {
      calls.push([action, args]);
      if (action === "presence_begin") return { challengeId: "ch1", options: {} };
      if (action === "policy_get") return { policy: {}, killed: false };
      return { done: true };
    },
  });
  const route = routed(relay.messages);
  // A begun tap first, so presence_complete has something to match (or not).
  await route({ type: "presence_begin", action: "unkill", detail: "" }, { id: EXT, url: OPTIONS_URL });
  calls.length = 0;
  const out = route(msg, plain(sender) ? sender : undefined);
  const types = ["policy_get", "presence_begin", "presence_complete", "policy_restrict", "kill", "clients_recent", "client_revoke", "audit_tail"];
  if (!(plain(msg) && types.includes(msg.type))) {
    check(out === undefined, "not a policy message: ignored");
    return;
  }
  const answer = await out;
  check(plain(answer) && typeof answer.ok === "boolean", "answer shape");
  const trusted = plain(sender) && sender.id === EXT && typeof sender.url === "string" && sender.url.split(/[?#]/, 1)[0] === OPTIONS_URL;
  if (!trusted) check(!answer.ok && answer.code === CODE.BAD_REQUEST && calls.length === 0, "untrusted sender: no host call");
  for (const [action, args] of calls) {
    if (action === "presence_begin") check(TAP_ACTIONS.includes(args.action) && modelDetail(args.action, args.detail), "begin only a valid tap");
    if (action === "presence_complete") check(args.challengeId === "ch1" && args.action === "unkill" && args.detail === "", "complete only the begun tap");
    if (action === "policy_restrict") check(nonEmpty(args.key) && args.key.length <= 64 && args.value !== undefined, "restrict shape");
    if (action === "client_revoke") check(/^[a-z0-9][a-z0-9_-]{0,31}$/.test(args.label), "revoke label");
  }
  if (plain(msg)) check(validDetail(msg.action, msg.detail) === modelDetail(msg.action, msg.detail), "validDetail agrees");
}

function trustedPage(sender, url) {
  return plain(sender) && sender.id === EXT && typeof sender.url === "string" && sender.url.split(/[?#]/, 1)[0] === url;
}

/** The host here cannot prove it holds any key: whatever the page sends, nothing may be pinned. */
async function targetPairing(input) {
  const { msg, sender } = plain(input) ? input : { msg: input, sender: undefined };
  const calls = [];
  const pinned = [];
  const pairing = createPairing({
    hostCall: async (action, args) => {
      calls.push([action, args]);
      if (action === "pair_begin") return { options: {}, hostKey: "AAAA", fingerprint: "SHA256:x", browser: "b", challengeId: "ch-p", approval: null };
      if (action === "pair_complete") return { credentialId: "cred" };
      if (action === "host_proof") return { signature: "AAAA" };
      return {};
    },
    gate: { snapshot: () => ({ state: "unpinned", loaded: true, pinned: null }), markPaired: (r) => pinned.push(r), setPinned: () => {}, onWelcome: () => {}, onClosed: () => {}, admit: async () => null },
    storageSet: async (key, value) => pinned.push([key, value]),
    subtle: globalThis.crypto.subtle,
    randomBytes: (n) => new Uint8Array(n).fill(7),
    nowMs: () => 0,
  });
  const route = routed(pairing.messages);
  await route({ type: "pair_begin", code: "tw-1" }, { id: EXT, url: OPTIONS_URL });
  calls.length = 0;
  const out = route(msg, plain(sender) ? sender : undefined);
  if (!(plain(msg) && ["options_status", "pair_begin", "pair_complete"].includes(msg.type))) {
    check(out === undefined, "not a pairing message: ignored");
    return;
  }
  const answer = await out;
  check(plain(answer) && typeof answer.ok === "boolean", "answer shape");
  check(pinned.length === 0, "pinned a host key the host never proved");
  if (!trustedPage(sender, OPTIONS_URL)) check(!answer.ok && calls.length === 0, "untrusted sender: no host call");
  for (const [action, args] of calls) {
    if (action === "pair_complete") check(args.challengeId === "ch-p", "complete only the begun pairing");
    if (action === "pair_begin") check(nonEmpty(args.code) && args.code.length <= 200, "begin with a code");
  }
}

async function targetPopup(input) {
  const { msg, sender } = plain(input) ? input : { msg: input, sender: undefined };
  const calls = [];
  const popupUrl = `chrome-extension://${EXT}/popup.html`;
  const relay = createPopupRelay({
    hostCall: async (action, args) => {
      calls.push([action, args]);
      return { killed: false };
    },
    sessionSnapshot: () => ({ phase: "ready", browser: "b" }),
    gateSnapshot: () => ({ state: "trusted" }),
    recent: async () => [],
  });
  const out = routed(relay.messages)(msg, plain(sender) ? sender : undefined);
  if (!(plain(msg) && (msg.type === "popup_status" || msg.type === "popup_kill"))) {
    check(out === undefined, "not a popup message: ignored");
    return;
  }
  const answer = await out;
  check(plain(answer) && typeof answer.ok === "boolean", "answer shape");
  if (!trustedPage(sender, popupUrl)) check(!answer.ok && calls.length === 0, "untrusted sender: no host call");
  for (const [action] of calls) check(action === "policy_get" || action === "kill", "the popup only reads or narrows");
}

async function targetChunks(input) {
  const text = plain(input) && typeof input.text === "string" ? input.text : JSON.stringify(input) ?? "";
  const limit = plain(input) && Number.isInteger(input.limit) && input.limit >= 4 && input.limit < 1e6 ? input.limit : 4 + (text.length % 13);
  const chunks = chunkReply("r1", text, limit);
  check(chunks.map((c) => c.data).join("") === text, "chunks rejoin to the text");
  chunks.forEach((c, i) => {
    check(c.type === "chunk" && c.id === "r1" && c.seq === i && c.total === chunks.length, "chunk header");
    check(utf8Length(c.data) <= limit, "chunk within the byte budget");
    const last = c.data.charCodeAt(c.data.length - 1);
    const next = i + 1 < chunks.length ? chunks[i + 1].data.charCodeAt(0) : NaN;
    check(!(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff), "a surrogate pair split");
  });
  check(utf8Length(text) === Buffer.byteLength(text.replace(/[\ud800-\udfff]/gu, "\ufffd"), "utf8") || /[\ud800-\udfff]/.test(text), "utf8Length");
}

const request = { type: "request", id: "r1", action: "tab_list", args: {}, session: "s1", policy: { origins: [] } };
const TARGETS = {
  request: {
    run: targetRequest,
    seeds: [request, { ...request, action: "page_text" }, { ...request, action: "page_click" }, { ...request, action: "page_eval" }, { ...request, action: "constructor" }],
  },
  confirm: {
    run: targetConfirm,
    seeds: [
      { msg: { type: "confirm_answer", id: "c1", decision: "allow" }, sender: { id: EXT, url: `${CONFIRM_URL}?id=c1` }, presence: false },
      { msg: { type: "confirm_answer", id: "c1", decision: "allow" }, sender: { id: EXT, url: `${CONFIRM_URL}?id=c1&mode=presence` }, presence: true },
      { msg: { type: "confirm_details", id: "c1" }, sender: { id: EXT, url: `${CONFIRM_URL}?id=c1` }, presence: false },
    ],
  },
  policy: {
    run: targetPolicy,
    seeds: [
      { msg: { type: "presence_begin", action: "policy.widen", detail: '{"eval":true}' }, sender: { id: EXT, url: OPTIONS_URL } },
      { msg: { type: "presence_begin", action: "pair_client", detail: '{"exe":"/bin/x","label":"c","sha256":"ab"}' }, sender: { id: EXT, url: OPTIONS_URL } },
      { msg: { type: "presence_complete", challengeId: "ch1", action: "unkill", detail: "", response: {} }, sender: { id: EXT, url: OPTIONS_URL } },
      { msg: { type: "policy_restrict", key: "origins", value: ["https://a.test"] }, sender: { id: EXT, url: `${OPTIONS_URL}#x` } },
      { msg: { type: "client_revoke", label: "claude" }, sender: { id: EXT, url: OPTIONS_URL } },
      { msg: { type: "audit_tail", limit: 1000 }, sender: { id: EXT, url: OPTIONS_URL } },
    ],
  },
  pairing: {
    run: targetPairing,
    seeds: [
      { msg: { type: "pair_complete", challengeId: "ch-p", response: {} }, sender: { id: EXT, url: OPTIONS_URL } },
      { msg: { type: "pair_complete", challengeId: "ch-p", windowOnly: true }, sender: { id: EXT, url: OPTIONS_URL } },
      { msg: { type: "pair_begin", code: " tw-2 " }, sender: { id: EXT, url: `${OPTIONS_URL}?x` } },
      { msg: { type: "options_status" }, sender: { id: EXT, url: OPTIONS_URL } },
    ],
  },
  popup: {
    run: targetPopup,
    seeds: [
      { msg: { type: "popup_status" }, sender: { id: EXT, url: `chrome-extension://${EXT}/popup.html` } },
      { msg: { type: "popup_kill" }, sender: { id: EXT, url: `chrome-extension://${EXT}/popup.html#k` } },
    ],
  },
  chunks: {
    run: targetChunks,
    seeds: [{ text: "\ud83d\ude00abc\u00e9\u2603", limit: 4 }, { text: '{"a":"\ud800x"}', limit: 5 }, { text: "", limit: 4 }],
  },
};

await runTargets(TARGETS, { edges: EDGE, keys: KEYS });
