// fakes.mjs — deterministic test doubles for the extension's injected seams: a fake clock with
// timers, a fake port (session.js's PortLike), a recording logger and the confirm window's
// document; the message router over a few relays. Test-only.

import { BridgeError } from "../../../extension/shared/bridge-error.js";
import { CODE } from "../../../extension/shared/error-codes.js";
import { argsRefusal } from "../../../extension/worker/dispatch.js";
import { MESSAGE_TABLE, createMessageRouter } from "../../../extension/worker/message-router.js";

/** A manual clock: timers fire only inside advance(). */
export function fakeTimers() {
  let now = 0;
  let nextId = 1;
  /** @type {Map<number, {at: number, fn: () => void}>} */
  const queue = new Map();
  return {
    setTimer(fn, ms) {
      const id = nextId++;
      queue.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimer(id) {
      queue.delete(id);
    },
    now: () => now,
    /** Run every timer due within `ms`, in time order, then land on now + ms. */
    advance(ms) {
      const end = now + ms;
      for (;;) {
        let due = null;
        for (const [id, t] of queue) if (t.at <= end && (due === null || t.at < due[1].at)) due = [id, t];
        if (due === null) break;
        queue.delete(due[0]);
        now = due[1].at;
        due[1].fn();
      }
      now = end;
    },
    pending: () => queue.size,
    /** Remaining delays of the queued timers. */
    delays: () => [...queue.values()].map((t) => t.at - now),
  };
}

/** A PortLike that records what was posted and lets the test deliver messages or drop it. */
export function fakePort({ throwOnPost = false } = {}) {
  const messageListeners = [];
  const disconnectListeners = [];
  const port = {
    sent: [],
    disconnectCalls: 0,
    dropped: false,
    postMessage(msg) {
      if (throwOnPost || port.dropped) throw new Error("Attempting to use a disconnected port object");
      port.sent.push(JSON.parse(JSON.stringify(msg)));
    },
    disconnect() {
      port.disconnectCalls += 1;
    },
    onMessage: { addListener: (fn) => messageListeners.push(fn) },
    onDisconnect: { addListener: (fn) => disconnectListeners.push(fn) },
    deliver(msg) {
      for (const fn of messageListeners) fn(msg);
    },
    drop(reason = null) {
      port.dropped = true;
      for (const fn of disconnectListeners) fn(reason);
    },
  };
  return port;
}

/** A logger that records warnings instead of printing them. */
export function fakeLog() {
  const warnings = [];
  return { warnings, warn: (...args) => warnings.push(args.map(String).join(" ")) };
}

/** Let pending promise callbacks (microtasks) run. */
export const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A promise with its resolve/reject exposed. */
export function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The confirm window's document (confirm.html's ids, #tap hidden as shipped): elements with
 *  textContent, disabled, hidden and click listeners that ignore a disabled button. */
export function fakeConfirmDoc() {
  const els = new Map();
  for (const id of ["heading", "tool", "origin", "detail", "status", "allow", "deny", "tap"]) {
    const listeners = [];
    els.set(id, {
      id, textContent: "", disabled: false, hidden: id === "tap",
      addEventListener: (type, fn) => { if (type === "click") listeners.push(fn); },
      click() { if (!this.disabled) for (const fn of listeners) fn(); },
      focus() {},
      set innerHTML(_v) { throw new Error("innerHTML must never be used"); },
    });
  }
  return { getElementById: (id) => els.get(id) ?? null, el: (id) => els.get(id) };
}

/** A clock the test moves (ui/confirm-page.js Clock): `every` callbacks run on each advance,
 *  `after` callbacks once their time has come. */
export function testClock(start = 0) {
  let t = start;
  const timers = new Set();
  const once = new Set();
  return {
    now: () => t,
    every: (fn) => { timers.add(fn); return fn; },
    stop: (fn) => timers.delete(fn),
    after: (fn, ms) => { const entry = { fn, due: t + ms }; once.add(entry); return entry; },
    cancel: (entry) => once.delete(entry),
    advance(ms) {
      t += ms;
      for (const fn of [...timers]) fn();
      for (const entry of [...once]) if (entry.due <= t && once.delete(entry)) entry.fn();
    },
    running: () => timers.size,
    pending: () => once.size,
  };
}

/**
 * The extension's message router (worker/message-router.js) for the extension `extensionId`
 * (its pages at chrome-extension://<id>/<page>), over `handlers` only: the table's real rows for
 * those types. Returns `route(msg, sender)`.
 * @param {string} extensionId
 * @param {Iterable<[string, Function]>} handlers e.g. a relay's `messages`
 */
export function pageRouter(extensionId, handlers) {
  const handling = new Map(handlers);
  const router = createMessageRouter({
    extensionId,
    pageUrl: (page) => `chrome-extension://${extensionId}/${page}`,
    handlers: handling,
    table: new Map([...MESSAGE_TABLE].filter(([type]) => handling.has(type))),
  });
  return (msg, sender) => router.route(msg, sender);
}

/**
 * A handler called as the dispatcher calls it: its `args` checked first against the action's wire
 * schema (worker/dispatch.js argsRefusal, the dispatcher's own check), a refusal thrown as the
 * dispatcher answers it (bad_request) without the handler running.
 * @param {(action: string) => ((args: any, ctx: any) => unknown) | undefined} handlerOf
 */
export function schemaChecked(handlerOf) {
  return async (/** @type {string} */ action, /** @type {any} */ args, /** @type {any} */ ctx) => {
    const refused = argsRefusal(action, args);
    if (refused !== null) throw new BridgeError(CODE.BAD_REQUEST, refused);
    const handler = handlerOf(action);
    if (handler === undefined) throw new Error(`no handler for ${action}`);
    return handler(args, ctx);
  };
}
