// approval.js — one entry of the signed policy's `origins`: an exact origin (shared/origin.js) or a
// subdomain approval `scheme://*.domain[:port]` (docs/adr/0019). A subdomain approval approves the
// domain itself and every name below it by whole labels, on that scheme and port only — as
// Chrome's match pattern `https://*.example.com/*` does, which is the host permission it asks for.
// Pure: no chrome. It must never approve by string suffix (`evilexample.com` is not under
// `example.com`, nor is `example.com.evil.test`), never across schemes or ports, and it must
// refuse (approve nothing with it) a wildcard over a public suffix or over a domain that holds one
// below it (`*.com`, `*.co.uk`, `*.github.io`, `*.localhost`, `*.amazonaws.com`) even when a signed
// policy carries one: the rules are shared/public-suffixes.js, generated from the list the host
// validates with (trust/public_suffix_list.dat), so both sides refuse the same entries.

import { normaliseOrigin, originOf } from "./origin.js";
import { EXCEPTION, PLAIN, WILDCARD } from "./public-suffixes.js";

/** @param {string} text */
const setOf = (text) => new Set(text.split(" ").filter((s) => s !== ""));
const plain = setOf(PLAIN);
const wildcardParents = setOf(WILDCARD);
const exceptions = setOf(EXCEPTION);
/** Every domain with a public suffix strictly below it (trust/suffixes.py `_holders`). */
const holders = (() => {
  /** @type {Set<string>} */
  const out = new Set();
  for (const rule of plain) {
    const labels = rule.split(".");
    for (let i = 1; i < labels.length; i += 1) out.add(labels.slice(i).join("."));
  }
  for (const parent of wildcardParents) {
    const labels = parent.split(".");
    for (let i = 0; i < labels.length; i += 1) out.add(labels.slice(i).join("."));
  }
  return out;
})();

/**
 * True when `domain` (ASCII, lower-case) is a public suffix (trust/suffixes.py is_public_suffix).
 * @param {string} domain
 */
export function isPublicSuffix(domain) {
  if (exceptions.has(domain)) return false;
  if (plain.has(domain)) return true;
  const dot = domain.indexOf(".");
  if (dot < 0) return true; // the list's implicit "*": every top-level label
  return dot > 0 && wildcardParents.has(domain.slice(dot + 1));
}

/**
 * True when a subdomain approval over `domain` would cover sites of other owners.
 * @param {string} domain
 */
export const coversPublicSuffix = (domain) => isPublicSuffix(domain) || holders.has(domain);

/** A normalised subdomain approval: scheme, "://*.", a host name, an optional non-default port. */
const WILDCARD_ENTRY = /^(https?):\/\/\*\.([a-z0-9.-]+)(:[0-9]{1,5})?$/;

/**
 * @typedef {{kind: "exact", entry: string} |
 *   {kind: "wildcard", entry: string, scheme: string, domain: string, port: string} |
 *   {kind: "refused", entry: string, reason: string}} Approval
 *   port: "" or ":8443"
 */

/**
 * One `origins` entry read: exact, a valid subdomain approval, or refused (with the reason a
 * person reads on the options page). Only the host's normalised form counts (lower case, no
 * default port): anything else approves nothing. Null for an entry that is neither form.
 * @param {unknown} entry
 * @returns {Approval | null}
 */
export function readApproval(entry) {
  if (typeof entry !== "string") return null;
  if (!entry.includes("*")) {
    const exact = normaliseOrigin(entry);
    return exact === null ? null : { kind: "exact", entry: exact };
  }
  const m = WILDCARD_ENTRY.exec(entry);
  if (m === null) return { kind: "refused", entry, reason: "not a subdomain approval tabwarden can read" };
  const [, scheme, domain, port = ""] = m;
  const base = originOf(`${scheme}://${domain}${port}`);
  if (base !== `${scheme}://${domain}${port}` || /^[0-9.]+$/.test(domain)) {
    return { kind: "refused", entry, reason: "not a subdomain approval tabwarden can read" };
  }
  if (coversPublicSuffix(domain)) {
    return { kind: "refused", entry, reason: `${domain} is a public suffix or holds one: it would cover sites of other owners` };
  }
  return { kind: "wildcard", entry, scheme, domain, port };
}

/**
 * Whether one read approval approves the exact `origin` (from originOf).
 * @param {Approval} approval
 * @param {string} origin
 */
function approvesOne(approval, origin) {
  if (approval.kind === "exact") return approval.entry === origin;
  if (approval.kind !== "wildcard") return false;
  const prefix = `${approval.scheme}://`;
  if (!origin.startsWith(prefix)) return false;
  const authority = origin.slice(prefix.length);
  const host = approval.port === "" ? authority : authority.endsWith(approval.port) ? authority.slice(0, -approval.port.length) : null;
  if (host === null || host.includes(":") || host.includes("[")) return false;
  return host === approval.domain || host.endsWith(`.${approval.domain}`);
}

/**
 * True when one of `approvals` approves `origin` (normalised first; a malformed origin: false).
 * @param {string | null} origin
 * @param {readonly Approval[]} approvals
 */
export function approvesOrigin(origin, approvals) {
  if (typeof origin !== "string" || origin.includes("*")) return false;
  const want = normaliseOrigin(origin);
  if (want === null) return false;
  return approvals.some((a) => approvesOne(a, want));
}

/**
 * An entry in a person's words: "example.com and every subdomain (https)" for a subdomain
 * approval, the origin itself for an exact one.
 * @param {Approval} approval
 */
export function describeApproval(approval) {
  if (approval.kind !== "wildcard") return approval.entry;
  const where = approval.port === "" ? approval.scheme : `${approval.scheme}, port ${approval.port.slice(1)}`;
  return `${approval.domain} and every subdomain (${where})`;
}

/**
 * Chrome's host-permission pattern for a valid subdomain approval (`https://*.example.com/*`,
 * which also matches example.com itself), else null.
 * @param {Approval | null} approval
 */
export const wildcardPattern = (approval) => (approval !== null && approval.kind === "wildcard" ? `${approval.entry}/*` : null);
