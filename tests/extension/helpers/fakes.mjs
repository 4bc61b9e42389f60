// fakes.mjs — deterministic test doubles for the extension's injected seams: a fake clock with
// timers, a fake port (session.js's PortLike) and a recording logger. Test-only.

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
