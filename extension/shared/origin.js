// origin.js — exact web origins: what a URL's origin is, whether the policy approved it, and the
// Chrome host-permission pattern that covers it. Pure: no chrome. It must never approve by
// prefix, suffix or wildcard (`http://127.0.0.1.evil.test` is not `http://127.0.0.1`), never
// treat two ports as one origin, and never return an origin for a scheme other than http/https.

const DEFAULT_PORTS = Object.freeze({ "http:": "80", "https:": "443" });

/** A bare origin string: scheme://authority, nothing after it (not even "/"). */
const BARE_ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\\@\s]+$/;

/**
 * The exact origin `scheme://host[:port]` of an http/https URL: lower-case host (the URL
 * parser also punycodes IDNs and canonicalises IPv4/IPv6), default port dropped. Null for
 * anything else (other schemes, unparsable input, URLs carrying credentials).
 * @param {unknown} url
 * @returns {string | null}
 */
export function originOf(url) {
  if (typeof url !== "string" || url.length === 0 || url.length > 8192) return null;
  let u;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (!Object.hasOwn(DEFAULT_PORTS, u.protocol)) return null;
  if (u.username !== "" || u.password !== "") return null;
  const host = u.hostname.toLowerCase();
  if (host === "") return null;
  const port = u.port === "" || u.port === DEFAULT_PORTS[/** @type {keyof typeof DEFAULT_PORTS} */ (u.protocol)] ? "" : `:${u.port}`;
  return `${u.protocol}//${host}${port}`;
}

/**
 * Whether a frame at `url` takes its creator's origin (about:blank, about:srcdoc, not yet loaded).
 * @param {unknown} url
 */
export const inheritsOrigin = (url) => url === "about:blank" || url === "about:srcdoc" || url === "";

/**
 * The origin a read inside a page or frame came from: its URL's, or, for a document that took its
 * creator's origin (`inheritsOrigin`), the document's own origin (`window.origin`) as the read saw it (a
 * sandboxed one's is "null": no origin). `read` is what the in-page read returned: `{href, origin?}`.
 * @param {unknown} read
 * @returns {string | null}
 */
export function originOfRead(read) {
  if (read === null || typeof read !== "object") return null;
  const { href, origin } = /** @type {{href?: unknown, origin?: unknown}} */ (read);
  if (inheritsOrigin(href) && typeof origin === "string" && origin !== "null") return originOf(origin);
  return originOf(href);
}

/**
 * Normalise a policy entry that must itself be a bare origin (no path, no "/" at the end).
 * @param {unknown} entry
 * @returns {string | null}
 */
export function normaliseOrigin(entry) {
  if (typeof entry !== "string" || !BARE_ORIGIN.test(entry)) return null;
  return originOf(entry);
}

/**
 * True when `origin` (already from originOf) equals one of the approved origins exactly,
 * after normalising both. Malformed entries approve nothing.
 * @param {string | null} origin
 * @param {unknown} approved policy.origins
 * @returns {boolean}
 */
export function isApproved(origin, approved) {
  if (typeof origin !== "string" || !Array.isArray(approved)) return false;
  const want = normaliseOrigin(origin);
  if (want === null) return false;
  return approved.some((entry) => normaliseOrigin(entry) === want);
}

/**
 * The optional host permission to request for `origin`, e.g. "http://127.0.0.1:8000/*".
 * Chrome match patterns accept an explicit port (without one they match every port), so a
 * non-default port is kept; for a default port the pattern has none and so covers every port
 * of that host at Chrome's level. That is acceptable because the exact-origin check above is
 * ours and runs before every page tool. Null when `origin` is not a bare http/https origin.
 * @param {unknown} origin
 * @returns {string | null}
 */
export function permissionPattern(origin) {
  const o = normaliseOrigin(origin);
  return o === null ? null : `${o}/*`;
}
