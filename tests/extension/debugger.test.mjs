import { test } from "node:test";
import assert from "node:assert/strict";
import { ATTACH_ATTEMPTS, CDP_VERSION, FOREGROUND_EMULATION, createDebuggerManager, createDialogGuard } from "../../extension/worker/debugger.js";
import { createDialogs, maskDialogText } from "../../extension/worker/dialogs.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createTabQueue, serialiseByTab } from "../../extension/worker/tab-queue.js";
import { argModifiers, argPoint, isMac } from "../../extension/handlers/input.js";
import { step } from "../../extension/handlers/support.js";
import { argsRefusal } from "../../extension/worker/dispatch.js";
import { deferred, fakeLog, flush } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

/** A chrome.debugger that records calls; `attachFails` / `sendFails` make them reject. */
function fakeDebugger() {
  const calls = [];
  const attached = new Set();
  const api = {
    attachFails: null,
    sendFails: null,
    attach: async (tabId, version) => {
      calls.push(["attach", tabId, version]);
      if (api.attachFails) throw new Error(api.attachFails);
      if (attached.has(tabId)) throw new Error(`Another debugger is already attached to the tab with id: ${tabId}.`);
      attached.add(tabId);
    },
    detach: async (tabId) => {
      calls.push(["detach", tabId]);
      if (!attached.delete(tabId)) throw new Error("Debugger is not attached to the tab");
    },
    send: async (tabId, method, params, sessionId) => {
      calls.push(sessionId === undefined ? ["send", tabId, method, params] : ["send", tabId, method, params, sessionId]);
      if (!attached.has(tabId)) throw new Error(`Debugger is not attached to the tab with id: ${tabId}.`);
      if (api.sendFails) return api.sendFails;
      return {};
    },
  };
  return { api, calls, attached };
}

function setup() {
  const ownership = createOwnership();
  const dialogs = createDialogs();
  const dbg = fakeDebugger();
  const log = fakeLog();
  /** The waits between attach tries, in order (each resolves at once). */
  const slept = [];
  const sleep = async (ms) => {
    slept.push(ms);
  };
  const manager = createDebuggerManager({ api: dbg.api, owned: (id) => ownership.owner(id) !== null, dialogs, step, log, sleep });
  return { ownership, dialogs, dbg, manager, log, slept };
}

/** Another debugger holding tab `tabId`: every attach says so, and our detach finds none of ours. */
function holdElsewhere(dbg, tabId) {
  const { attach, detach } = dbg.api;
  const held = { on: true };
  dbg.api.attach = async (id, version) => {
    if (held.on && id === tabId) {
      dbg.calls.push(["attach", id, version]);
      throw new Error(`Another debugger is already attached to the tab with id: ${id}.`);
    }
    return attach(id, version);
  };
  dbg.api.detach = async (id) => {
    if (held.on && id === tabId) {
      dbg.calls.push(["detach", id]);
      throw new Error(`Debugger is not attached to the tab with id: ${id}.`);
    }
    return detach(id);
  };
  return held;
}

const CTX = { session: "s1", policy: parsePolicy({ origins: ["http://a.test"] }), deadline: Date.now() + 60_000 };

test("attaches to owned tabs only, once, with Page.enable; never to a tab nobody owns", async () => {
  const { ownership, dbg, manager } = setup();
  assert.equal(await manager.ensureSoft(CTX, 5), false);
  await assert.rejects(manager.ensure(CTX, 5), (e) => e.code === "tab_not_owned");
  assert.deepEqual(dbg.calls, []);
  ownership.claim("s1", 5);
  assert.equal(await manager.ensureSoft(CTX, 5), true);
  await manager.ensure(CTX, 5);
  await manager.send(CTX, 5, "Input.dispatchMouseEvent", { type: "mouseMoved", x: 1, y: 2 }, "move the pointer");
  assert.deepEqual(dbg.calls, [
    ["attach", 5, CDP_VERSION], ["send", 5, "Page.enable", undefined],
    ...FOREGROUND_EMULATION.map(([method, params]) => ["send", 5, method, params]),
    ["send", 5, "Input.dispatchMouseEvent", { type: "mouseMoved", x: 1, y: 2 }],
  ]);
  assert.deepEqual(manager.attached(), [5]);
});

test("an attachment left by an earlier worker is taken over", async () => {
  const { ownership, dbg, manager } = setup();
  ownership.claim("s1", 2);
  dbg.attached.add(2); // Chrome still holds ours from before the worker restarted
  await manager.ensure(CTX, 2);
  assert.deepEqual(dbg.calls.map((c) => c.slice(0, 3)), [["attach", 2, CDP_VERSION], ["detach", 2], ["attach", 2, CDP_VERSION], ["send", 2, "Page.enable"],
    ["send", 2, "Emulation.setFocusEmulationEnabled"], ["send", 2, "Page.startScreencast"]]);
});

test("Chrome refusing to attach is debugger_detached with its reason, and a later call tries again", async () => {
  const { ownership, dbg, manager } = setup();
  ownership.claim("s1", 3);
  dbg.api.attachFails = "Cannot access a chrome:// URL";
  await assert.rejects(manager.ensure(CTX, 3), (e) => e.code === "debugger_detached" && /chrome:\/\/ URL/.test(e.message));
  assert.equal(await manager.ensureSoft(CTX, 3), false); // soft: logs, never throws
  dbg.api.attachFails = null;
  await manager.ensure(CTX, 3);
  assert.deepEqual(manager.attached(), [3]);
});

test("a tab another debugger holds: tried with backoff, then debugger_detached naming the next step; nothing sent; the next call works once it is free", async () => {
  const { ownership, dbg, manager, slept } = setup();
  ownership.claim("s1", 6);
  const held = holdElsewhere(dbg, 6);
  await assert.rejects(manager.ensure(CTX, 6), (e) => e.code === "debugger_detached"
    && /another debugger holds tab 6/.test(e.message) && /Close DevTools/.test(e.message) && /Another debugger is already attached/.test(e.message));
  // Each try takes over what may be an earlier worker's attachment first; the waits double.
  assert.deepEqual(dbg.calls.filter((c) => c[0] === "attach").length, 2 * ATTACH_ATTEMPTS);
  assert.deepEqual(slept, [100, 200, 400]);
  assert.equal(dbg.calls.some((c) => c[0] === "send"), false);
  assert.deepEqual(manager.attached(), []);
  // Another tab is untouched by it.
  ownership.claim("s1", 7);
  await manager.ensure(CTX, 7);
  assert.deepEqual(manager.attached(), [7]);
  held.on = false; // the person closed DevTools
  await manager.ensure(CTX, 6);
  assert.deepEqual(manager.attached().sort(), [6, 7]);
});

test("a tab held for a moment: a retry attaches and the call goes on", async () => {
  const { ownership, dbg, manager, slept, log } = setup();
  ownership.claim("s1", 8);
  const held = holdElsewhere(dbg, 8);
  const attach = dbg.api.attach;
  let tries = 0;
  dbg.api.attach = async (id, version) => {
    tries += 1;
    if (tries === 3) held.on = false; // the second try's take-over attach finds it free
    return attach(id, version);
  };
  await manager.ensure(CTX, 8);
  assert.deepEqual(manager.attached(), [8]);
  assert.deepEqual(slept, [100]);
  assert.equal(log.warnings.some((w) => /try 1 of 4/.test(w)), true);
});

test("a final refusal (a page no extension may debug) is not retried", async () => {
  const { ownership, dbg, manager, slept } = setup();
  ownership.claim("s1", 9);
  dbg.api.attachFails = "Cannot attach to this target.";
  await assert.rejects(manager.ensure(CTX, 9), (e) => e.code === "debugger_detached" && /Cannot attach to this target/.test(e.message));
  assert.deepEqual(slept, []);
  assert.equal(dbg.calls.filter((c) => c[0] === "attach").length, 1);
});

test("a command that never answers ends at the call's deadline as timeout naming the step", async () => {
  const { ownership, dbg, manager } = setup();
  ownership.claim("s1", 4);
  await manager.ensure(CTX, 4);
  dbg.api.send = () => new Promise(() => {});
  await assert.rejects(manager.send({ ...CTX, deadline: Date.now() + 30 }, 4, "Input.dispatchMouseEvent", {}, "press the mouse button"),
    (e) => e.code === "timeout" && /step "press the mouse button"/.test(e.message));
});

test("the person closing the bar is reported once (nothing sent), then the next call re-attaches", async () => {
  const { ownership, dbg, manager, dialogs } = setup();
  ownership.claim("s1", 6);
  await manager.ensure(CTX, 6);
  dialogs.opened(6, { type: "alert", message: "hi" });
  dbg.attached.delete(6);
  manager.onDetach(6, "canceled_by_user");
  assert.equal(dialogs.current(6), null); // unseen from now on
  assert.equal(await manager.ensureSoft(CTX, 6), false); // other tools do not re-attach behind the person's back
  const before = dbg.calls.length;
  await assert.rejects(manager.send(CTX, 6, "Input.dispatchMouseEvent", {}, "move the pointer"),
    (e) => e.code === "debugger_detached" && /closed Chrome's "is debugging this browser" bar/.test(e.message));
  assert.equal(dbg.calls.length, before);
  await manager.send(CTX, 6, "Input.dispatchMouseEvent", {}, "move the pointer");
  assert.deepEqual(dbg.calls.slice(before).map((c) => c[0]), ["attach", "send", "send", "send", "send"]);
});

test("every attachment to an owned tab holds it in front (focus emulation, a screencast), again after a re-attach; a tab nobody owns never", async () => {
  const { ownership, dbg, manager } = setup();
  const held = (tabId) => dbg.calls.filter((c) => c[0] === "send" && c[1] === tabId && c[2] === "Emulation.setFocusEmulationEnabled");
  const cast = (tabId) => dbg.calls.filter((c) => c[0] === "send" && c[1] === tabId && c[2] === "Page.startScreencast");
  assert.deepEqual(FOREGROUND_EMULATION.map(([method]) => method), ["Emulation.setFocusEmulationEnabled", "Page.startScreencast"]);
  assert.deepEqual(FOREGROUND_EMULATION[0][1], { enabled: true });
  assert.equal(await manager.ensureSoft(CTX, 8), false); // the person's own tab
  manager.onEvent(8, "Page.frameNavigated", { frame: {} });
  assert.deepEqual(held(8), []);
  ownership.claim("s1", 9);
  await manager.ensure(CTX, 9);
  await manager.ensure(CTX, 9); // one attachment, held once
  assert.deepEqual(held(9).map((c) => c[3]), [{ enabled: true }]);
  assert.equal(cast(9).length, 1);
  const sent = dbg.calls.map((c) => c[2]).filter(Boolean);
  assert.ok(sent.indexOf("Emulation.setFocusEmulationEnabled") === sent.indexOf("Page.enable") + 1); // before the call's own commands
  assert.ok(sent.indexOf("Page.startScreencast") === sent.indexOf("Emulation.setFocusEmulationEnabled") + 1);
  dbg.attached.delete(9);
  manager.onDetach(9, "target_closed"); // gone with its attachment: held again on the next one
  await manager.ensure(CTX, 9);
  assert.equal(held(9).length, 2);
  assert.equal(cast(9).length, 2);
  manager.release(9);
  await flush();
  assert.equal(held(9).length, 2);
});

test("a tab Chrome will not hold in front still attaches and works (the failure is logged)", async () => {
  const { ownership, dbg, manager, log } = setup();
  ownership.claim("s1", 10);
  const send = dbg.api.send;
  dbg.api.send = async (tabId, method, params, sessionId) => {
    if (method === "Emulation.setFocusEmulationEnabled") throw new Error("Not allowed");
    return send(tabId, method, params, sessionId);
  };
  await manager.ensure(CTX, 10);
  await manager.send(CTX, 10, "Input.dispatchMouseEvent", {}, "move the pointer");
  assert.deepEqual(manager.attached(), [10]);
  assert.ok(log.warnings.some((w) => /keep tab 10 running in the background/.test(w)), JSON.stringify(log.warnings));
});

test("detached behind its back: the command answers debugger_detached, the next re-attaches", async () => {
  const { ownership, dbg, manager } = setup();
  ownership.claim("s1", 7);
  await manager.ensure(CTX, 7);
  dbg.attached.delete(7); // chrome.debugger.detach from elsewhere: no onDetach
  await assert.rejects(manager.send(CTX, 7, "Input.dispatchMouseEvent", {}, "move the pointer"), (e) => e.code === "debugger_detached");
  await manager.send(CTX, 7, "Input.dispatchMouseEvent", {}, "move the pointer");
  assert.ok(dbg.attached.has(7));
});

test("a released tab is detached and forgotten; events from a tab nobody owns detach it", async () => {
  const { ownership, dbg, manager, dialogs } = setup();
  ownership.claim("s1", 8);
  await manager.ensure(CTX, 8);
  ownership.release(8);
  manager.onEvent(8, "Page.javascriptDialogOpening", { type: "alert", message: "x" });
  await flush();
  assert.equal(dialogs.current(8), null);
  assert.ok(!dbg.attached.has(8));
  assert.deepEqual(manager.attached(), []);
  ownership.claim("s1", 9);
  await manager.ensure(CTX, 9);
  manager.release(9);
  await flush();
  assert.ok(!dbg.attached.has(9));
  manager.onEvent(Number.NaN, "Page.javascriptDialogOpening", {}); // never throws
  manager.onDetach(undefined, "target_closed");
});

test("dialog events: opened with type and masked, capped text; closed clears it", () => {
  const { ownership, manager, dialogs } = setup();
  ownership.claim("s1", 1);
  manager.onEvent(1, "Page.javascriptDialogOpening", { type: "confirm", message: "pay 4111 1111 1111 1111?", url: "http://a.test/" });
  const shown = (d) => ({ type: d.type, message: d.message, url: d.url });
  assert.deepEqual(shown(dialogs.current(1)), { type: "confirm", message: "pay [card]?", url: "http://a.test/" });
  manager.onEvent(1, "Page.javascriptDialogClosed", { result: true });
  assert.equal(dialogs.current(1), null);
  manager.onEvent(1, "Page.javascriptDialogOpening", { type: "weird", message: 42 });
  assert.deepEqual(shown(dialogs.current(1)), { type: "alert", message: "", url: "" });
  assert.equal(maskDialogText("x".repeat(1000)).length, 301);
  // Closed without us: the person (or the page going away) answered it.
  assert.deepEqual(dialogs.recent(1), [
    { type: "confirm", message: "pay [card]?", origin: "http://a.test", answered: "accepted", by: "page or person" },
    { type: "alert", message: "", origin: "", answered: "open", by: "" },
  ]);
});

test("arming on: an unarmed dialog is dismissed at once and logged; an arm answers the next one of its origin only, once", async () => {
  const { ownership, manager, dialogs, dbg } = setup();
  ownership.claim("s1", 1);
  await manager.ensure(CTX, 1);
  dialogs.setArming(1, true);
  const handled = () => dbg.calls.filter((c) => c[2] === "Page.handleJavaScriptDialog").map((c) => c[3]);
  manager.onEvent(1, "Page.javascriptDialogOpening", { type: "alert", message: "card 4111 1111 1111 1111", url: "http://a.test/x" });
  assert.equal(dialogs.blocking(1), null, "being answered: it does not block calls");
  await flush();
  manager.onEvent(1, "Page.javascriptDialogClosed", { result: false });
  assert.deepEqual(handled(), [{ accept: false }]);
  // Armed on a.test: a frame of ads.test does not use the arm (dismissed), a.test's confirm does.
  dialogs.arm(1, { accept: true, promptText: "Ada", origin: "http://a.test" });
  manager.onEvent(1, "Page.javascriptDialogOpening", { type: "confirm", message: "from an ad", url: "http://ads.test/f" });
  await flush();
  manager.onEvent(1, "Page.javascriptDialogClosed", { result: false });
  assert.notEqual(dialogs.armed(1), null);
  manager.onEvent(1, "Page.javascriptDialogOpening", { type: "prompt", message: "Name?", url: "http://a.test/x" });
  await flush();
  manager.onEvent(1, "Page.javascriptDialogClosed", { result: true, userInput: "Ada" });
  assert.equal(dialogs.armed(1), null, "one shot");
  manager.onEvent(1, "Page.javascriptDialogOpening", { type: "confirm", message: "Again?", url: "http://a.test/x" });
  await flush();
  manager.onEvent(1, "Page.javascriptDialogClosed", { result: false });
  assert.deepEqual(handled(), [{ accept: false }, { accept: false }, { accept: true, promptText: "Ada" }, { accept: false }]);
  const recent = dialogs.recent(1);
  assert.deepEqual(recent.map((e) => [e.type, e.answered, e.by]), [
    ["alert", "auto-dismissed", "tabwarden"], ["confirm", "auto-dismissed", "tabwarden"],
    ["prompt", "accepted", "arm"], ["confirm", "auto-dismissed", "tabwarden"],
  ]);
  assert.equal(recent[0].message, "card [card]");
  assert.ok(!JSON.stringify(recent).includes("Ada"), "the armed answer is never in the list");
});

test("an arm ends with any navigation, a detach, arming turned off, or the tab leaving", async () => {
  const { ownership, manager, dialogs } = setup();
  ownership.claim("s1", 1);
  const armIt = () => dialogs.arm(1, { accept: true, promptText: null, origin: "http://a.test" });
  dialogs.arm(1, { accept: true, promptText: null, origin: "http://a.test" });
  assert.equal(dialogs.armed(1), null, "no arm while arming is off");
  dialogs.setArming(1, true);
  armIt();
  manager.onEvent(1, "Page.frameNavigated", { frame: { id: "sub", parentId: "main", url: "http://a.test/f" } });
  assert.notEqual(dialogs.armed(1), null, "a subframe's new document is not the tab's");
  const n = dialogs.navigations(1);
  manager.onEvent(1, "Page.frameNavigated", { frame: { id: "main", url: "http://a.test/b" } });
  assert.equal(dialogs.armed(1), null);
  assert.equal(dialogs.navigations(1), n + 1);
  armIt();
  manager.onEvent(1, "Page.navigatedWithinDocument", { frameId: "main", url: "http://a.test/b#x" });
  assert.equal(dialogs.armed(1), null);
  armIt();
  manager.onDetach(1, "target_closed");
  assert.equal(dialogs.armed(1), null);
  armIt();
  dialogs.setArming(1, false);
  assert.equal(dialogs.armed(1), null);
  dialogs.setArming(1, true);
  armIt();
  manager.release(1);
  assert.equal(dialogs.armed(1), null);
  assert.equal(dialogs.arming(1), false);
});

test("arming on: a beforeunload dismissed because nothing was armed ends the running call with navigation_cancelled", async () => {
  const stuck = deferred();
  const h = guarded({ page_navigate: async () => { await stuck.promise; return {}; } });
  h.ownership.claim("s1", 1);
  const ctx = { ...CTX, policy: parsePolicy({ origins: ["http://a.test"], dialogArming: true }) };
  const p = h.call("page_navigate", { tabId: 1 }, ctx);
  await flush(); await flush();
  h.manager.onEvent(1, "Page.javascriptDialogOpening", { type: "beforeunload", message: "", url: "http://a.test/" });
  await assert.rejects(p, (e) => e.code === "navigation_cancelled" && /arm an accept/.test(e.message));
  stuck.resolve();
});

test("an answer that cannot be sent leaves the dialog blocking: calls answer dialog_open", async () => {
  const { ownership, manager, dialogs, dbg } = setup();
  ownership.claim("s1", 1);
  dialogs.setArming(1, true);
  manager.onEvent(1, "Page.javascriptDialogOpening", { type: "alert", message: "hi", url: "http://a.test/" });
  await flush(); await flush();
  assert.equal(dbg.calls.at(-1)[2], "Page.handleJavaScriptDialog"); // not attached in the fake: it fails
  assert.equal(dialogs.blocking(1)?.message, "hi");
});

/** The dispatcher-side wrapping background.js uses, over a fake handler per action. */
function guarded(handlers) {
  const s = setup();
  const guard = createDialogGuard({ manager: s.manager, dialogs: s.dialogs, ownerOf: (id) => s.ownership.owner(id) });
  const routes = new Map(serialiseByTab(Object.entries(handlers), createTabQueue(), guard));
  return { ...s, call: (action, args, ctx = CTX) => routes.get(action)(args, ctx) };
}

test("while a dialog is open, calls on the tab answer dialog_open at once; page_dialog runs at once", async () => {
  const ran = [];
  const stuck = deferred();
  const h = guarded({
    page_click: async (args) => { ran.push("click"); await stuck.promise; return {}; },
    page_text: async () => { ran.push("text"); return { text: "t" }; },
    page_dialog: async () => { ran.push("dialog"); return { handled: true }; },
  });
  h.ownership.claim("s1", 1);
  const click = h.call("page_click", { tabId: 1 });
  const text = h.call("page_text", { tabId: 1 }); // queued behind the stuck click
  await flush();
  assert.deepEqual(ran, ["click"]);
  h.dialogs.opened(1, { type: "alert", message: "card 4111 1111 1111 1111", url: "http://a.test/x" });
  await assert.rejects(click, (e) => e.code === "dialog_open" && /while page_click ran/.test(e.message) && !/4111/.test(e.message));
  await assert.rejects(text, (e) => e.code === "dialog_open" && /blocked by an alert\(\) dialog "card \[card\]"/.test(e.message));
  await assert.rejects(Promise.resolve().then(() => h.call("page_text", { tabId: 1 })), (e) => e.code === "dialog_open");
  assert.deepEqual(ran, ["click"]);
  assert.deepEqual(await h.call("page_dialog", { tabId: 1 }), { handled: true });
  h.dialogs.closed(1);
  assert.deepEqual(await h.call("page_text", { tabId: 1 }), { text: "t" });
  // A dialog from a frame on a site the policy does not approve: its text is withheld.
  h.dialogs.opened(1, { type: "confirm", message: "evil text", url: "http://evil.test/" });
  await assert.rejects(Promise.resolve().then(() => h.call("page_text", { tabId: 1 })),
    (e) => e.code === "dialog_open" && !/evil text/.test(e.message) && /withheld/.test(e.message));
});

test("another session's tab: no dialog_open, no attach; its handler answers (tab_not_owned)", async () => {
  const h = guarded({ page_text: async () => "handler ran" });
  h.ownership.claim("s2", 3);
  h.dialogs.opened(3, { type: "prompt", message: "secret question" });
  assert.equal(await h.call("page_text", { tabId: 3 }), "handler ran");
  assert.deepEqual(h.dbg.calls, []);
});

test("page_mouse / page_hover arguments: an element or x, y; modifiers; Mod by platform", () => {
  assert.deepEqual(argPoint({ selector: "#a" }), { target: { selector: "#a" } });
  assert.deepEqual(argPoint({ x: 10, y: 20.5 }), { target: null, x: 10, y: 20.5 });
  for (const bad of [{}, { x: 1 }, { selector: "#a", x: 1, y: 2 }, { x: -1, y: 2 }, { x: "1", y: 2 }]) {
    assert.throws(() => argPoint(bad), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
  assert.equal(argModifiers(["Shift", "Alt"], false), 9);
  assert.equal(argModifiers(["Mod"], false), 2);
  assert.equal(argModifiers(["Mod"], true), 4);
  assert.equal(argModifiers(undefined, false), 0);
  // The list's length and each name are the wire schema's (the dispatcher's check).
  for (const modifiers of [["Hyper"], ["constructor"], "Shift", ["Shift", "Shift", "Shift", "Shift", "Shift", "Shift"], [2]]) {
    assert.notEqual(argsRefusal("page_mouse", { tabId: 1, selector: "#a", modifiers }), null, JSON.stringify(modifiers));
  }
  assert.equal(argsRefusal("page_mouse", { tabId: 1, selector: "#a", modifiers: ["Alt", "Control", "Meta", "Shift", "Mod"] }), null);
  assert.equal(isMac({ platform: "MacIntel" }), true);
  assert.equal(isMac({ userAgentData: { platform: "Linux" }, platform: "MacIntel" }), false);
  assert.equal(isMac(undefined), false);
});

test("listen: one owned tab's events reach the listener until it stops; a throwing one breaks nothing", async () => {
  const { ownership, manager, dialogs } = setup();
  ownership.claim("s1", 3);
  ownership.claim("s1", 4);
  const got = [];
  const stop = manager.listen(3, (method, params) => got.push([method, params.context?.id]));
  const stopBad = manager.listen(3, () => {
    throw new Error("a broken listener");
  });
  manager.onEvent(3, "Runtime.executionContextCreated", { context: { id: 7 } });
  manager.onEvent(4, "Runtime.executionContextCreated", { context: { id: 8 } }); // another tab
  manager.onEvent(3, "Page.javascriptDialogOpening", { type: "alert", message: "hi", url: "http://a.test/" });
  assert.notEqual(dialogs.current(3), null); // the dialog bookkeeping ran despite the throwing listener
  manager.onEvent(3, "Page.screencastFrame", { data: "", sessionId: 1 }); // FOREGROUND_EMULATION's, unread
  stop();
  stopBad();
  manager.onEvent(3, "Runtime.executionContextCreated", { context: { id: 9 } });
  assert.deepEqual(got, [["Runtime.executionContextCreated", 7], ["Page.javascriptDialogOpening", undefined]]);
  // A tab nobody owns: released before any listener hears of it.
  const heard = [];
  manager.listen(5, (m) => heard.push(m));
  manager.onEvent(5, "Runtime.executionContextCreated", { context: { id: 1 } });
  assert.deepEqual(heard, []);
});

test("child targets (out-of-process iframes): tracked per tab, their events reach listeners only, never the dialog bookkeeping", async () => {
  const { ownership, dialogs, dbg, manager } = setup();
  ownership.claim("s1", 5);
  await manager.ensure(CTX, 5);
  const heard = [];
  const stop = manager.listen(5, (method, params, session) => heard.push([method, session]));
  manager.onEvent(5, "Target.attachedToTarget", { sessionId: "S1", targetInfo: { targetId: "F1", type: "iframe" } });
  manager.onEvent(5, "Target.attachedToTarget", { sessionId: "S2", targetInfo: { targetId: "F2", type: "iframe" } }, "S1");
  assert.deepEqual(manager.children(5), [
    { sessionId: "S1", parent: undefined, targetId: "F1", type: "iframe" },
    { sessionId: "S2", parent: "S1", targetId: "F2", type: "iframe" },
  ]);
  // A child's own Page events are not the tab's: no dialog is recorded from them.
  manager.onEvent(5, "Page.javascriptDialogOpening", { type: "alert", message: "from a child", url: "http://a.test/" }, "S1");
  assert.equal(dialogs.blocking(5), null);
  assert.deepEqual(heard.slice(-1), [["Page.javascriptDialogOpening", "S1"]]);
  // Commands go to the child's session when asked.
  await manager.send(CTX, 5, "Runtime.enable", {}, "list the page's script worlds", "S2");
  assert.deepEqual(dbg.calls.at(-1), ["send", 5, "Runtime.enable", {}, "S2"]);
  manager.onEvent(5, "Target.detachedFromTarget", { sessionId: "S2" }, "S1");
  assert.deepEqual(manager.children(5).map((c) => c.sessionId), ["S1"]);
  // The tab leaving its session forgets its children.
  manager.release(5);
  assert.deepEqual(manager.children(5), []);
  stop();
});
