// nav-block.js — stops an agent tab's top frame from leaving for an unapproved origin BEFORE the
// request is sent: Chrome's declarativeNetRequest session rules, scoped to the tabs live sessions
// own (`tabIds`), block every main_frame request, and higher-priority allow rules let through the
// approved origins (exact: scheme, host and port). A link, a form submit, a location assignment,
// a meta refresh or a redirect hop (Chrome sees each hop as a new main_frame request) to any
// other origin fails with net::ERR_BLOCKED_BY_CLIENT and no byte reaches that server. Chrome then
// shows its error page in the tab; this module records the stop (the action that caused it
// reports `blocked`) and brings the tab back to the page it was on, so later calls keep working.
//
// Pure: no chrome. The session-rule calls, the tab moves and the load wait are injected
// (lib/chrome-api.js via background.js). It must never put a rule on a tab no live session owns
// (the person's tabs navigate freely), never allow an origin by prefix or wildcard
// (`|http://127.0.0.1:800/` does not match `http://127.0.0.1:8000/`, `|https://bank.test/` not
// `https://bank.test.evil.test/`), never touch session rules outside its own id range, and
// never replace the rules with an empty approved set before it has seen a policy (after a
// worker restart the persisted rules stand until then). The origin gate stays the second line:
// a tab that landed anyway is still refused after landing (handlers/nav.js checkLanded and
// handlers/interact.js landing).

import { normaliseOrigin, originOf } from "./origin.js";

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

/**
 * The urlFilter that matches exactly the URLs of `origin`: Chrome matches it against the
 * canonical URL (host lower-cased, default port dropped, path at least "/"), anchored at the
 * start by "|"; the "/" after the authority stops a longer port or host from matching.
 * @param {unknown} origin
 * @returns {string | null}
 */
export function allowFilter(origin) {
  const o = normaliseOrigin(origin);
  if (o === null || /[*^|\s]/.test(o)) return null;
  return `|${o}/`;
}

/**
 * The session rules for `tabIds` and the approved `origins`: none without a tab (Chrome refuses
 * an empty tabIds), else one block rule for every main_frame request of those tabs and one
 * higher-priority allow rule per approved origin (sorted, deduplicated, capped).
 * @param {Iterable<number>} tabIds
 * @param {Iterable<unknown>} origins
 * @returns {Array<{id: number, priority: number, action: {type: "block" | "allow"},
 *   condition: {tabIds: number[], resourceTypes: ["main_frame"], urlFilter?: string}}>}
 */
export function navBlockRules(tabIds, origins) {
  const tabs = [...new Set([...tabIds].filter((t) => Number.isInteger(t) && t >= 0))].sort((a, b) => a - b);
  if (tabs.length === 0) return [];
  const filters = [...new Set([...origins].map(allowFilter).filter((f) => f !== null))].sort().slice(0, MAX_ALLOWED_ORIGINS);
  /** @type {["main_frame"]} */
  const types = ["main_frame"];
  return [
    { id: RULE_ID_BASE, priority: 1, action: { type: "block" }, condition: { tabIds: tabs, resourceTypes: types } },
    ...filters.map((urlFilter, i) => ({
      id: RULE_ID_BASE + 1 + i, priority: 2, action: { type: /** @type {"allow"} */ ("allow") },
      condition: { tabIds: tabs, resourceTypes: types, urlFilter },
    })),
  ];
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
  && /** @type {number} */ (id) <= RULE_ID_BASE + MAX_ALLOWED_ORIGINS;

/**
 * @typedef {object} NavBlockDeps
 * @property {{getSessionRules: () => Promise<Array<{id: number}>>,
 *   updateSessionRules: (change: {removeRuleIds: number[], addRules: unknown[]}) => Promise<void>}} dnr
 * @property {{goBack: (tabId: number, allowed: (url: unknown) => boolean) => Promise<unknown>, updateTab: (tabId: number, props: {url: string}) => Promise<unknown>,
 *   getTab: (tabId: number) => Promise<any>, getFrame?: (tabId: number) => Promise<{errorOccurred?: boolean, url?: string} | null>}} browser
 * @property {(tabId: number, timeoutMs: number) => {promise: Promise<unknown>, cancel: () => void}} watchLoad
 *   lib/tab-load.js's watch
 * @property {import("./pending.js").Timers} [timers] (default: setTimeout)
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
 * @property {(tabId: number) => void} removed tabs.onRemoved
 * @property {() => unknown[]} rules the rules last applied (for inspection and tests)
 */

/**
 * @param {NavBlockDeps} deps
 * @returns {NavBlocker}
 */
export function createNavBlocker({ dnr, browser, watchLoad, timers, log = console }) {
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

  const allowedNow = () => new Set([...(approved ?? []), ...granted]);

  /** Rewrite the rules when what they should say changed; serialised, never rejects. */
  function sync() {
    chain = chain.then(async () => {
      if (approved === null) return;
      const want = navBlockRules(owned, allowedNow());
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
      await browser.goBack(tabId, (url) => allowedNow().has(originOf(url) ?? ""));
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
    if (!owned.has(tabId) || origin === null || allowedNow().has(origin)) return null;
    return origin;
  }

  return {
    tabs(tabIds) {
      owned = new Set([...tabIds].filter((t) => Number.isInteger(t)));
      return sync();
    },
    policy(origins) {
      const next = new Set((Array.isArray(origins) ? origins : []).map(normaliseOrigin).filter((o) => o !== null));
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
    },
    rules: () => applied,
  };
}
