// confirm.js — entry script of confirm.html, the extension-owned confirm window. Thin wiring
// only: hands the real document, chrome calls (via shared/chrome-api.js), WebAuthn get() (via
// ui/webauthn.js, presence mode), window.close() (after a refused tap), the window (its focus and
// blur) and the clock for the countdown and the input delay to ui/confirm-page.js. It must never
// hold confirmation logic itself.

import { growCurrentWindow, requestPermission, sendRuntimeMessage } from "./shared/chrome-api.js";
import { runConfirmPage } from "./ui/confirm-page.js";
import { getAssertion } from "./ui/webauthn.js";
import { reportPageErrors } from "./shared/page-errors.js";

// This page's own errors go to the host's log too (masked there, as the worker's are).
reportPageErrors("confirm", window, sendRuntimeMessage, { id: new URLSearchParams(location.search).get("id") });

runConfirmPage({
  doc: document,
  search: location.search,
  api: { sendMessage: sendRuntimeMessage, requestPermission, getAssertion, closeWindow: () => window.close(), growWindow: growCurrentWindow },
  clock: {
    now: () => Date.now(),
    every: (fn, ms) => setInterval(fn, ms),
    stop: (t) => clearInterval(/** @type {ReturnType<typeof setInterval>} */ (t)),
    after: (fn, ms) => setTimeout(fn, ms),
    cancel: (t) => clearTimeout(/** @type {ReturnType<typeof setTimeout>} */ (t)),
  },
  win: window,
}).catch((err) => { console.warn("tabwarden: confirm page failed", err); reportError(err); });
