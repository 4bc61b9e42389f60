// bridge-error.js — the one typed error a handler throws to choose a table error code.
// Pure: no chrome, no I/O. It must never carry a code outside the shared table (unknown codes
// are coerced to "internal_error") and must never be used to ship stack traces to the host.

import { CODE, isErrorCode } from "./error-codes.js";

/** Longest message text a BridgeError keeps (host-facing; keep replies small). */
export const MAX_ERROR_MESSAGE = 500;

/**
 * An error whose `code` is a row of the shared error table.
 * `new BridgeError(CODE.TAB_NOT_FOUND, "no tab 42")`.
 */
export class BridgeError extends Error {
  /**
   * @param {string} code a table code; anything else becomes "internal_error"
   * @param {string} [message] short human-readable text, truncated to MAX_ERROR_MESSAGE
   */
  constructor(code, message = "") {
    const text = String(message).slice(0, MAX_ERROR_MESSAGE);
    super(text);
    this.name = "BridgeError";
    /** @type {string} */
    this.code = isErrorCode(code) ? code : CODE.INTERNAL_ERROR;
    /** @type {string | null} the host's reason code for a refused tap (shared/presence-reasons.js), if any */
    this.reason = null;
  }
}
