// form-urls.js — the URLs owned tabs reached by submitting a GET form: such a URL carries what a
// person typed into the form (a password in a login form that uses GET), so every reply masks
// each of its query values wherever the URL appears (worker/mask.js `learnedUrlRule`, applied by
// worker/dispatch.js). Learned from Chrome's word only: webNavigation.onCommitted's transitionType
// "form_submit" and the debugger's Page.frameRequestedNavigation reason "formSubmissionGet".
// Pure: no chrome; the caller persists `snapshot()` (chrome.storage.session, so a worker restart
// does not forget) through the injected `save` and hands the stored one to `restore`. It must
// never hold more than MAX_FORM_URLS rules (the oldest go first), never load anything but
// well-formed rules, and never answer as if nothing was learned when restoring failed
// (`maskContext` then asks for every URL query value to be masked: it fails closed).

import { learnedUrlRule } from "./mask.js";

/** Where the rules are kept in chrome.storage.session. */
export const FORM_URLS_KEY = "tabwarden.formUrls";
/** Most URLs remembered. */
export const MAX_FORM_URLS = 64;
/** Longest URL remembered (longer ones are masked by the name rules alone). */
export const MAX_FORM_URL = 8192;

/** @typedef {{find: string, replace: string}} UrlRule */
/** @typedef {{v: 1, rules: UrlRule[]}} FormUrlsSnapshot */

/**
 * @typedef {object} FormUrls
 * @property {(url: unknown) => boolean} learn remember a URL a form submission reached; true when new
 * @property {(details: unknown) => boolean} committed webNavigation.onCommitted of an owned tab
 * @property {(method: string, params: unknown) => boolean} cdpEvent a debugger event of an owned tab
 * @property {() => UrlRule[]} rules oldest first
 * @property {(snapshot: unknown) => number} load restore a snapshot (merged, bounded); how many kept
 * @property {(stored: Promise<unknown>) => Promise<void>} restore load what storage answers, once
 * @property {() => Promise<{urls: UrlRule[], everyQuery?: true}>} maskContext after the restore
 * @property {() => FormUrlsSnapshot} snapshot
 */

/**
 * @param {{save?: (snapshot: FormUrlsSnapshot) => void, log?: {warn: (...a: unknown[]) => void}}} [options]
 * @returns {FormUrls}
 */
export function createFormUrls({ save = () => {}, log = console } = {}) {
  /** @type {Map<string, UrlRule>} by `find`, oldest first */
  const known = new Map();
  /** @type {Promise<void>} */
  let restored = Promise.resolve();
  let restoreFailed = false;

  /** @param {UrlRule} rule */
  function keep(rule) {
    known.delete(rule.find);
    known.set(rule.find, rule);
    while (known.size > MAX_FORM_URLS) known.delete(/** @type {string} */ (known.keys().next().value));
  }

  const snapshot = () => /** @type {FormUrlsSnapshot} */ ({ v: 1, rules: [...known.values()].map((r) => ({ ...r })) });

  /** @param {unknown} url */
  function learn(url) {
    if (typeof url !== "string" || url.length > MAX_FORM_URL) return false;
    const rule = learnedUrlRule(url);
    if (rule === null) return false;
    const fresh = !known.has(rule.find);
    keep(rule);
    save(snapshot());
    return fresh;
  }

  /** @param {unknown} stored */
  function load(stored) {
    const s = /** @type {any} */ (stored);
    if (s === null || typeof s !== "object" || s.v !== 1 || !Array.isArray(s.rules)) return 0;
    const since = [...known.values()]; // learned since the worker started: newer than any stored
    known.clear();
    /** @type {(r: any) => boolean} */
    const wellFormed = (r) => r !== null && typeof r === "object" && typeof r.find === "string" && typeof r.replace === "string"
      && r.find !== "" && r.find.length <= MAX_FORM_URL && r.replace.length <= 4 * MAX_FORM_URL;
    const valid = s.rules.slice(-4 * MAX_FORM_URLS).filter(wellFormed).slice(-MAX_FORM_URLS);
    for (const r of valid) known.set(r.find, { find: r.find, replace: r.replace });
    const kept = known.size;
    for (const r of since) keep(r);
    return kept;
  }

  return {
    learn,
    committed(details) {
      const d = /** @type {any} */ (details);
      return d !== null && typeof d === "object" && d.transitionType === "form_submit" ? learn(d.url) : false;
    },
    cdpEvent(method, params) {
      const p = /** @type {any} */ (params);
      return method === "Page.frameRequestedNavigation" && p !== null && typeof p === "object" && p.reason === "formSubmissionGet" ? learn(p.url) : false;
    },
    rules: () => [...known.values()],
    load,
    restore(stored) {
      restored = stored.then(
        (snap) => { load(snap); },
        (err) => {
          // The URLs learned before are lost: which of them a reply may show is unknown, so every
          // query value of every URL is masked instead.
          restoreFailed = true;
          log.warn("tabwarden: could not restore the form URLs; every URL query value is masked", err);
        },
      );
      return restored;
    },
    async maskContext() {
      await restored;
      return restoreFailed ? { urls: [...known.values()], everyQuery: true } : { urls: [...known.values()] };
    },
    snapshot,
  };
}
