// background.js — the MV3 service worker entry. Thin wiring only: builds the dispatcher, backoff
// and session from the lib/ modules, connects at top level (so every worker start connects) and
// registers the runtime listeners synchronously. It must never hold protocol logic (that lives in
// lib/session.js and lib/dispatch.js) and never let an error escape a listener uncaught.

/* global chrome */

import { createBackoff, equalJitter } from "./lib/backoff.js";
import { connectNative, extensionVersion, queryAllTabs } from "./lib/chrome-api.js";
import { createDispatcher } from "./lib/dispatch.js";
import { createSession } from "./lib/session.js";
import { NATIVE_HOST_NAME } from "./lib/wire.js";
import { tabHandlers } from "./handlers/tabs.js";

const log = console;

const dispatcher = createDispatcher([...tabHandlers({ queryAllTabs })], { log });

const session = createSession({
  connect: () => connectNative(NATIVE_HOST_NAME),
  dispatcher,
  // Cap below the ~30 s idle shutdown of MV3 workers: an open native port keeps the worker
  // alive, but while waiting to reconnect only this timer does.
  backoff: createBackoff({ initialMs: 250, maxMs: 20_000, healthyMs: 10_000, jitter: equalJitter(Math.random) }),
  timers: {
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (handle) => clearTimeout(/** @type {number} */ (handle)),
  },
  now: () => performance.now(),
  extensionVersion: extensionVersion(),
  log,
});

/** Connect unless already connected or a reconnect is pending; never throws. */
function ensureConnected() {
  try {
    session.start();
  } catch (err) {
    log.warn("tabwarden: could not start the native session", err);
  }
}

chrome.runtime.onInstalled.addListener(ensureConnected);
chrome.runtime.onStartup.addListener(ensureConnected);

ensureConnected();

/** For inspection from the service worker console: `session.snapshot()`. */
export { session };
