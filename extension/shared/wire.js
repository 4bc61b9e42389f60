// wire.js — hop-3 constants shared by the extension's modules (see docs/protocol.md, "Hop 3").
// Pure: no chrome, no I/O. It must never disagree with tabwarden.protocol.nativemsg.

/** Protocol version this extension speaks (sent in `hello`, required in `welcome`). */
export const PROTOCOL_VERSION = 1;

/** Native messaging host name (the host manifest's "name"). */
export const NATIVE_HOST_NAME = "dev.tabwarden.host";

/** Largest extension->host message the host accepts (MAX_BROWSER_TO_HOST), in UTF-8 bytes. */
export const MAX_BROWSER_TO_HOST = 16 * 1024 * 1024;

const encoder = new TextEncoder();

/**
 * Size in UTF-8 bytes of `value` serialized as JSON (what Chrome puts on the wire).
 * @param {unknown} value
 * @returns {number}
 */
export function jsonByteLength(value) {
  return encoder.encode(JSON.stringify(value)).length;
}

/**
 * True for `{...}` objects (JSON-shaped): prototype Object.prototype or null; not arrays,
 * class instances or null.
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
export function isPlainObject(value) {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
