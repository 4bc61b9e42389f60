// An enrolled browser is never downgraded to the window: the real origin gate → confirm broker
// and window (presence mode) → the real confirm page tapping through the worker's presence relay
// → a fake host (origin_decide / presence_begin / presence_complete). The host decides click or
// tap and names the exact detail; the gate never composes it. Not enrolled: the click and
// `grant` flow.

import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { canonicalJson } from "../../extension/shared/canonical-json.js";
import { createConfirmBroker } from "../../extension/worker/confirm-broker.js";
import { confirmWindowMessages, createConfirmer } from "../../extension/shared/confirm-window.js";
import { INPUT_DELAY_MS, runConfirmPage } from "../../extension/ui/confirm-page.js";
import { createOriginGate } from "../../extension/worker/origin-gate.js";
import { createPresenceConfirm } from "../../extension/shared/presence-confirm.js";
import { fakeConfirmDoc, fakeLog, fakeTimers, testClock, pageRouter } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const EXT_ID = "jlmldlloenidkbhnlcdhogbbeefcjhmf";
const PAGE = `chrome-extension://${EXT_ID}/confirm.html`;
const OLD = "https://old.test";
const NEW = "http://127.0.0.1:8000";
const CTX = { session: "s1", policy: parsePolicy({ origins: [OLD], confirmTimeoutSeconds: 30 }) };

/**
 * @param {{enrolled?: boolean | (() => never), hostOrigins?: string[], permission?: boolean,
 *   press?: "tap" | "allow", host?: (action: string, args: object) => any}} opts
 */
function harness({ enrolled = true, hostOrigins = [OLD], permission = true, press = "tap", host } = {}) {
  const timers = fakeTimers();
  let n = 0;
  const broker = createConfirmBroker({ ...timers, newId: () => `c${++n}` });
  const hostCalls = [];
  const grants = [];
  const requested = [];
  const granted = new Set();
  const hostCall = async (action, args) => {
    hostCalls.push([action, structuredClone(args)]);
    if (host) {
      const r = host(action, args);
      if (r !== undefined) return r;
    }
    if (action === "origin_decide") {
      if (typeof enrolled === "function") return enrolled();
      const origin = args.origin;
      if (hostOrigins.includes(origin)) return { origin, ask: "none" };
      if (!enrolled) return { origin, ask: "click" };
      return { origin, ask: "tap", action: "policy.widen", detail: canonicalJson({ origins: [...hostOrigins, origin] }) };
    }
    if (action === "presence_begin") return { challengeId: `ch${hostCalls.length}`, options: { publicKey: { challenge: "AAAA" } } };
    if (action === "presence_complete") return { done: true, epoch: 3 };
    throw new BridgeError("bad_request", "unexpected");
  };
  const relay = createPresenceConfirm({ broker, hostCall });
  const windows = [];
  const pages = [];
  const route = async (msg, url) => {
    const sender = { id: EXT_ID, url: `chrome-extension://${EXT_ID}/${url}` };
    return pageRouter(EXT_ID, [...relay.messages, ...confirmWindowMessages(broker)])(msg, sender);
  };
  const openPage = async (url) => {
    const doc = fakeConfirmDoc();
    const api = {
      sendMessage: (m) => route(structuredClone(m), url),
      requestPermission: async (p) => { requested.push(p); if (permission) granted.add(p); return permission; },
      getAssertion: async () => ({ id: "cred", response: { signature: "sig" } }),
    };
    const clock = testClock();
    await runConfirmPage({ doc, search: url.slice(url.indexOf("?")), api, clock });
    clock.advance(INPUT_DELAY_MS); // the input delay, then the person's click
    pages.push(doc);
    doc.el(press).click();
  };
  const confirm = createConfirmer({
    broker,
    windows: {
      createWindow: async (opts) => {
        windows.push(opts.url);
        setImmediate(() => openPage(opts.url));
        return { id: 100 + windows.length };
      },
      removeWindow: async () => {},
    },
    log: fakeLog(),
  });
  const gate = createOriginGate({
    confirm,
    permissionsContains: async (p) => granted.has(p),
    requestGrant: async (origin) => { grants.push(origin); },
    decide: (origin) => hostCall("origin_decide", { origin }),
    log: fakeLog(),
  });
  return { gate, hostCalls, grants, requested, windows, pages, broker };
}

test("enrolled: a new origin is approved by a tap for policy.widen; no grant message", async () => {
  const h = harness();
  assert.equal(await h.gate(`${NEW}/x`, CTX, "tab_open"), NEW);
  assert.deepEqual(h.windows, ["confirm.html?id=c1&mode=presence"]);
  assert.equal(h.pages[0].el("allow").hidden, true, "no Allow click for an enrolled browser");
  assert.equal(h.pages[0].el("tap").hidden, false);
  assert.deepEqual(h.requested, [`${NEW}/*`], "the host permission is requested in the tap's gesture");
  const detail = `{"origins":["${OLD}","${NEW}"]}`;
  assert.deepEqual(h.hostCalls.map((c) => c[0]), ["origin_decide", "presence_begin", "presence_complete"]);
  assert.deepEqual(h.hostCalls[0][1], { origin: NEW });
  assert.deepEqual(h.hostCalls[1][1], { action: "policy.widen", detail });
  assert.equal(h.hostCalls[2][1].action, "policy.widen");
  assert.equal(h.hostCalls[2][1].detail, detail);
  assert.equal(h.grants.length, 0, "no separate grant message");
  assert.equal(h.broker.size(), 0);
});

test("enrolled: the detail is exactly the host's, never composed from a stale ctx", async () => {
  const h = harness({ hostOrigins: [OLD, "https://added.test"] });
  await h.gate(`${NEW}/`, { session: "s1", policy: parsePolicy({ origins: [], confirmTimeoutSeconds: 30 }) }, "tab_open");
  assert.deepEqual(h.hostCalls[1][1], { action: "policy.widen", detail: `{"origins":["${OLD}","https://added.test","${NEW}"]}` });
});

test("enrolled: host refusing the tap, permission refused, or an Allow click -> origin_not_approved, no grant", async () => {
  for (const [name, opts] of [
    ["refused", { host: (action) => (action === "presence_complete" ? (() => { throw new BridgeError("presence_refused", "x"); })() : undefined) }],
    ["not done", { host: (action) => (action === "presence_complete" ? { done: false } : undefined) }],
    ["no permission", { permission: false }],
  ]) {
    const h = harness(opts);
    await assert.rejects(h.gate(`${NEW}/`, CTX, "tab_open"), (e) => e.code === "origin_not_approved", name);
    assert.equal(h.grants.length, 0, name);
    if (name === "no permission") assert.deepEqual(h.hostCalls.map((c) => c[0]), ["origin_decide"], "no tap without the permission");
  }
  // An Allow click cannot stand in for the tap (the button is hidden; a forged click denies).
  const h = harness({ press: "allow" });
  const pending = h.gate(`${NEW}/`, CTX, "tab_open");
  await assert.rejects(pending, (e) => e.code === "origin_not_approved");
  assert.equal(h.grants.length, 0);
  assert.deepEqual(h.hostCalls.map((c) => c[0]), ["origin_decide"]);
});

test("not enrolled: the click + grant flow", async () => {
  const h = harness({ enrolled: false, press: "allow" });
  assert.equal(await h.gate(`${NEW}/x`, CTX, "tab_open"), NEW);
  assert.deepEqual(h.windows, ["confirm.html?id=c1"]);
  assert.deepEqual(h.grants, [NEW]);
  assert.deepEqual(h.hostCalls.map((c) => c[0]), ["origin_decide"]);
});

test("origin_decide failing (killed, unpaired) -> refused with no window and no grant", async () => {
  for (const code of ["killed", "not_paired", "trust_unreadable"]) {
    const h = harness({ enrolled: () => { throw new BridgeError(code, "x"); }, press: "allow" });
    await assert.rejects(h.gate(`${NEW}/`, CTX, "tab_open"), (e) => e.code === "origin_not_approved", code);
    assert.deepEqual(h.windows, [], code);
    assert.deepEqual(h.grants, [], code);
  }
});

test("enrolled, origin already approved in the policy, only Chrome's grant missing: a click, no tap, no grant", async () => {
  const h = harness({ press: "allow" });
  assert.equal(await h.gate(`${OLD}/x`, CTX, "tab_open"), OLD);
  assert.deepEqual(h.windows, ["confirm.html?id=c1"], "a plain confirm window, not presence mode");
  assert.deepEqual(h.requested, [`${OLD}/*`], "Chrome's permission is requested in the click");
  assert.deepEqual(h.hostCalls, [], "nothing of tabwarden's policy changes");
  assert.deepEqual(h.grants, []);
  // Chrome refusing it is a denial.
  const d = harness({ press: "allow", permission: false });
  await assert.rejects(d.gate(`${OLD}/x`, CTX, "tab_open"), (e) => e.code === "origin_not_approved");
  assert.deepEqual(d.grants, []);
});
