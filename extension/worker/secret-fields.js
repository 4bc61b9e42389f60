// secret-fields.js — the names and ids the password fields of owned tabs' pages had. What a page
// sends or logs under such a name (`zz9=…` in a request URL, a form body, a console line) is what
// was typed into the field, whatever the name says, so every reply masks the values of these
// names as it masks secret names (worker/mask.js `extraNames`, applied by worker/dispatch.js). Learned
// by reading the pages: `learningAround` wraps every route that names a tab (background.js), so
// `passwordFieldNames` runs in every frame of an owned tab before and after each call on it.
// Kept for the browser session and used for every reply, not only the tab's: a value can reach a
// reply about another tab, or about none. Pure: no chrome; the caller persists `snapshot()`
// (chrome.storage.session, so a worker restart does not forget) through `save` and hands the
// stored one to `restore`. It must never hold more than MAX_FIELD_NAMES names, never keep a name
// no mask rule could match, and never answer as if nothing was learned when restoring failed
// (`maskContext` then asks for every URL query value to be masked).

/** Where the names are kept in chrome.storage.session. */
export const SECRET_FIELDS_KEY = "tabwarden.secretFields";
/** Most names remembered (the oldest go first). */
export const MAX_FIELD_NAMES = 256;
/** Longest name kept: worker/mask.js reads no longer name (MAX_NAME). */
export const MAX_FIELD_NAME = 64;
/** Most names taken from one frame's answer. */
export const MAX_NAMES_PER_FRAME = 64;

/** @typedef {{v: 1, names: string[]}} SecretFieldsSnapshot */

/**
 * Runs in the page (chrome.scripting, every frame, isolated world): the name and id of each
 * password field, and of each field the page marked as holding a password or a one-time code,
 * open shadow roots included. Self-contained: it is serialised into the page.
 * @returns {string[]}
 */
export function passwordFieldNames() {
  const SELECTOR = 'input[type="password" i], input[autocomplete~="current-password" i], '
    + 'input[autocomplete~="new-password" i], input[autocomplete~="one-time-code" i]';
  /** @type {string[]} */
  const out = [];
  /** @type {Array<Document | ShadowRoot>} */
  const roots = [document];
  for (let r = 0; r < roots.length && r < 256 && out.length < 64; r++) {
    const root = roots[r];
    for (const el of root.querySelectorAll(SELECTOR)) {
      const name = el.getAttribute("name");
      if (name) out.push(name);
      if (el.id) out.push(el.id);
    }
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) roots.push(el.shadowRoot);
      if (roots.length >= 256) break;
    }
  }
  return out.slice(0, 64);
}

/**
 * @typedef {object} SecretFields
 * @property {(names: unknown) => boolean} learn one frame's answer; true when a name was new
 * @property {(track: Promise<unknown>) => void} pending a learning under way: replies wait for it
 * @property {(stored: Promise<unknown>) => Promise<void>} restore the stored snapshot, once
 * @property {() => Promise<{extraNames: ReadonlySet<string>, everyQuery?: true}>} maskContext
 * @property {() => ReadonlySet<string>} names lowercased
 * @property {() => SecretFieldsSnapshot} snapshot
 */

/**
 * @param {{save?: (snapshot: SecretFieldsSnapshot) => void, log?: {warn: (...a: unknown[]) => void}}} [options]
 * @returns {SecretFields}
 */
export function createSecretFields({ save = () => {}, log = console } = {}) {
  /** @type {Set<string>} lowercased, oldest first */
  const known = new Set();
  /** @type {Set<Promise<unknown>>} */
  const inflight = new Set();
  /** @type {Promise<void>} */
  let restored = Promise.resolve();
  let restoreFailed = false;

  /** @param {unknown} name */
  const usable = (name) => typeof name === "string" && name.length > 0 && name.length <= MAX_FIELD_NAME;

  /** @param {string} name */
  function keep(name) {
    const lower = name.toLowerCase();
    const fresh = !known.has(lower);
    known.delete(lower);
    known.add(lower);
    while (known.size > MAX_FIELD_NAMES) known.delete(/** @type {string} */ (known.values().next().value));
    return fresh;
  }

  const snapshot = () => /** @type {SecretFieldsSnapshot} */ ({ v: 1, names: [...known] });

  return {
    learn(names) {
      if (!Array.isArray(names)) return false;
      let fresh = false;
      for (const name of names.slice(0, MAX_NAMES_PER_FRAME)) if (usable(name) && keep(/** @type {string} */ (name))) fresh = true;
      if (fresh) save(snapshot());
      return fresh;
    },
    pending(track) {
      const p = track.then(() => {}, () => {});
      inflight.add(p);
      p.then(() => inflight.delete(p));
    },
    restore(stored) {
      restored = stored.then(
        (s) => {
          const snap = /** @type {any} */ (s);
          if (snap === null || typeof snap !== "object" || snap.v !== 1 || !Array.isArray(snap.names)) return;
          const since = [...known]; // learned since the worker started: newer than any stored
          known.clear();
          for (const name of snap.names.slice(-MAX_FIELD_NAMES)) if (usable(name)) keep(name);
          for (const name of since) keep(name);
        },
        (err) => {
          // What was learned before is lost; the request URLs it would have caught are masked
          // whole instead (the console and network tails did not outlive the worker either).
          restoreFailed = true;
          log.warn("tabwarden: could not restore the password field names; every URL query value is masked", err);
        },
      );
      return restored;
    },
    async maskContext() {
      await restored;
      await Promise.all([...inflight]);
      return restoreFailed ? { extraNames: new Set(known), everyQuery: true } : { extraNames: new Set(known) };
    },
    names: () => new Set(known),
    snapshot,
  };
}

/** How long learning a tab's field names may hold a call up; beyond it the call goes on. */
export const LEARN_MS = 1500;

/**
 * Wrap dispatcher entries so every call that names a tab (an integer `tabId`) learns that tab's
 * password field names just before it runs (the field a click submits or a key sends is still
 * there) and again once it ended (a field the action added); the reply waits for the second
 * learning (`pending`), so the names it found mask the very reply. `learnTab` reads one tab's
 * frames and feeds `fields.learn`; a learning that fails or outlasts LEARN_MS changes nothing
 * about the call.
 * @param {Iterable<[string, import("./dispatch.js").Handler]>} entries
 * @param {{fields: SecretFields, learnTab: (tabId: number) => Promise<void>,
 *   timers: import("./pending.js").Timers}} deps
 * @returns {Array<[string, import("./dispatch.js").Handler]>}
 */
export function learningAround(entries, { fields, learnTab, timers }) {
  /** @param {number} tabId */
  const bounded = (tabId) => {
    /** @type {unknown} */
    let handle;
    const late = new Promise((resolve) => { handle = timers.setTimer(() => resolve(undefined), LEARN_MS); });
    return Promise.race([Promise.resolve().then(() => learnTab(tabId)).catch(() => {}), late])
      .finally(() => timers.clearTimer(handle));
  };
  return [...entries].map(([action, handler]) => [
    action,
    async (args, ctx) => {
      if (args === null || typeof args !== "object" || !Number.isInteger(args.tabId)) return handler(args, ctx);
      const tabId = /** @type {number} */ (args.tabId);
      await bounded(tabId);
      try {
        return await handler(args, ctx);
      } finally {
        fields.pending(bounded(tabId));
      }
    },
  ]);
}
