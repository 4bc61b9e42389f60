// nav-block.js — stops an agent tab's top frame from leaving for an unapproved origin BEFORE the
// request is sent: Chrome's declarativeNetRequest session rules, scoped to the tabs live sessions
// own (`tabIds`), block every main_frame request, and higher-priority allow rules let through the
// approved origins (exact: scheme, host and port). A link, a form submit, a location assignment,
// a meta refresh or a redirect hop (Chrome sees each hop as a new main_frame request) to any
// other origin fails with net::ERR_BLOCKED_BY_CLIENT and no byte reaches that server. Chrome then
// shows its error page in the tab; this module records the stop (the action that caused it
// reports `blocked`) and brings the tab back to the page it was on, so later calls keep working.
//
// A tab an owned tab opens (window.open, target=_blank) has no id before Chrome creates it, and its
// first request can leave before a rule naming it exists (measured: 1 in 12). So a second family
// of rules exists BEFORE any popup: main_frame requests initiated by a page on an approved site's
// host, from every tab but the ones known to be the person's (`excludedTabIds`), to any origin
// but the approved ones, are blocked too. The price is on the person's side: a tab the person
// opens from a page on one of those hosts can have its first request blocked before its id is
// excluded; once Chrome says the tab's opener is not a live session's tab (never for an agent's
// popup), that navigation is sent again, once (a form POST's body is not: the page shows Chrome's
// error page and a reload asks to resubmit).
//
// Pure: no chrome. The session-rule calls, the tab moves and the load wait are injected
// (shared/chrome-api.js via background.js). It must never put a rule on a tab no live session owns
// (the person's tabs navigate freely), never allow an origin by prefix or wildcard
// (`|http://127.0.0.1:800/` does not match `http://127.0.0.1:8000/`, `|https://bank.test/` not
// `https://bank.test.evil.test/`), never touch session rules outside its own id range, and
// never replace the rules with an empty approved set before it has seen a policy (after a
// worker restart the persisted rules stand until then). The origin gate stays the second line:
// a tab that landed anyway is still refused after landing (handlers/nav.js checkLanded and
// handlers/interact.js landing).
//
// A subdomain approval (`https://*.example.com`, shared/approval.js, docs/adr/0019) is one allow
// rule whose regexFilter matches that scheme, the domain or a name below it by whole labels, and
// that port only (`^https://([a-z0-9-]+\.)*example\.com/`): never `evilexample.com` nor
// `example.com.evil.test`. A wildcard over a public suffix is no approval (it adds no rule).

import { approvesOrigin, readApproval } from "../shared/approval.js";
import { normaliseOrigin, originOf } from "../shared/origin.js";

/** The block rule's id; the allow rules follow it (Chrome's session rules are per extension). */
export const RULE_ID_BASE = 7100;
/** Most approved origins one rule set carries (Chrome allows 5000 session rules). */
export const MAX_ALLOWED_ORIGINS = 2000;
/** The error Chrome reports for a request an extension's rule blocked. */
export const BLOCKED_ERROR = "net::ERR_BLOCKED_BY_CLIENT";
/** How long bringing a stopped tab back may wait for its page to load again. */
export const RESTORE_LOAD_MS = 15_000;
/** Loads a tab being brought back is looked at (the first may still be the error page's). */
const RESTORE_LOOKS = 3;
/** How long stopped() waits for Chrome's onErrorOccurred when the tab already shows the page. */
export const STOP_EVENT_WAIT_MS = 3000;
/** Where a stopped tab goes when it has no page to go back to (a page tool refuses it then). */
export const RESTORE_FALLBACK_URL = "about:blank";
/** The opened-tab family's block rule's id (its allow rules follow), after the per-tab family. */
export const OPENED_RULE_ID_BASE = RULE_ID_BASE + MAX_ALLOWED_ORIGINS + 1;
/** How long after a person's tab opened a stop of its navigation is taken for ours and sent again. */
export const RESEND_WINDOW_MS = 30_000;
/** How long a new tab whose opener tabs.onCreated names as a live session's tab is held for
 * webNavigation to confirm that tab opened it (Chrome also names the active tab as the opener of
 * a tab it did not open, e.g. one a DevTools client created); unconfirmed, it is the person's. */
export const HOLD_MS = 2000;

/**
 * The urlFilter that matches exactly the URLs of `origin`: Chrome matches it against the
 * canonical URL (host lower-cased, default port dropped, path at least "/"), anchored at the
 * start by "|"; the "/" after the authority stops a longer port or host from matching.
 * @param {unknown} origin
 * @returns {string | null}
 */
export function allowFilter(origin) {
  // Chrome's URL parser takes `*` as a host character (`%2a`): a wildcard is never exact here.
  if (typeof origin === "string" && origin.includes("*")) return null;
  const o = normaliseOrigin(origin);
  if (o === null || /[*^|\s]/.test(o)) return null;
  return `|${o}/`;
}

/**
 * The regexFilter that matches exactly the URLs a valid subdomain approval approves (Chrome
 * matches the canonical URL: default port dropped, path at least "/"), else null.
 * @param {unknown} entry
 * @returns {string | null}
 */
export function allowRegex(entry) {
  const a = readApproval(entry);
  if (a === null || a.kind !== "wildcard") return null;
  return `^${a.scheme}://([a-z0-9-]+\\.)*${a.domain.replaceAll(".", "\\.")}${a.port}/`;
}

/**
 * The allow condition for one approval: an exact origin's urlFilter or a subdomain approval's
 * regexFilter; null for anything else.
 * @param {unknown} entry
 * @returns {{urlFilter: string} | {regexFilter: string} | null}
 */
function allowCondition(entry) {
  const url = allowFilter(entry);
  if (url !== null) return { urlFilter: url };
  const regex = allowRegex(entry);
  return regex === null ? null : { regexFilter: regex };
}

/**
 * The host of an approved origin as declarativeNetRequest's `initiatorDomains` takes it (a
 * name or an IPv4 address; not an IPv6 literal, which it does not match), else null.
 * @param {unknown} origin
 * @returns {string | null}
 */
export function initiatorHost(origin) {
  const a = readApproval(origin);
  // A subdomain approval's domain: initiatorDomains matches it and every name below it.
  if (a !== null && a.kind === "wildcard") return a.domain;
  const o = normaliseOrigin(origin);
  if (o === null) return null;
  let host;
  try {
    host = new URL(o).hostname;
  } catch {
    return null;
  }
  return /^[a-z0-9.-]+$/.test(host) && host !== "" ? host : null;
}

/** @param {Iterable<number>} ids */
const tabList = (ids) => [...new Set([...ids].filter((t) => Number.isInteger(t) && t >= 0))].sort((a, b) => a - b);

/**
 * @typedef {{id: number, priority: number, action: {type: "block" | "allow"},
 *   condition: {tabIds?: number[], excludedTabIds?: number[], initiatorDomains?: string[],
 *   resourceTypes: ["main_frame"], urlFilter?: string, regexFilter?: string}}} Rule
 */

/**
 * The session rules for `tabIds` and the approved `origins`: none without a tab (Chrome refuses
 * an empty tabIds), else one block rule for every main_frame request of those tabs and one
 * higher-priority allow rule per approved origin (sorted, deduplicated, capped). With `opened`
 * (every tab known to be the person's), the opened-tab family too: the same block and allows
 * for requests a page on an approved host initiates, from any tab but those.
 * @param {Iterable<number>} tabIds
 * @param {Iterable<unknown>} origins
 * @param {{excluded: Iterable<number>} | null} [opened]
 * @returns {Rule[]}
 */
export function navBlockRules(tabIds, origins, opened = null) {
  const tabs = tabList(tabIds);
  if (tabs.length === 0) return [];
  const approved = [...origins];
  const filters = [...new Set(approved.map(allowCondition).filter((f) => f !== null).map((f) => JSON.stringify(f)))]
    .sort().slice(0, MAX_ALLOWED_ORIGINS).map((f) => /** @type {{urlFilter: string} | {regexFilter: string}} */ (JSON.parse(f)));
  /** @type {["main_frame"]} */
  const types = ["main_frame"];
  /** @type {Rule[]} */
  const rules = [
    { id: RULE_ID_BASE, priority: 1, action: { type: "block" }, condition: { tabIds: tabs, resourceTypes: types } },
    ...filters.map((filter, i) => ({
      id: RULE_ID_BASE + 1 + i, priority: 2, action: { type: /** @type {"allow"} */ ("allow") },
      condition: { tabIds: tabs, resourceTypes: types, ...filter },
    })),
  ];
  const hosts = [...new Set(approved.map(initiatorHost).filter((h) => h !== null))].sort();
  if (opened === null || opened === undefined || hosts.length === 0) return rules;
  const excluded = tabList(opened.excluded);
  /** @type {{excludedTabIds?: number[], initiatorDomains: string[], resourceTypes: ["main_frame"]}} */
  const scope = { initiatorDomains: hosts, resourceTypes: types, ...(excluded.length > 0 ? { excludedTabIds: excluded } : {}) };
  rules.push(
    { id: OPENED_RULE_ID_BASE, priority: 1, action: { type: "block" }, condition: scope },
    ...filters.map((filter, i) => ({
      id: OPENED_RULE_ID_BASE + 1 + i, priority: 2, action: { type: /** @type {"allow"} */ ("allow") },
      condition: { ...scope, ...filter },
    })),
  );
  return rules;
}

/**
 * Back to the page the tab was on: through the tab's debugger attachment when it has one, to the
 * entry next to the error page's (the one before it; for a history move that was stopped, the
 * one after) whose URL `allowed` accepts (Page.navigateToHistoryEntry goes to exactly that
 * entry; Chrome's tabs.goBack skips entries a page left without a user gesture — every page an
 * agent clicked away from — and would land further back), else tabs.goBack. Rejects when there
 * is no such entry.
 * @param {{send: (tabId: number, method: string, params?: Record<string, unknown>) => Promise<unknown>,
 *   goBack: (tabId: number) => Promise<unknown>}} via
 * @param {number} tabId
 * @param {(url: unknown) => boolean} [allowed]
 */
export async function backOneEntry({ send, goBack }, tabId, allowed = () => true) {
  let history;
  try {
    history = /** @type {any} */ (await send(tabId, "Page.getNavigationHistory"));
  } catch {
    return goBack(tabId); // no debugger on the tab
  }
  const index = history?.currentIndex;
  const entries = Array.isArray(history?.entries) ? history.entries : [];
  const entry = Number.isInteger(index)
    ? [entries[index - 1], entries[index + 1]].find((e) => Number.isInteger(e?.id) && allowed(e?.url))
    : undefined;
  if (entry === undefined) throw new Error("no page to go back to");
  await send(tabId, "Page.navigateToHistoryEntry", { entryId: entry.id });
}

/** True for a rule id this module owns. @param {unknown} id */
export const ownRuleId = (id) => Number.isInteger(id) && /** @type {number} */ (id) >= RULE_ID_BASE
  && /** @type {number} */ (id) <= OPENED_RULE_ID_BASE + MAX_ALLOWED_ORIGINS;

/**
 * @typedef {object} NavBlockDeps
 * @property {{getSessionRules: () => Promise<Array<{id: number}>>,
 *   updateSessionRules: (change: {removeRuleIds: number[], addRules: unknown[]}) => Promise<void>}} dnr
 * @property {{goBack: (tabId: number, allowed: (url: unknown) => boolean) => Promise<unknown>, updateTab: (tabId: number, props: {url: string}) => Promise<unknown>,
 *   getTab: (tabId: number) => Promise<any>, getFrame?: (tabId: number) => Promise<{errorOccurred?: boolean, url?: string} | null>}} browser
 * @property {(tabId: number, timeoutMs: number) => {promise: Promise<unknown>, cancel: () => void}} watchLoad
 *   worker/tab-load.js's watch
 * @property {import("./pending.js").Timers} [timers] (default: setTimeout)
 * @property {() => number} [now] milliseconds (default: Date.now)
 * @property {{warn: (...a: unknown[]) => void}} [log]
 */

/** One stop: the origin it kept the tab from, and the number it was recorded under. */
/** @typedef {{origin: string, seq: number}} Stop */

/**
 * @typedef {object} NavBlocker
 * @property {(tabIds: Iterable<number>) => Promise<void>} tabs the live sessions' tabs (every
 *   ownership change); resolves once the rules say so
 * @property {(origins: unknown) => Promise<void>} policy the approved origins of the latest
 *   policy a request carried; resolves once the rules say so
 * @property {(origin: string) => Promise<void>} allow an origin the gate approved during a call
 *   (not yet in the call's policy): allowed BEFORE the navigation to it starts
 * @property {(details: unknown) => void} failed chrome.webNavigation.onErrorOccurred
 * @property {(tabId: number) => {seen: () => Stop | null, cancel: () => void}} watch arm before
 *   an action: the first stop on the tab while armed
 * @property {(tabId: number, url: unknown) => Promise<boolean>} stopped whether the tab showing
 *   `url` is Chrome's error page for a stop of ours; when it is, resolves once the tab is back
 * @property {(tabId: number) => Promise<void>} restored resolves when no bringing-back is under way
 * @property {(tabIds: Iterable<number>) => Promise<void>} everyTab every tab open when the worker
 *   started (until this is known the opened-tab family is not applied: it would block the person)
 * @property {(tabId: unknown, openerTabId: unknown) => Promise<void>} created tabs.onCreated: a tab
 *   a live session's tab opened waits to join it; any other is the person's and is excluded
 * @property {(tabId: unknown, sourceTabId: unknown) => Promise<void>} sourced
 *   webNavigation.onCreatedNavigationTarget: which tab opened `tabId` (the word that decides
 *   whether a stopped first navigation of it is sent again)
 * @property {(tabId: number) => void} removed tabs.onRemoved
 * @property {() => unknown[]} rules the rules last applied (for inspection and tests)
 */

/**
 * @param {NavBlockDeps} deps
 * @returns {NavBlocker}
 */
export function createNavBlocker({ dnr, browser, watchLoad, timers, now = () => Date.now(), log = console }) {
  const setTimer = timers?.setTimer ?? ((/** @type {() => void} */ fn, /** @type {number} */ ms) => setTimeout(fn, ms));
  const clearTimer = timers?.clearTimer ?? ((/** @type {unknown} */ h) => clearTimeout(/** @type {any} */ (h)));
  /** @type {Set<number>} */
  let owned = new Set();
  /** The latest policy's origins; null until a request carried one. @type {Set<string> | null} */
  let approved = null;
  /** Origins the gate approved during a call that no policy has listed yet. @type {Set<string>} */
  const granted = new Set();
  /** @type {unknown[]} */
  let applied = [];
  let appliedKey = "";
  /** @type {Promise<void>} */
  let chain = Promise.resolve();
  let seq = 0;
  /** tabId -> its latest stop. @type {Map<number, Stop>} */
  const lastStop = new Map();
  /** tabId -> the bringing-back under way. @type {Map<number, Promise<void>>} */
  const restoring = new Map();
  /** tabId -> armed watches. @type {Map<number, Set<{take: (s: Stop) => void}>>} */
  const watching = new Map();
  /** Every tab known not to be an agent's popup waiting to join. @type {Set<number>} */
  const others = new Set();
  /** Whether the worker's start has listed the open tabs (until then no opened-tab rule). */
  let listed = false;
  /** Tabs a live session's tab opened (or, unconfirmed yet, may have), not yet (or never) joined:
   * not excluded. @type {Set<number>} */
  const pending = new Set();
  /** tabId -> the timer that ends its unconfirmed hold (a pending tab without one is confirmed:
   * webNavigation said a live session's tab opened it). @type {Map<number, unknown>} */
  const holds = new Map();
  /** tabId -> when tabs.onCreated reported it. @type {Map<number, number>} */
  const born = new Map();
  /** Tabs of the person's whose stopped navigation was sent again already. @type {Set<number>} */
  const resent = new Set();
  /** Tabs Chrome said a tab no live session owns opened. @type {Set<number>} */
  const persons = new Set();
  /** tabId -> the URL of a stop that may be the opened-tab family's. @type {Map<number, string>} */
  const stoppedAt = new Map();

  const allowedNow = () => new Set([...(approved ?? []), ...granted]);
  /** Whether an origin is allowed now: listed exactly, or under a subdomain approval. */
  const allowedHas = (/** @type {string | null} */ origin) => {
    const now = allowedNow();
    if (origin === null) return false;
    if (now.has(origin)) return true;
    const approvals = [...now].map(readApproval).filter((a) => a !== null && a.kind === "wildcard");
    return approvesOrigin(origin, /** @type {import("../shared/approval.js").Approval[]} */ (approvals));
  };
  const excludedNow = () => [...others].filter((t) => !owned.has(t) && !pending.has(t));
  /** @param {number} tabId */
  const confirmedPopup = (tabId) => pending.has(tabId) && !holds.has(tabId);

  /** Rewrite the rules when what they should say changed; serialised, never rejects. */
  function sync() {
    chain = chain.then(async () => {
      if (approved === null) return;
      const want = navBlockRules(owned, allowedNow(), listed ? { excluded: excludedNow() } : null);
      const key = JSON.stringify(want);
      if (key === appliedKey) return;
      try {
        const old = await dnr.getSessionRules();
        const removeRuleIds = (Array.isArray(old) ? old : []).map((r) => r?.id).filter(ownRuleId);
        await dnr.updateSessionRules({ removeRuleIds, addRules: want });
        applied = want;
        appliedKey = key;
      } catch (err) {
        log.warn("tabwarden: could not update the navigation rules; the check after landing still refuses", err);
      }
    });
    return chain;
  }

  /**
   * Take the tab back one entry, once (or empty it when there is none), then wait until it no
   * longer shows the stopped origin (a "complete" seen meanwhile may still be the error page's).
   * @param {number} tabId
   */
  async function bringBack(tabId) {
    const stop = lastStop.get(tabId);
    if (stop === undefined) return;
    const away = async () => {
      const tab = await browser.getTab(tabId).catch(() => null);
      return tab === null || (originOf(tab?.url) !== stop.origin && originOf(tab?.pendingUrl) !== stop.origin);
    };
    if (await away()) return;
    let load = watchLoad(tabId, RESTORE_LOAD_MS);
    try {
      await browser.goBack(tabId, (url) => allowedHas(originOf(url)));
    } catch {
      // No entry before the error page (the tab's first navigation): leave it empty.
      await browser.updateTab(tabId, { url: RESTORE_FALLBACK_URL }).catch(() => {});
    }
    for (let look = 0; look < RESTORE_LOOKS; look++) {
      await load.promise.catch(() => undefined);
      if (await away()) return;
      load = watchLoad(tabId, RESTORE_LOAD_MS);
    }
    load.cancel();
    log.warn("tabwarden: a stopped tab did not come back to its page");
  }

  /**
   * @param {number} tabId
   * @param {string} origin
   */
  function record(tabId, origin) {
    const stop = { origin, seq: ++seq };
    lastStop.set(tabId, stop);
    for (const w of [...(watching.get(tabId) ?? [])]) w.take(stop);
    if (!restoring.has(tabId)) {
      const done = bringBack(tabId)
        .catch((err) => log.warn("tabwarden: could not bring a stopped tab back", err))
        .finally(() => restoring.delete(tabId));
      restoring.set(tabId, done);
    }
  }

  /**
   * The tab's next stop, or null after STOP_EVENT_WAIT_MS.
   * @param {number} tabId
   * @returns {{promise: Promise<Stop | null>, cancel: () => void}}
   */
  function nextStop(tabId) {
    /** @type {(s: Stop | null) => void} */
    let settle = () => {};
    const promise = /** @type {Promise<Stop | null>} */ (new Promise((resolve) => { settle = resolve; }));
    let set = watching.get(tabId);
    if (set === undefined) watching.set(tabId, (set = new Set()));
    const w = { take: (/** @type {Stop} */ s) => done(s) };
    const timer = setTimer(() => done(null), STOP_EVENT_WAIT_MS);
    /** @param {Stop | null} s */
    function done(s) {
      clearTimer(timer);
      const mine = watching.get(tabId);
      mine?.delete(w);
      if (mine?.size === 0) watching.delete(tabId);
      settle(s);
    }
    set.add(w);
    return { promise, cancel: () => done(null) };
  }

  /**
   * A stop of ours: an owned tab's top frame, Chrome's "blocked by client", an origin our rules
   * do not allow.
   * @param {number} tabId
   * @param {unknown} url
   * @returns {string | null} the origin stopped
   */
  function ours(tabId, url) {
    const origin = originOf(url);
    if (!owned.has(tabId) || origin === null || allowedHas(origin)) return null;
    return origin;
  }

  /**
   * A person's tab whose first navigation one of our opened-tab rules stopped: once Chrome said
   * which tab opened it (webNavigation's sourceTabId, not a live session's) and the stop came,
   * exclude it and send that navigation again, once.
   * @param {number} tabId
   */
  async function resend(tabId) {
    const url = stoppedAt.get(tabId);
    if (url === undefined || !persons.has(tabId) || resent.has(tabId) || owned.has(tabId) || confirmedPopup(tabId) || !listed) return;
    resent.add(tabId);
    stoppedAt.delete(tabId);
    others.add(tabId);
    await sync();
    if (!excludedNow().includes(tabId)) return;
    await browser.updateTab(tabId, { url });
  }

  /** @param {number} tabId */
  function endHold(tabId) {
    const hold = holds.get(tabId);
    if (hold !== undefined) clearTimer(hold);
    holds.delete(tabId);
  }

  /**
   * The tab is the person's: excluded from now on, and a stop of ours on it sent on.
   * @param {number} tabId
   */
  function toPerson(tabId) {
    endHold(tabId);
    pending.delete(tabId);
    persons.add(tabId);
    others.add(tabId);
    sync();
    resend(tabId).catch((err) => log.warn("tabwarden: could not send a new tab's navigation again", err));
  }

  /**
   * Whether a stop on a tab that is not a live session's may be one of the opened-tab family's.
   * @param {number} tabId
   * @param {unknown} url
   */
  function personStopped(tabId, url) {
    if (owned.has(tabId) || confirmedPopup(tabId) || resent.has(tabId) || typeof url !== "string") return false;
    const origin = originOf(url);
    if (origin === null || allowedHas(origin) || !/^https?:/.test(url)) return false;
    if (!applied.some((r) => /** @type {any} */ (r)?.id === OPENED_RULE_ID_BASE)) return false;
    const at = born.get(tabId);
    // Open before the worker started: excluded since the family first existed, so not ours.
    if (at === undefined) return !others.has(tabId);
    return now() - at <= RESEND_WINDOW_MS;
  }

  return {
    tabs(tabIds) {
      owned = new Set([...tabIds].filter((t) => Number.isInteger(t)));
      // A popup that joined is a session's tab like any other from now on (an orphan later).
      for (const t of owned) {
        if (!pending.delete(t)) continue;
        endHold(t);
        others.add(t);
      }
      return sync();
    },
    everyTab(tabIds) {
      for (const t of tabIds) if (Number.isInteger(t) && !pending.has(t)) others.add(t);
      listed = true;
      return sync();
    },
    created(tabId, openerTabId) {
      if (!Number.isInteger(tabId) || /** @type {number} */ (tabId) < 0) return chain;
      const id = /** @type {number} */ (tabId);
      born.set(id, now());
      if (confirmedPopup(id) || persons.has(id)) return chain; // webNavigation spoke first
      if (Number.isInteger(openerTabId) && owned.has(/** @type {number} */ (openerTabId))) {
        pending.add(id);
        // Confirming, joining or closing clears it first: if it fires, nothing confirmed it.
        endHold(id);
        holds.set(id, setTimer(() => toPerson(id), HOLD_MS));
      } else others.add(id);
      return sync();
    },
    policy(origins) {
      const read = (Array.isArray(origins) ? origins : []).map(readApproval);
      const next = new Set(read.flatMap((a) => (a === null || a.kind === "refused" ? [] : [a.entry])));
      for (const o of next) granted.delete(o);
      approved = next;
      return sync();
    },
    allow(origin) {
      const o = normaliseOrigin(origin);
      if (o === null || (approved?.has(o) ?? false) || granted.has(o)) return chain;
      granted.add(o);
      if (approved === null) approved = new Set();
      return sync();
    },
    failed(details) {
      if (details === null || typeof details !== "object") return;
      const d = /** @type {{tabId?: unknown, frameId?: unknown, error?: unknown, url?: unknown}} */ (details);
      if (d.frameId !== 0 || d.error !== BLOCKED_ERROR || !Number.isInteger(d.tabId)) return;
      const tabId = /** @type {number} */ (d.tabId);
      const origin = ours(tabId, d.url);
      if (origin !== null) record(tabId, origin);
      else if (personStopped(tabId, d.url)) {
        stoppedAt.set(tabId, /** @type {string} */ (d.url));
        resend(tabId).catch((err) => log.warn("tabwarden: could not send a new tab's navigation again", err));
      }
    },
    sourced(tabId, sourceTabId) {
      if (!Number.isInteger(tabId) || /** @type {number} */ (tabId) < 0) return chain;
      const id = /** @type {number} */ (tabId);
      if (Number.isInteger(sourceTabId) && owned.has(/** @type {number} */ (sourceTabId))) {
        // An agent tab's (tabs.onCreated may not have named the opener): held until it joins.
        endHold(id);
        if (!owned.has(id)) {
          pending.add(id);
          others.delete(id);
        }
        return sync();
      }
      toPerson(id);
      return chain;
    },
    watch(tabId) {
      /** @type {Stop | null} */
      let first = null;
      let set = watching.get(tabId);
      if (set === undefined) watching.set(tabId, (set = new Set()));
      const w = { take: (/** @type {Stop} */ s) => { if (first === null) first = s; } };
      set.add(w);
      return {
        seen: () => first,
        cancel: () => {
          const s = watching.get(tabId);
          s?.delete(w);
          if (s?.size === 0) watching.delete(tabId);
        },
      };
    },
    async stopped(tabId, url) {
      const origin = ours(tabId, url);
      if (origin === null) return false;
      if (lastStop.get(tabId)?.origin !== origin) {
        // The tab may show the error page before Chrome's onErrorOccurred reached us: its top
        // frame says so, or the event comes within STOP_EVENT_WAIT_MS.
        const next = nextStop(tabId);
        const frame = typeof browser.getFrame === "function" ? await browser.getFrame(tabId).catch(() => null) : null;
        if (frame !== null && frame.errorOccurred === true && originOf(frame.url) === origin) {
          next.cancel();
          if (lastStop.get(tabId)?.origin !== origin) record(tabId, origin);
        } else if ((await next.promise)?.origin !== origin) {
          return false;
        }
      }
      await restoring.get(tabId);
      return true;
    },
    async restored(tabId) {
      await restoring.get(tabId);
    },
    removed(tabId) {
      lastStop.delete(tabId);
      watching.delete(tabId);
      pending.delete(tabId);
      endHold(tabId);
      born.delete(tabId);
      resent.delete(tabId);
      persons.delete(tabId);
      stoppedAt.delete(tabId);
      if (others.delete(tabId)) sync();
    },
    rules: () => applied,
  };
}
