// handlers/terminal-tap.js — the terminal's second factor (a program can type the phrase but
// cannot tap a key): `terminal_tap`, served only
// to the host's reserved "terminal" session (an attested `tabwarden` at a terminal). Once an
// authenticator is enrolled, a widening started at the terminal (`unkill`, `policy set`,
// `pair-client`, `pair --browser`) needs a tap as well as the phrase: the terminal mints the
// challenge (naming the exact action and its parameters), and this opens the extension's own
// confirm window in presence mode, shows the person what the terminal asks, runs the WebAuthn
// get() there with exactly the terminal's options (shared/presence-confirm.js), and returns the
// assertion to the terminal, which verifies it against the signed record. It must never run for
// any other session, never take options from the page, never return anything but the one
// assertion the person's tap made, and never grant anything itself.

import { BridgeError } from "../shared/bridge-error.js";
import { refuseUnlessAllowed } from "../shared/confirm-window.js";
import { CODE } from "../shared/error-codes.js";
import { TERMINAL_PRESENCE } from "../shared/presence-confirm.js";
import { isPlainObject } from "../shared/wire.js";
import { TERMINAL_SESSION } from "./tabs.js";

/** How long the window waits for the tap (the terminal's challenge lives 120 s). */
export const TERMINAL_TAP_TIMEOUT_MS = 90_000;
/** Longest summary of the terminal's request shown in the window. */
const MAX_SUMMARY = 2000;
/** A challenge id as trust/presence.py mints it (url-safe base64). */
const CHALLENGE_ID_RE = /^[A-Za-z0-9_-]{16,64}$/;
/** Longest options object (JSON), well above one credential list. */
const MAX_OPTIONS_CHARS = 64 * 1024;

/**
 * @param {{confirm: import("../shared/confirm-window.js").Confirm,
 *   presenceConfirm: ReturnType<typeof import("../shared/presence-confirm.js").createPresenceConfirm>}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function terminalTapHandlers({ confirm, presenceConfirm }) {
  return [
    ["terminal_tap", async (args, ctx) => {
      if (ctx.session !== TERMINAL_SESSION) throw new BridgeError(CODE.UNKNOWN_ACTION, 'unknown action "terminal_tap"');
      const { challengeId, command, summary, options } = isPlainObject(args) ? args : {};
      if (typeof challengeId !== "string" || !CHALLENGE_ID_RE.test(challengeId)
        || typeof command !== "string" || command === "" || command.length > 64
        || typeof summary !== "string" || summary === "" || summary.length > MAX_SUMMARY
        || !isPlainObject(options) || JSON.stringify(options).length > MAX_OPTIONS_CHARS) {
        throw new BridgeError(CODE.BAD_REQUEST, "terminal_tap needs challengeId, command, summary and options");
      }
      presenceConfirm.expectTerminal(challengeId, options);
      let response = null;
      try {
        const decision = await confirm({
          kind: "action",
          tool: `tabwarden ${command}`,
          detail: summary,
          presence: { action: TERMINAL_PRESENCE, detail: challengeId },
          timeoutMs: TERMINAL_TAP_TIMEOUT_MS,
          client: "your terminal",
        });
        response = presenceConfirm.takeTerminal(challengeId);
        refuseUnlessAllowed(decision, `\`tabwarden ${command}\``);
      } finally {
        presenceConfirm.takeTerminal(challengeId);
      }
      if (response === null) throw new BridgeError(CODE.CONFIRM_DENIED, "no tap was made");
      return { response };
    }],
  ];
}
