// confirm-page.js — the logic of the confirm window's page: fetch this confirmation's details
// from the service worker, show them, and send the person's answer. Pure: the document and the
// runtime/permission calls are injected (confirm.js wires the real ones). It must never put
// page-controlled text into the DOM as HTML (textContent only), never answer "allow" for an
// origin unless Chrome granted its host permission, and must call permissions.request first
// thing in the click handler (the click is the user gesture Chrome requires). In presence mode
// (details.presence set by the worker, never by the URL) the Allow button stays hidden: #tap asks
// the worker for assertion options, runs WebAuthn get() here, and hands the response back; only
// the host's verdict on that tap allows. For a new origin in presence mode (an enrolled browser),
// #tap's click requests the host permission first (the gesture), then runs the tap. It shows
// who asks (#client: the paired label the host named), a countdown to the timeout (#countdown;
// at zero the worker has already answered "timeout"), and for a submit the NAMES of the fields
// the form will send (#fields; the page side never hands over a value). Esc denies, as Deny does.
// A refused tap says why under the tap control (#status: the host's reason code in the options
// page's words, shared/presence-reasons.js; #hint: the code's next step) — never a bare code — and
// the window stays open (the deny asks the worker to keep it) until the person closes it (#close).
// It names where an address or value came from (#source, the provenance gate's words) and says
// when a form is sent by GET (its values go into the address). Input protection, as Chrome's own
// permission prompts do it: for INPUT_DELAY_MS after the window is shown, and again after every
// time it regains focus or becomes visible, every button is disabled (visibly) and a click or
// key on it is ignored, so keys typed for the page underneath (Tab, Enter, Space) or a click
// aimed at where the window pops up cannot answer it; <body data-armed> says when input counts.
// Esc denies at any time (refusing is free).

import { describeApproval, readApproval } from "../shared/approval.js";
import { CODE, isErrorCode } from "../shared/error-codes.js";
import { refusalHint } from "./policy-page.js";
import { TERMINAL_PRESENCE } from "../shared/presence-confirm.js";
import { reasonText, refusedText } from "../shared/presence-reasons.js";

/**
 * @typedef {object} ConfirmPageApi
 * @property {(msg: object) => Promise<any>} sendMessage chrome.runtime.sendMessage
 * @property {(pattern: string) => Promise<boolean>} requestPermission chrome.permissions.request
 * @property {(optionsJSON: object) => Promise<object>} [getAssertion] parse the request options,
 *   navigator.credentials.get({publicKey}), and return the assertion's toJSON() (presence mode)
 * @property {() => void} [closeWindow] window.close(): #close, after a refused tap
 * @property {(grow: number) => Promise<unknown>} [growWindow] make this window `grow` CSS pixels
 *   taller (chrome.windows.update): Chrome's "started debugging this browser" bar, shown in every
 *   window while the debugger is attached to an agent's tab, takes its height from the page
 */

/** How long the window ignores input after it is shown or regains focus or visibility:
 * Chrome's permission bubbles protect their buttons for about as long after showing. */
export const INPUT_DELAY_MS = 500;

/**
 * How much taller the window must be for the whole page to show without scrolling: 0 when it
 * already does. Capped so the window never grows past the screen's available height (the page
 * then scrolls, as any page does).
 * @param {{contentHeight: number, innerHeight: number, outerHeight: number, availHeight: number}} m
 */
export function neededGrowth({ contentHeight, innerHeight, outerHeight, availHeight }) {
  const all = [contentHeight, innerHeight, outerHeight, availHeight];
  if (!all.every((n) => Number.isFinite(n) && n >= 0)) return 0;
  const short = Math.ceil(contentHeight - innerHeight);
  if (short <= 0) return 0;
  return Math.max(0, Math.min(short, Math.floor(availHeight - outerHeight)));
}

/**
 * The site line: the origin, and for a permission asked under a subdomain approval (its pattern
 * `https://*.example.com/*`) the approval in plain words, so a wildcard never passes as one site.
 * @param {unknown} origin details.origin
 * @param {unknown} pattern details.pattern
 */
export function originWords(origin, pattern) {
  const site = String(origin ?? "");
  const approval = typeof pattern === "string" && pattern.endsWith("/*") ? readApproval(pattern.slice(0, -2)) : null;
  return approval !== null && approval.kind === "wildcard"
    ? `${site} — approved as ${describeApproval(approval)}; Chrome's grant covers all of it`
    : site;
}

/**
 * What an allow also covers (details.grace: worker/grace.js), or "" for none.
 * @param {unknown} seconds details.grace
 * @param {unknown} origin details.origin
 */
export function graceWords(seconds, origin) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) return "";
  return `Allow: no new questions on this site in this tab for ${Math.floor(seconds)} s`;
}

/**
 * The whole of it, for the paragraph's title: what the short line means and what it never covers.
 * @param {unknown} seconds details.grace
 * @param {unknown} origin details.origin
 */
export function graceTitle(seconds, origin) {
  if (graceWords(seconds, origin) === "") return "";
  return `If you allow this, for ${Math.floor(/** @type {number} */ (seconds))} seconds this agent's further clicks, key presses and choices on ${String(origin)} in this tab are not asked again (page scripts, requests, uploads, dialogs and closing a tab still are).`;
}

/** The words over a submit's field list. @param {unknown} fields details.fields */
export function fieldsLabel(fields) {
  const byGet = /** @type {any} */ (fields)?.method === "get";
  return byGet
    ? "Sent by GET: the values go into the address (kept in history and logs). It sends these fields (values not shown):"
    : "The form will send these fields (values not shown):";
}

/**
 * The countdown's words: "Denies itself in 38 s" (null once it is over).
 * @param {number} leftMs
 */
export function countdownText(leftMs) {
  if (!(leftMs > 0)) return null;
  const s = Math.ceil(leftMs / 1000);
  return s >= 120 ? `Denies itself in ${Math.ceil(s / 60)} min` : `Denies itself in ${s} s`;
}

/**
 * A submit's fields as a person reads them: each name with a masked value ("email = •••").
 * @param {unknown} fields details.fields
 * @returns {string[] | null} null: nothing to show (not a submit, or a form with no named field)
 */
export function fieldItems(fields) {
  const f = /** @type {any} */ (fields);
  if (!f || !Array.isArray(f.names)) return null;
  const items = f.names.filter((/** @type {unknown} */ n) => typeof n === "string").map((/** @type {string} */ n) => `${n} = •••`);
  if (Number.isSafeInteger(f.more) && f.more > 0) items.push(`and ${f.more} more`);
  return items.length === 0 ? null : items;
}

/**
 * What the window says about a refused tap: the options page's sentence ("refused:
 * presence_refused — this authenticator's sign counter did not increase …") and the next step.
 * A presence_refused without a known reason still gets a sentence ("the host refused this tap").
 * @param {unknown} code the worker's answer's code
 * @param {unknown} reason the host's reason code, if any (unknown ones are dropped)
 * @returns {{status: string, hint: string}}
 */
export function tapRefusal(code, reason) {
  const c = isErrorCode(code) ? /** @type {string} */ (code) : CODE.INTERNAL_ERROR; // a table code, never page text
  const why = c === CODE.PRESENCE_REFUSED && reasonText(reason) === "" ? "unspecified" : reason;
  const status = refusedText(c, why);
  const next = refusalHint(status);
  return { status, hint: `${next === "" ? "" : `${next} `}The agent has to ask again.` };
}

/** What the window says after a tap: a sentence, or a refusal's words and next step. @typedef {string | {status: string, hint: string}} TapOutcome */

/**
 * `after`: one call of `fn` in `ms` (setTimeout), `cancel` undoes it.
 * @typedef {{now: () => number, every: (fn: () => void, ms: number) => unknown, stop: (timer: unknown) => void,
 *   after: (fn: () => void, ms: number) => unknown, cancel: (timer: unknown) => void}} Clock
 */

/**
 * Where focus and visibility changes are heard: the window (focus, blur).
 * @typedef {{addEventListener: (type: string, fn: () => void) => void, innerHeight?: number,
 *   outerHeight?: number, screen?: {availHeight: number}}} FocusSource
 */

/**
 * @param {{doc: Document, search: string, api: ConfirmPageApi, clock: Clock, win?: FocusSource}} deps
 *   clock: the countdown and the input delay (the buttons wake only through it); win: the
 *   window's focus and blur, and its sizes (neededGrowth)
 * @returns {Promise<"shown" | "expired">}
 */
export async function runConfirmPage({ doc, search, api, clock, win }) {
  const id = new URLSearchParams(search).get("id") ?? "";
  const allow = /** @type {HTMLButtonElement} */ (doc.getElementById("allow"));
  const deny = /** @type {HTMLButtonElement} */ (doc.getElementById("deny"));
  const tap = /** @type {HTMLButtonElement | null} */ (doc.getElementById("tap"));
  /** @param {string} elementId @param {string} text */
  const show = (elementId, text) => {
    const el = doc.getElementById(elementId);
    if (el) el.textContent = text;
  };
  const setEnabled = (/** @type {boolean} */ on) => {
    allow.disabled = !on;
    deny.disabled = !on;
    if (tap) tap.disabled = !on;
  };
  setEnabled(false);

  let res = null;
  try {
    res = await api.sendMessage({ type: "confirm_details", id });
  } catch {
    res = null;
  }
  const d = res && res.ok === true && res.details && typeof res.details === "object" ? res.details : null;
  if (d === null) {
    show("status", "This request has expired or was already answered. You can close this window.");
    return "expired";
  }
  const isOrigin = d.kind === "origin";
  const presence = Boolean(d.presence && typeof d.presence === "object");
  // A tap for the terminal: the window only carries the assertion; the terminal verifies it.
  const forTerminal = presence && d.presence.action === TERMINAL_PRESENCE;
  show("heading", isOrigin ? (presence ? "Allow a new site? Confirm with your security key" : "Allow a new site?")
    : presence ? "Confirm with your security key" : "Confirm an action");
  show("tool", String(d.tool ?? ""));
  show("origin", originWords(d.origin, d.pattern));
  show("detail", String(d.detail ?? ""));
  const grace = graceWords(d.grace, d.origin);
  show("grace", grace);
  const graceEl = doc.getElementById("grace");
  if (graceEl) {
    graceEl.hidden = grace === "";
    graceEl.title = graceTitle(d.grace, d.origin);
  }
  show("client", typeof d.client === "string" && d.client !== "" ? d.client : "an MCP client (not paired by name)");
  const source = typeof d.source === "string" && d.source !== "" ? d.source : null;
  show("source", source ?? "");
  for (const el of [doc.getElementById("source"), doc.getElementById("source-label")]) if (el) el.hidden = source === null;
  show("fields-label", fieldsLabel(d.fields));
  doc.getElementById("fields-label")?.classList?.toggle("by-get", /** @type {any} */ (d.fields)?.method === "get");
  const items = fieldItems(d.fields);
  const fieldsBox = doc.getElementById("fields-box");
  if (fieldsBox) fieldsBox.hidden = items === null;
  doc.getElementById("fields")?.replaceChildren(...(items ?? []).map((text) => {
    const li = doc.createElement("li");
    li.textContent = text;
    return li;
  }));

  let answered = false;
  /** Whether input counts now (INPUT_DELAY_MS after the window was shown or last regained focus). */
  let armed = false;
  /** @type {unknown} */
  let arming = null;
  const body = /** @type {HTMLElement | null} */ (doc.body ?? null);
  /** Ignore input from now on, and count it again INPUT_DELAY_MS later (if still unanswered). */
  const rearm = () => {
    disarm();
    arming = clock.after(() => {
      arming = null;
      if (answered) return;
      armed = true;
      body?.setAttribute?.("data-armed", "true");
      setEnabled(true);
      deny.focus(); // Enter on an unread window denies
    }, INPUT_DELAY_MS);
  };
  const disarm = () => {
    armed = false;
    if (arming !== null) clock.cancel(arming);
    arming = null;
    body?.setAttribute?.("data-armed", "false");
    if (!answered) setEnabled(false);
  };
  /** @type {unknown} */
  let ticking = null;
  const stopTicking = () => {
    if (ticking !== null) clock.stop(ticking);
    ticking = null;
  };
  /** @param {"allow" | "deny"} decision */
  const answer = (decision) => {
    if (answered) return;
    answered = true;
    stopTicking();
    disarm();
    show("countdown", "");
    setEnabled(false);
    show("status", decision === "allow" ? "Allowed." : "Denied.");
    api.sendMessage({ type: "confirm_answer", id, decision }).catch(() => {});
  };

  allow.addEventListener("click", () => {
    if (answered || !armed || allow.disabled) return;
    if (!isOrigin) {
      answer("allow");
      return;
    }
    let request;
    try {
      request = api.requestPermission(String(d.pattern ?? "")); // first: inside the gesture
    } catch {
      answer("deny");
      return;
    }
    setEnabled(false);
    Promise.resolve(request).then(
      (granted) => answer(granted === true ? "allow" : "deny"),
      () => answer("deny"),
    );
  });
  deny.addEventListener("click", () => {
    if (armed) answer("deny");
  });
  // Esc denies, like closing the window; once a tap is under way it is the host's to answer.
  doc.addEventListener?.("keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e?.key === "Escape" && !answered) answer("deny");
  });

  if (presence) {
    allow.hidden = true; // a click never allows here: only a tap the host verified
    if (tap) tap.hidden = false;
    tap?.addEventListener("click", () => {
      if (answered || !armed || tap.disabled) return;
      answered = true;
      /** @type {Promise<unknown>} */
      let permission = Promise.resolve(true);
      if (isOrigin) {
        try {
          permission = Promise.resolve(api.requestPermission(String(d.pattern ?? ""))); // first: inside the gesture
        } catch {
          permission = Promise.resolve(false);
        }
      }
      setEnabled(false);
      /** @type {Promise<TapOutcome>} */
      const outcome = permission.then((granted) => (granted === true ? runTap() : refuseTap("Denied (no site permission).")),
        () => refuseTap("Denied (no site permission)."));
      outcome.then(say, () => say("Denied."));
    });
  }

  /**
   * The tap's outcome under the control; a refusal also says what to do, and offers #close.
   * @param {TapOutcome} outcome
   */
  function say(outcome) {
    const refused = typeof outcome !== "string" || outcome.startsWith("Denied");
    const { status, hint } = typeof outcome === "string" ? { status: outcome, hint: "" } : outcome;
    stopTicking(); // the tap settled it: no countdown left
    show("countdown", "");
    show("status", status);
    show("hint", hint);
    doc.getElementById("status")?.classList?.toggle("refused", refused);
    const close = /** @type {HTMLButtonElement | null} */ (doc.getElementById("close"));
    if (!refused || !close) return;
    show("heading", "Not allowed: the tap was refused"); // the outcome first; why is under the tap
    close.hidden = false;
    close.disabled = false;
    close.addEventListener("click", () => api.closeWindow?.());
    doc.addEventListener?.("keydown", (/** @type {KeyboardEvent} */ e) => {
      if (e?.key === "Escape") api.closeWindow?.();
    });
    close.focus();
  }

  /** @param {TapOutcome} outcome @returns {TapOutcome} */
  function refuseTap(outcome) {
    api.sendMessage({ type: "confirm_answer", id, decision: "deny", keepWindow: true }).catch(() => {});
    return outcome;
  }

  /**
   * presence_begin (via the worker), WebAuthn get() here, presence_complete (via the worker).
   * @returns {Promise<TapOutcome>}
   */
  async function runTap() {
    const refuse = refuseTap;
    show("status", forTerminal ? "Preparing the tap your terminal asked for…" : "Asking the host…");
    let begun;
    try {
      begun = await api.sendMessage({ type: "confirm_presence_begin", id });
    } catch {
      begun = null;
    }
    if (!begun || begun.ok !== true) return refuse(tapRefusal(begun?.code, begun?.reason));
    show("status", "Touch your security key…");
    let response;
    try {
      if (typeof api.getAssertion !== "function") throw new Error("no WebAuthn");
      const opts = begun.options && typeof begun.options === "object" ? begun.options : {};
      response = await api.getAssertion(opts.publicKey ?? opts);
    } catch {
      return refuse(tapRefusal(CODE.PRESENCE_REFUSED, "no_answer")); // cancelled, timed out, no key
    }
    let done;
    try {
      done = await api.sendMessage({ type: "confirm_presence_complete", id, response });
    } catch {
      done = null;
    }
    if (done && done.ok === true) {
      return forTerminal ? "Tap sent to your terminal, which verifies it and shows the result." : "Allowed (tap verified by the host).";
    }
    return tapRefusal(done?.code, done?.reason);
  }

  // The countdown to the worker's own timeout (it answers "timeout" then, whatever this page does).
  const expiresAt = typeof d.expiresAt === "number" && Number.isFinite(d.expiresAt) ? d.expiresAt : null;
  const countdown = doc.getElementById("countdown");
  const tick = () => {
    if (expiresAt === null) return;
    const left = expiresAt - clock.now();
    const words = countdownText(left);
    if (answered) return;
    if (words === null) {
      stopTicking();
      answered = true;
      disarm();
      setEnabled(false);
      show("countdown", "");
      show("status", "Timed out: nobody answered in time, so it was refused. You can close this window.");
      return;
    }
    show("countdown", words);
    countdown?.classList?.toggle("soon", left <= 10_000);
  };
  if (expiresAt !== null) {
    tick();
    if (!answered) ticking = clock.every(tick, 250);
  }

  // Every row shown: grow the window until its question and buttons fit (Chrome's debugging bar
  // may have taken the room they were sized for). Chrome may add the bar after the page is shown,
  // so every resize (the bar appearing shrinks the page) checks again; a resize during a growth
  // (the growth's own included) is checked once that growth is done.
  let growing = false;
  let again = false;
  const fit = async () => {
    if (growing) { again = true; return; }
    growing = true;
    try {
      do {
        again = false;
        const growth = neededGrowth({
          contentHeight: doc.documentElement?.scrollHeight ?? 0, innerHeight: win?.innerHeight ?? 0,
          outerHeight: win?.outerHeight ?? 0, availHeight: win?.screen?.availHeight ?? 0,
        });
        if (growth > 0 && api.growWindow) await api.growWindow(growth).catch(() => {});
      } while (again);
    } finally {
      growing = false;
    }
  };
  await fit();
  win?.addEventListener("resize", () => void fit());

  // Input protection: from now (the details are on screen), and again whenever the window comes
  // back (focus regained, shown again); leaving it (blur, hidden) stops input at once.
  win?.addEventListener("blur", disarm);
  win?.addEventListener("focus", rearm);
  doc.addEventListener?.("visibilitychange", () => (doc.visibilityState === "visible" ? rearm() : disarm()));
  if (!answered) rearm();
  return "shown";
}
