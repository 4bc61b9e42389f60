// fetch-delivery.js — whether page_fetch's request reached the server, told from the tab's own
// CDP Network events (the debugger stays on owned tabs: docs/adr/0005). A fetch() that rejects
// says only "Failed to fetch", whether the connection was never made or the server answered and
// CORS hid the answer from the page; an agent told that a POST failed will send it again. So the
// watch files each request Chrome reports for the tab and judges the one page_fetch sent (same
// method and URL, not a CORS preflight): answered (a response, even one the page may not read),
// on the wire without an answer, or failed before it was sent. Measured (Chromium 156): a
// cross-origin POST answered without CORS headers gets `requestWillBeSentExtraInfo`,
// `responseReceivedExtraInfo` (the status) and `loadingFailed` {corsError:
// MissingAllowOriginHeader}; a refused connection only `loadingFailed` ERR_CONNECTION_REFUSED; a
// preflight refused `loadingFailed` {corsError: Preflight…} for the real request, which is never
// sent. Pure: events are fed in. It must never say "not sent" unless Chrome named a failure that
// happens before a request leaves (and nothing shows it on the wire), and never read a body.

/** What became of the request. */
export const DELIVERY = Object.freeze({
  ANSWERED: "answered",
  SENT_UNREADABLE: "sent_unreadable",
  NOT_SENT: "not_sent",
  UNKNOWN: "unknown",
});

/** Chrome's net errors that happen before any byte of the request is sent. */
const BEFORE_SENDING = new Set([
  "net::ERR_CONNECTION_REFUSED", "net::ERR_CONNECTION_TIMED_OUT", "net::ERR_NAME_NOT_RESOLVED",
  "net::ERR_NAME_RESOLUTION_FAILED", "net::ERR_ADDRESS_UNREACHABLE", "net::ERR_ADDRESS_INVALID",
  "net::ERR_INTERNET_DISCONNECTED", "net::ERR_BLOCKED_BY_CLIENT", "net::ERR_BLOCKED_BY_ADMINISTRATOR",
  "net::ERR_UNSAFE_PORT", "net::ERR_DISALLOWED_URL_SCHEME", "net::ERR_UNKNOWN_URL_SCHEME",
]);
/** CORS failures decided before the real request is sent (besides every Preflight… one). */
const CORS_BEFORE_SENDING = new Set(["DisallowedByMode", "UnsupportedScheme", "InvalidPrivateNetworkAccess",
  "UnexpectedPrivateNetworkAccess", "InsecurePrivateNetwork", "LocalNetworkAccessPermissionDenied"]);
/** Chrome's blocked reasons decided before the request is sent. */
const BLOCKED_BEFORE_SENDING = new Set(["mixed-content", "csp", "inspector", "subresource-filter", "origin"]);

/** Most requests of the tab remembered during one fetch (a page that floods is not followed
 * further; its requests are not ours). */
const MAX_SEEN = 2000;

/** @param {unknown} url */
function withoutFragment(url) {
  try {
    const u = new URL(String(url));
    u.hash = "";
    return u.href;
  } catch {
    return null;
  }
}

/**
 * @typedef {{ours: boolean, onWire: boolean, answered: boolean, done: boolean,
 *   failure: string | null, beforeSending: boolean}} Seen
 */

/**
 * A watch over one tab's Network events for the request `method url`.
 * @param {string} method
 * @param {string} url
 */
export function createDeliveryWatch(method, url) {
  const target = withoutFragment(url);
  /** @type {Map<string, Seen>} */
  const seen = new Map();
  /** @type {Array<() => void>} */
  const waiters = [];

  /** @param {string} id */
  const entry = (id) => {
    let s = seen.get(id);
    if (s === undefined) {
      s = { ours: false, onWire: false, answered: false, done: false, failure: null, beforeSending: false };
      if (seen.size < MAX_SEEN) seen.set(id, s);
    }
    return s;
  };
  const ours = () => [...seen.values()].filter((s) => s.ours);
  const settled = () => ours().length > 0 && ours().every((s) => s.done);

  return {
    /**
     * One CDP event of the tab (its own session only).
     * @param {string} name
     * @param {any} p
     */
    event(name, p) {
      const id = typeof p?.requestId === "string" ? p.requestId : null;
      if (id === null || !name.startsWith("Network.")) return;
      if (name === "Network.requestWillBeSent") {
        const r = p.request;
        const preflight = p.initiator?.type === "preflight" || p.type === "Preflight";
        if (!preflight && r?.method === method && target !== null && withoutFragment(r?.url) === target) entry(id).ours = true;
        else if (!seen.has(id)) return;
      } else if (name === "Network.requestWillBeSentExtraInfo") {
        entry(id).onWire = true;
      } else if (name === "Network.responseReceivedExtraInfo" || name === "Network.responseReceived") {
        const s = entry(id);
        s.onWire = true;
        s.answered = true;
      } else if (name === "Network.loadingFinished") {
        entry(id).done = true;
      } else if (name === "Network.loadingFailed") {
        const s = entry(id);
        s.done = true;
        const cors = typeof p.corsErrorStatus?.corsError === "string" ? p.corsErrorStatus.corsError : null;
        const blocked = typeof p.blockedReason === "string" ? p.blockedReason : null;
        const net = typeof p.errorText === "string" ? p.errorText : "";
        s.failure = (cors ?? blocked ?? net).slice(0, 100) || "failed";
        s.beforeSending = cors !== null ? cors.includes("Preflight") || CORS_BEFORE_SENDING.has(cors)
          : blocked !== null ? BLOCKED_BEFORE_SENDING.has(blocked)
            : BEFORE_SENDING.has(net) || net.startsWith("net::ERR_CERT_");
      } else return;
      if (settled()) for (const wake of waiters.splice(0)) wake();
    },

    /** Whether every request of ours Chrome reported has finished or failed. */
    settled,

    /** Resolves once settled (the caller bounds the wait). @returns {Promise<void>} */
    whenSettled: () => (settled() ? Promise.resolve() : new Promise((resolve) => { waiters.push(resolve); })),

    /**
     * What became of the request, after fetch() in the page rejected.
     * @returns {{delivery: string, reason: string}}
     */
    verdict() {
      const mine = ours();
      if (mine.length === 0) return { delivery: DELIVERY.UNKNOWN, reason: "Chrome reported no such request" };
      /** @param {Seen} s */
      const one = (s) => (s.answered ? DELIVERY.SENT_UNREADABLE
        : !s.onWire && s.done && s.failure !== null && s.beforeSending ? DELIVERY.NOT_SENT : DELIVERY.UNKNOWN);
      const each = mine.map(one);
      const reason = mine.map((s) => s.failure).find((f) => f !== null) ?? "no answer";
      if (each.every((d) => d === DELIVERY.NOT_SENT)) return { delivery: DELIVERY.NOT_SENT, reason };
      if (mine.length === 1) return { delivery: each[0], reason };
      return { delivery: DELIVERY.UNKNOWN, reason: "more than one identical request was in flight" };
    },
  };
}
