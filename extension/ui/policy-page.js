// policy-page.js — the logic of options.html's Policy section: shows the host's policy, the kill
// state and whether this browser is enrolled (policy_get through the service worker); widens
// (origin, eval, upload) and releases the kill switch only with a tap — presence_begin through the
// worker, the WebAuthn get() here in the page, presence_complete back — and narrows or kills for
// free (policy_restrict, kill). The click grace period, the confirmation timeout, presenceConfirm
// closeTabsOnSessionEnd, dialogArming, consoleCapture, networkCapture and provenance go either
// way: a change that narrows (fewer seconds, presenceConfirm or closeTabsOnSessionEnd on,
// dialogArming or a capture off, provenance towards strict) is a free policy_restrict, one
// that widens needs the tap; bad input
// is refused here and nothing is sent. Pure: the document, runtime messaging and the assertion are
// injected (options.js wires the real ones). It must never put host- or page-supplied text into
// the DOM as HTML (textContent only), never talk to the host except through the worker, and never
// decide policy itself (the host verifies the tap and signs every change). The policy in force is
// shown in plain words (POLICY_WORDS; a key it has no words for is shown by its own name, so a
// key added to trust/policy.py shows without an edit here), the approved sites in the Sites
// section (#sites-list), and each operation's outcome — a refusal with its code's hint — right
// under the control that asked (#policy-feedback moves there).

import { canonicalJson } from "../shared/canonical-json.js";
import { POLICY_WORDS } from "../shared/policy-words.js";
import { replaceChildrenIfChanged } from "./dom-keep.js";
import { CODE, ERROR_TABLE } from "../shared/error-codes.js";
import { approvesOrigin, describeApproval, readApproval } from "../shared/approval.js";
import { normaliseOrigin, originOf } from "../shared/origin.js";
import { refusedText } from "../shared/presence-reasons.js";
import { setGlance } from "./glance.js";

/**
 * One policy value in plain words: yes/no, lists joined, seconds with their unit.
 * @param {string} key
 * @param {unknown} value
 */
export function valueWords(key, value) {
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length === 0 ? "(none)" : value.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");
  if (typeof value === "number" && key.endsWith("Seconds")) return `${value} s`;
  return typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
}

/**
 * One approved-sites entry in plain words ("example.com and every subdomain (https)").
 * @param {unknown} entry
 */
export function siteWords(entry) {
  const a = readApproval(entry);
  if (a === null) return String(entry);
  return a.kind === "refused" ? `${a.entry} (refused: approves nothing)` : describeApproval(a);
}

/**
 * What the "Allow a site" box holds, normalised: an exact origin, a subdomain approval
 * (`https://*.Example.com:443` → `https://*.example.com`), or why a wildcard is refused (a bare
 * `*`, one not the whole leftmost label, over a public suffix). `origin` null: not an origin.
 * @param {string} raw
 * @returns {{origin: string | null, refused: string | null}}
 */
export function approvalEntry(raw) {
  if (!raw.includes("*")) return { origin: normaliseOrigin(raw), refused: null };
  const m = /^(https?):\/\/\*\.([^*/?#@\s]+)$/i.exec(raw);
  const base = m === null ? null : originOf(`${m[1]}://${m[2]}`);
  const hint = "a subdomain approval is https://*.example.com: the * as the whole leftmost label, over a domain someone owns";
  if (m === null || base === null || normaliseOrigin(`${m[1]}://${m[2]}`) !== base) return { origin: null, refused: hint };
  const a = readApproval(base.replace("://", "://*."));
  if (a === null || a.kind !== "wildcard") {
    return { origin: null, refused: a !== null && a.kind === "refused" ? `${a.reason}; ${hint}` : hint };
  }
  return { origin: a.entry, refused: null };
}

/** @type {ReadonlyMap<string, string>} each error code's one-line hint */
const HINTS = new Map(ERROR_TABLE.map(([code, , hint]) => [code, hint]));

/**
 * The hint for a "refused: <code> …" outcome ("" for anything else).
 * @param {string} outcome
 */
export function refusalHint(outcome) {
  const m = /^refused: ([a-z_]+)/.exec(outcome);
  return m === null ? "" : HINTS.get(m[1]) ?? "";
}

/**
 * @typedef {object} PolicyPageApi
 * @property {(msg: object) => Promise<any>} sendMessage chrome.runtime.sendMessage
 * @property {(optionsJSON: object) => Promise<object>} getAssertion parse the request options,
 *   navigator.credentials.get({publicKey}), and return the credential's toJSON()
 */

const CONTROLS = ["approve-origin", "enable-eval", "enable-upload", "restrict-eval", "restrict-upload", "kill", "unkill",
  "set-grace", "set-timeout", "presence-on", "presence-off", "close-tabs-on", "close-tabs-off",
  "dialog-arming-on", "dialog-arming-off", "enable-fetch", "restrict-fetch",
  "console-capture-on", "console-capture-off", "network-capture-on", "network-capture-off",
  "provenance-strict", "provenance-confirm", "provenance-off"];

/** The `provenance` words, narrowest first (trust/policy.py _CHOICES). */
const PROVENANCE = ["strict", "confirm", "off"];

/**
 * The whole-second policy keys the page sets, with their field, their range (trust/policy.py
 * _RANGES; a larger value is wider) and the words a refusal uses.
 * @type {Record<string, {input: string, low: number, high: number, name: string}>}
 */
const SECONDS = {
  clickGraceSeconds: { input: "grace", low: 0, high: 600, name: "click grace period" },
  confirmTimeoutSeconds: { input: "confirm-timeout", low: 5, high: 600, name: "confirmation timeout" },
};

/**
 * @param {{doc: Document, api: PolicyPageApi}} deps
 */
export async function runPolicyPage({ doc, api }) {
  const el = (/** @type {string} */ id) => /** @type {any} */ (doc.getElementById(id));
  /** @param {string} id @param {string} text */
  const show = (id, text) => {
    const e = el(id);
    if (e) e.textContent = text;
  };
  /** @type {any} the latest policy_get answer's policy */
  let policy = null;
  /** @type {boolean | null} the latest policy_get answer's kill state (null: unknown) */
  let killed = null;
  let busy = false;

  function setDisabled() {
    const has = policy !== null;
    const state = {
      "approve-origin": !has,
      "enable-eval": !has || policy.eval === true,
      "enable-upload": !has || policy.upload === true,
      "restrict-eval": !has || policy.eval !== true,
      "restrict-upload": !has || policy.upload !== true,
      kill: killed === true,
      unkill: killed !== true,
      "set-grace": !has,
      "set-timeout": !has,
      "presence-on": !has || policy.presenceConfirm === true,
      "presence-off": !has || policy.presenceConfirm !== true,
      "close-tabs-on": !has || policy.closeTabsOnSessionEnd === true,
      "close-tabs-off": !has || policy.closeTabsOnSessionEnd !== true,
      "dialog-arming-on": !has || policy.dialogArming === true,
      "dialog-arming-off": !has || policy.dialogArming !== true,
      "enable-fetch": !has || policy.pageFetch === true,
      "restrict-fetch": !has || policy.pageFetch !== true,
      "console-capture-on": !has || policy.consoleCapture === true,
      "console-capture-off": !has || policy.consoleCapture !== true,
      "network-capture-on": !has || policy.networkCapture === true,
      "network-capture-off": !has || policy.networkCapture !== true,
      "provenance-strict": !has || policy.provenance === "strict",
      "provenance-confirm": !has || policy.provenance === "confirm",
      "provenance-off": !has || policy.provenance === "off",
    };
    for (const id of CONTROLS) {
      const e = el(id);
      if (e) e.disabled = busy || state[/** @type {keyof typeof state} */ (id)] === true;
    }
    const list = el("sites-list");
    if (list?.querySelectorAll) for (const b of list.querySelectorAll("button")) b.disabled = busy;
  }

  /** @param {string[]} origins the approved sites, each with its free Remove button */
  function renderSites(origins) {
    const ul = el("sites-list");
    if (!ul) return;
    replaceChildrenIfChanged(ul, JSON.stringify(origins), () => siteItems(origins));
  }

  /** @param {string[]} origins */
  function siteItems(origins) {
    if (origins.length === 0) {
      const li = doc.createElement("li");
      li.textContent = "No site yet: the agent asks you before it uses any site.";
      return [li];
    }
    const items = [];
    for (const origin of origins) {
      const li = doc.createElement("li");
      const span = doc.createElement("span");
      const approval = readApproval(origin);
      if (approval !== null && approval.kind !== "exact") {
        // A subdomain approval in plain words with its pattern beside; one the extension refuses
        // (over a public suffix) says that it approves nothing, and why.
        const words = doc.createElement("strong");
        words.textContent = approval.kind === "wildcard" ? describeApproval(approval) : `refused, approves nothing: ${approval.reason}`;
        const raw = doc.createElement("code");
        raw.textContent = origin;
        span.append(words, " ", raw);
        li.className = approval.kind === "wildcard" ? "wildcard" : "refused";
      } else span.textContent = origin;
      const remove = doc.createElement("button");
      remove.type = "button";
      remove.textContent = "remove";
      remove.setAttribute("aria-label", `Remove ${origin}`);
      remove.setAttribute("data-origin", origin);
      remove.addEventListener("click", () => {
        asking = remove;
        restrict("origins", origins.filter((o) => o !== origin)).catch(() => {});
      });
      li.append(span, " ", remove);
      items.push(li);
    }
    return items;
  }

  /** @param {any} s a policy_get answer */
  function render(s) {
    const list = el("policy");
    if (!s || s.ok !== true) {
      policy = null;
      killed = null;
      replaceChildrenIfChanged(list, "", () => []);
      replaceChildrenIfChanged(el("sites-list"), "", () => []);
      show("killed", "unknown");
      show("enrolled", "unknown");
      show("policy-summary", `Policy unavailable: ${String(s?.code ?? CODE.INTERNAL_ERROR)}`);
      setGlance(doc, "kill", "unknown", "Unknown", "the host did not answer");
      setGlance(doc, "sites", "unknown", "Unknown", "");
      setDisabled();
      return;
    }
    policy = s.policy;
    killed = s.killed === true;
    show("killed", killed ? "engaged" : "released");
    setGlance(doc, "kill", killed ? "bad" : "good", killed ? "Engaged" : "Off",
      killed ? "every agent request is refused" : "agents may work");
    const siteCount = Array.isArray(policy?.origins) ? policy.origins.length : 0;
    setGlance(doc, "sites", siteCount === 0 ? "warn" : "good", siteCount === 0 ? "None yet" : `${siteCount} allowed`,
      siteCount === 0 ? "the agent asks before any site" : siteCount === 1 ? siteWords(policy.origins[0]) : "see Sites below");
    const creds = Array.isArray(s.credentials) ? s.credentials : [];
    show("enrolled", s.enrolled === true
      ? `yes (${creds.length} credential${creds.length === 1 ? "" : "s"}): a tap on this browser's authenticator can widen the policy`
      : s.windowOnly === true
        ? "none: confirmations are a click in a window (software confirmation), so allowing more needs `tabwarden policy set` in a terminal"
        : "no: confirmations here are software confirmation (the window); to enrol an authenticator, "
          + "run `tabwarden pair --browser LABEL` in a terminal and enter its code under \"Pair this browser\"");
    const credList = el("credentials");
    if (credList) {
      replaceChildrenIfChanged(credList, JSON.stringify(creds), () => creds.map((/** @type {any} */ c) => {
        const li = doc.createElement("li");
        const when = typeof c.enrolledAt === "number" ? new Date(c.enrolledAt * 1000).toLocaleString() : "at an unknown time";
        const id = doc.createElement("small");
        id.className = "code";
        id.textContent = `${String(c.credentialId).slice(0, 16)}…`;
        li.append(`Enrolled ${when}; `
          + (c.uv === true ? "verifies the user (PIN or biometric) on every tap" : "presence only (no user verification)")
          + " · id ", id);
        return li;
      }));
    }
    const browsers = Array.isArray(s.browsers) ? s.browsers.map(String).join(", ") : "";
    show("policy-summary", `Trust record version ${String(s.epoch ?? "?")} · browsers paired: ${browsers || "none"}`);
    renderSites(Array.isArray(policy.origins) ? policy.origins.map(String) : []);
    // origins have their own section (Sites)
    const shownPolicy = Object.keys(policy).sort().filter((key) => key !== "origins")
      .map((key) => [POLICY_WORDS[key] ?? key, key, valueWords(key, policy[key])]);
    replaceChildrenIfChanged(list, JSON.stringify(shownPolicy), () => shownPolicy.flatMap(([words, key, value]) => {
      const dt = doc.createElement("dt");
      dt.textContent = words;
      dt.setAttribute("title", key);
      const dd = doc.createElement("dd");
      // A list of names (the actions that ask first): each shown as code, never leading prose.
      const names = Array.isArray(policy[key]) && policy[key].length > 0 && policy[key].every((v) => typeof v === "string")
        ? /** @type {string[]} */ (policy[key]) : null;
      if (names === null) dd.textContent = value;
      else {
        names.forEach((name, i) => {
          const code = doc.createElement("code");
          code.textContent = name;
          dd.append(...(i === 0 ? [] : [", "]), code);
        });
      }
      return [dt, dd];
    }));
    // The number fields show the policy in force (after every change, done or refused) — but a
    // re-read (shared/live-refresh.js) never overwrites the field the person is typing in.
    for (const [key, { input }] of Object.entries(SECONDS)) {
      const e = el(input);
      if (e && !(doc.activeElement === e && !busy)) e.value = Number.isSafeInteger(policy[key]) ? String(policy[key]) : "";
    }
    setDisabled();
  }

  async function refresh() {
    let s = null;
    try {
      s = await api.sendMessage({ type: "policy_get" });
    } catch {
      s = null;
    }
    render(s);
  }

  /**
   * Run one operation at a time; re-render, then show its outcome in #policy-status. The page
   * stays busy until the re-render is done, so the outcome appears only once the fields and
   * buttons show the policy now in force: a value typed after "done" is never overwritten by
   * this operation's late re-render, and no second operation starts in between.
   * @param {() => Promise<string>} op resolves to the status text
   * @returns {Promise<string>}
   */
  async function run(op) {
    if (busy) return "busy";
    busy = true;
    setDisabled();
    placeFeedback();
    // Replace the last outcome at once: a stale "done" must never stand for this operation.
    show("policy-status", "working…");
    show("policy-hint", "");
    el("policy-status")?.classList?.toggle("refused", false);
    let result;
    try {
      result = await op();
    } catch {
      result = `refused: ${CODE.INTERNAL_ERROR}`;
    }
    try {
      await refresh();
    } finally {
      busy = false;
      setDisabled();
      say(result);
    }
    return result;
  }

  /** The outcome (and, for a refusal, what to do about it) under the control that asked. @param {string} result */
  function say(result) {
    show("policy-status", result);
    show("policy-hint", refusalHint(result));
    el("policy-status")?.classList?.toggle("refused", result.startsWith("refused"));
  }

  /** @type {any} the control the person last used */
  let asking = null;
  /** Move #policy-feedback right under the asking control's group (its row, form or list). */
  function placeFeedback() {
    const box = el("policy-feedback");
    const group = asking?.closest?.(".buttons, .origin-form, ul.origins");
    if (box && group && typeof group.after === "function" && group.nextSibling !== box) group.after(box);
  }

  /** @param {any} answer @param {string} action */
  const outcome = (answer, action) => (answer && answer.ok === true ? `done: ${action}`
    : refusedText(answer?.code ?? CODE.INTERNAL_ERROR, answer?.reason)); // a refused tap says why, right here

  /**
   * A tap-gated action: presence_begin, WebAuthn get() here, presence_complete.
   * @param {string} action "policy.widen" or "unkill"
   * @param {string} detail
   */
  function tap(action, detail) {
    return run(async () => {
      show("policy-status", `${action}: asking the host`);
      const begun = await api.sendMessage({ type: "presence_begin", action, detail });
      if (!begun || begun.ok !== true) return outcome(begun, action);
      show("policy-status", `${action}: touch your authenticator`);
      let response;
      try {
        const opts = begun.options && typeof begun.options === "object" ? begun.options : {};
        response = await api.getAssertion(opts.publicKey ?? opts);
      } catch {
        return refusedText(CODE.PRESENCE_REFUSED, "no_answer");
      }
      const done = await api.sendMessage({ type: "presence_complete", challengeId: begun.challengeId, action, detail, response });
      return outcome(done, action);
    });
  }

  /** @param {Record<string, unknown>} changes */
  const widen = (changes) => tap("policy.widen", canonicalJson(changes));

  /** @param {string} key @param {unknown} value */
  function restrict(key, value) {
    return run(async () => outcome(await api.sendMessage({ type: "policy_restrict", key, value }), "policy_restrict"));
  }

  /**
   * Whether `value` for `key` grants nothing the current policy does not (equal counts): a
   * smaller or equal number of seconds; presenceConfirm or closeTabsOnSessionEnd on;
   * dialogArming, consoleCapture or networkCapture off. Anything the page cannot tell (no
   * policy, a key it does not know, a current value of the wrong type) is not narrowing, so it
   * goes the tap way and the host decides.
   * @param {string} key @param {unknown} value
   */
  function narrows(key, value) {
    const current = policy?.[key];
    if (key in SECONDS) return typeof value === "number" && typeof current === "number" && value <= current;
    if (key === "presenceConfirm" || key === "closeTabsOnSessionEnd") return value === true;
    if (key === "dialogArming" || key === "consoleCapture" || key === "networkCapture") return value === false;
    if (key === "provenance") {
      const to = PROVENANCE.indexOf(String(value));
      const from = PROVENANCE.indexOf(String(current));
      return to >= 0 && from >= 0 && to <= from;
    }
    return false;
  }

  /**
   * Set one of the keys that go either way: nothing for an equal value, a free policy_restrict
   * for a narrowing, the tap for a widening.
   * @param {string} key @param {number | boolean | string} value
   */
  async function change(key, value) {
    if (busy) return "busy";
    if (policy !== null && policy[key] === value) {
      placeFeedback();
      say(`unchanged: ${POLICY_WORDS[key] ?? key}: already ${valueWords(key, value)}`);
      return "unchanged";
    }
    return narrows(key, value) ? restrict(key, value) : widen({ [key]: value });
  }

  /**
   * Read a whole number of seconds from the key's field and set it; anything else (empty, a
   * fraction, an exponent, a sign, out of range) is refused here and nothing is sent.
   * @param {string} key "clickGraceSeconds" or "confirmTimeoutSeconds"
   */
  function setSeconds(key) {
    if (busy) return Promise.resolve("busy");
    const { input, low, high, name } = SECONDS[key];
    const raw = String(el(input)?.value ?? "").trim();
    const value = /^[0-9]{1,4}$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value) || value < low || value > high) {
      placeFeedback();
      say(`refused: ${CODE.BAD_REQUEST} (enter the ${name} as a whole number of seconds from ${low} to ${high})`);
      return Promise.resolve(`refused: ${CODE.BAD_REQUEST}`);
    }
    return change(key, value);
  }

  const setGrace = () => setSeconds("clickGraceSeconds");
  const setConfirmTimeout = () => setSeconds("confirmTimeoutSeconds");
  /** @param {boolean} on */
  const setPresenceConfirm = (on) => change("presenceConfirm", on === true);
  /** @param {boolean} on */
  const setCloseTabsOnSessionEnd = (on) => change("closeTabsOnSessionEnd", on === true);
  /** @param {boolean} on */
  const setDialogArming = (on) => change("dialogArming", on === true);
  /** @param {"strict" | "confirm" | "off"} mode towards strict is free, towards off a tap */
  const setProvenance = (mode) => change("provenance", mode);

  const kill = () => run(async () => outcome(await api.sendMessage({ type: "kill" }), "kill"));
  const unkill = () => tap("unkill", "");

  async function approveOrigin() {
    const input = el("origin");
    const raw = String(input?.value ?? "").trim().replace(/\/$/, "");
    const entry = approvalEntry(raw);
    if (entry.refused !== null) {
      placeFeedback();
      say(`refused: ${CODE.POLICY_INVALID} (${entry.refused})`);
      return `refused: ${CODE.POLICY_INVALID}`;
    }
    const origin = entry.origin;
    if (origin === null) {
      placeFeedback();
      say(`refused: ${CODE.BAD_REQUEST} (enter an exact origin such as https://example.com, or https://*.example.com for a domain and every subdomain)`);
      return `refused: ${CODE.BAD_REQUEST}`;
    }
    const existing = Array.isArray(policy?.origins) ? policy.origins.map(String) : [];
    if (existing.includes(origin)) {
      placeFeedback();
      say(`already approved: ${origin}`);
      return "already approved";
    }
    // Under a subdomain approval already: nothing to sign (the host would fold it in anyway).
    /** @type {import("../shared/approval.js").Approval[]} */
    const approvals = [];
    for (const entry of /** @type {string[]} */ (existing)) {
      const a = readApproval(entry);
      if (a !== null && a.kind === "wildcard") approvals.push(a);
    }
    const under = origin.includes("*") ? undefined : approvals.find((a) => approvesOrigin(origin, [a]));
    if (under) {
      placeFeedback();
      say(`already approved: ${origin} is under ${describeApproval(under)}`);
      return "already approved";
    }
    const result = await widen({ origins: [...existing, origin] });
    if (result.startsWith("done") && input) input.value = "";
    return result;
  }

  /** @param {string} id @param {() => Promise<unknown>} fn */
  const on = (id, fn) => el(id)?.addEventListener("click", () => {
    asking = el(id);
    fn().catch(() => {});
  });
  on("approve-origin", approveOrigin);
  on("enable-eval", () => widen({ eval: true }));
  on("enable-upload", () => widen({ upload: true }));
  on("restrict-eval", () => restrict("eval", false));
  on("restrict-upload", () => restrict("upload", false));
  on("enable-fetch", () => widen({ pageFetch: true }));
  on("restrict-fetch", () => restrict("pageFetch", false));
  on("kill", kill);
  on("unkill", unkill);
  on("set-grace", setGrace);
  on("set-timeout", setConfirmTimeout);
  on("presence-on", () => setPresenceConfirm(true));
  on("presence-off", () => setPresenceConfirm(false));
  on("close-tabs-on", () => setCloseTabsOnSessionEnd(true));
  on("close-tabs-off", () => setCloseTabsOnSessionEnd(false));
  on("dialog-arming-on", () => setDialogArming(true));
  on("dialog-arming-off", () => setDialogArming(false));
  on("console-capture-on", () => change("consoleCapture", true));
  on("console-capture-off", () => change("consoleCapture", false));
  on("network-capture-on", () => change("networkCapture", true));
  on("network-capture-off", () => change("networkCapture", false));
  for (const mode of /** @type {const} */ (["strict", "confirm", "off"])) on(`provenance-${mode}`, () => setProvenance(mode));
  // Enter in a field does what its button does (there is no <form> to submit).
  /** @param {string} id @param {() => Promise<unknown>} fn */
  const onEnter = (id, fn) => el(id)?.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e.key !== "Enter") return;
    asking = el(id);
    fn().catch(() => {});
  });
  onEnter("origin", approveOrigin);
  onEnter("grace", setGrace);
  onEnter("confirm-timeout", setConfirmTimeout);

  await refresh();
  return { refresh, widen, restrict, kill, unkill, approveOrigin, setGrace, setConfirmTimeout, setPresenceConfirm,
    setCloseTabsOnSessionEnd, setDialogArming, setProvenance };
}
