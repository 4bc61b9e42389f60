import { test } from "node:test";
import assert from "node:assert/strict";
import { CHANGED, CHANGING, createChangeNotifier, runLiveRefresh } from "../../extension/shared/live-refresh.js";
import { flush } from "./helpers/fakes.mjs";

test("the worker folds changes inside the interval into one broadcast that carries no data", async () => {
  const sent = [];
  const timers = [];
  const n = createChangeNotifier({ send: async (m) => { sent.push(m); throw new Error("no page open"); }, setTimer: (fn, ms) => timers.push([fn, ms]) });
  n.changed();
  n.changed();
  n.changed();
  assert.equal(timers.length, 1);
  assert.equal(timers[0][1], 500);
  timers[0][0]();
  await flush();
  assert.deepEqual(sent, [{ type: CHANGED }], "one message, nothing but its type");
  n.changed();
  assert.equal(timers.length, 2, "a later change is told again");
  // Only operations that change what pages show are changes; a page's own reads never are.
  for (const read of ["policy_get", "options_status", "popup_status", "agent_tabs_list", "clients_recent", "audit_tail"]) {
    assert.equal(CHANGING.has(read), false, read);
  }
  assert.equal(CHANGING.has("kill"), true);
});

function page() {
  const listeners = {};
  let onMessage = null;
  const doc = { visibilityState: "hidden", addEventListener: (t, fn) => { listeners[t] = fn; } };
  const win = { addEventListener: (t, fn) => { listeners[`win:${t}`] = fn; } };
  return { doc, win, listeners, listen: (fn) => { onMessage = fn; }, deliver: (m) => onMessage(m) };
}

test("a page re-reads every section on the worker's event and on coming back into view, one pass at a time", async () => {
  const p = page();
  const calls = [];
  let release;
  const gate = new Promise((r) => { release = r; });
  const refreshers = [async () => { calls.push("a"); await gate; }, async () => { calls.push("b"); throw new Error("one section failing stops none"); }];
  runLiveRefresh({ doc: p.doc, win: p.win, listen: p.listen, refreshers });
  p.deliver({ type: "popup_status" });
  p.deliver("tabwarden_changed");
  await flush();
  assert.deepEqual(calls, [], "anything but the event is ignored");
  p.deliver({ type: CHANGED });
  p.deliver({ type: CHANGED });
  p.deliver({ type: CHANGED });
  await flush();
  assert.deepEqual(calls, ["a", "b"], "one pass while one runs");
  release();
  await flush(); await flush(); await flush();
  assert.deepEqual(calls, ["a", "b", "a", "b"], "changes during a pass earn exactly one more");
  p.listeners.visibilitychange();
  await flush();
  assert.equal(calls.length, 4, "hidden: nothing");
  p.doc.visibilityState = "visible";
  p.listeners.visibilitychange();
  await flush(); await flush();
  assert.equal(calls.length, 6, "back in view: re-read (a change made in a terminal shows)");
  p.listeners["win:focus"]();
  await flush(); await flush();
  assert.equal(calls.length, 8);
});
