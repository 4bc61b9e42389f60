// audit-view.js — the options page's Audit log section: asks the service worker for the host's
// audit_tail, renders it as a readable table (the person's local time, the event in words, the
// decision as a coloured badge, the details as labelled fields), filters it (by decision, by
// event or tool, and a case-insensitive substring over event, decision, path and tool) and exports
// the filtered entries as a JSON download (Blob + object URL + a temporary
// <a download>; no network). Pure helpers plus runAuditView, with the document, runtime messaging
// and the URL API injected (options.js wires the real ones). Host-supplied text only ever goes in
// as textContent, never as HTML. Entries were redacted by the host when written.

import { CODE } from "../shared/error-codes.js";
import { replaceChildrenIfChanged } from "./dom-keep.js";

export const AUDIT_LIMIT = 200;
export const EXPORT_NAME = "tabwarden-audit.json";
const RESERVED = new Set(["ts", "event", "decision", "path"]);

/** @param {unknown} v */
const text = (v) => (v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v) ?? String(v));

/** "some_code" → "Some code": the words of a name nobody wrote words for. @param {string} name */
export function humanize(name) {
  const words = String(name).replace(/[_-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return words === "" ? "" : `${words.charAt(0).toUpperCase()}${words.slice(1)}`;
}

/** Each audited event (trust/operations.py, host/, mcp_server/server.py) in a person's words. */
export const EVENT_WORDS = Object.freeze({
  tool_call: "Agent call",
  browser_pair: "Browser paired",
  browser_code: "Pairing code made for a browser",
  pair: "This computer paired",
  pair_client: "MCP client paired",
  revoke: "Access revoked",
  kill: "Kill switch engaged",
  unkill: "Kill switch released",
  policy_set: "Permissions widened",
  policy_restrict: "Permissions narrowed",
  policy_rollback: "Permissions rolled back",
  origin_grant: "Site allowed",
  provenance: "Address from another site's page",
  trust_tampered: "Trust record tampered with",
  trust_accepted: "Trust record accepted",
});

/** What each decision looks like: its badge colour (data-kind) and its word. */
const DECISION_KIND = Object.freeze({
  allowed: "ok", allow: "ok", granted: "ok", done: "ok",
  narrowed: "narrowed",
  refused: "refused", denied: "refused", deny: "refused", blocked: "refused",
});

/** Each detail field's label; a field without one is labelled by its own name in words. */
export const FIELD_WORDS = Object.freeze({
  path: "Confirmed by",
  tool: "Tool",
  client: "Client",
  refusal: "Refused because",
  reason: "Reason",
  browser: "Browser",
  credential: "Credential",
  approved_by: "Approved by",
  user_verified: "User verified (PIN or biometric)",
  changed: "Changed",
  origin: "Site",
  label: "Name",
  kind: "Kind",
  steps: "Steps",
  latched: "Latched",
});

/** Values shown as code (monospace): names, ids, paths and codes, never sentences. */
const CODE_FIELDS = new Set(["tool", "client", "refusal", "credential", "origin", "path", "browser", "label", "approved_by"]);

/**
 * The time of an entry (`ts`, Unix seconds) as an ISO string, or "" when absent or not a number.
 * (The exact, zone-free time: the row's tooltip and any export.)
 * @param {unknown} ts
 */
export function formatTime(ts) {
  if (typeof ts !== "number" || !Number.isFinite(ts)) return "";
  const d = new Date(ts * 1000);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString().replace(".000Z", "Z");
}

/**
 * The time of an entry in the person's own format and time zone (the browser's locale), or "".
 * @param {unknown} ts Unix seconds
 * @param {string | string[] | undefined} [locale] undefined: the browser's
 * @param {string} [timeZone] undefined: the browser's
 */
export function localTime(ts, locale = undefined, timeZone = undefined) {
  if (typeof ts !== "number" || !Number.isFinite(ts)) return "";
  const d = new Date(ts * 1000);
  if (Number.isNaN(d.getTime())) return "";
  return d.toLocaleString(locale, { dateStyle: "medium", timeStyle: "medium", ...(timeZone ? { timeZone } : {}) });
}

/** An event in words ("Agent call"); one nobody named, by its own name in words. @param {unknown} event */
export function eventWords(event) {
  const name = text(event);
  return Object.hasOwn(EVENT_WORDS, name) ? EVENT_WORDS[/** @type {keyof typeof EVENT_WORDS} */ (name)] : humanize(name);
}

/**
 * A decision's badge: its colour kind ("ok", "narrowed", "refused" or "other") and its word.
 * @param {unknown} decision
 * @returns {{kind: string, word: string}}
 */
export function decisionBadge(decision) {
  const name = text(decision);
  const kind = Object.hasOwn(DECISION_KIND, name) ? DECISION_KIND[/** @type {keyof typeof DECISION_KIND} */ (name)] : "other";
  return { kind, word: name === "" ? "—" : humanize(name) };
}

/** A detail value in words: yes/no, lists joined, anything else as text. @param {unknown} v */
function valueText(v) {
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (Array.isArray(v)) return v.map((x) => (typeof x === "string" ? x : text(x))).join(", ");
  return text(v);
}

/**
 * The entry's details as labelled fields, [label, value, asCode]: how it was confirmed (path)
 * first, then the rest sorted by name; empty values left out.
 * @param {Record<string, unknown>} entry
 * @returns {Array<[string, string, boolean]>}
 */
export function detailFields(entry) {
  const keys = ["path", ...Object.keys(entry).filter((k) => !RESERVED.has(k)).sort()];
  /** @type {Array<[string, string, boolean]>} */
  const out = [];
  for (const key of keys) {
    const value = valueText(entry[key]);
    if (value === "") continue;
    const label = Object.hasOwn(FIELD_WORDS, key) ? FIELD_WORDS[/** @type {keyof typeof FIELD_WORDS} */ (key)] : humanize(key);
    out.push([label, value, CODE_FIELDS.has(key) || /^[a-z0-9]+(_[a-z0-9]+)+$/.test(value)]);
  }
  return out;
}

/**
 * The entry's other fields as compact text: `key=value` (strings as is, anything else as JSON),
 * sorted by key, space-separated. (What the text filter does not search; kept for scripts.)
 * @param {Record<string, unknown>} entry
 */
export function otherFields(entry) {
  return Object.keys(entry).filter((k) => !RESERVED.has(k)).sort().map((k) => `${k}=${text(entry[k])}`).join(" ");
}

/**
 * One row's plain text: [time, event in words (with its tool), decision word, details as
 * "Label: value" lines].
 * @param {Record<string, unknown>} entry
 * @param {string | string[] | undefined} [locale]
 * @param {string} [timeZone]
 * @returns {string[]}
 */
export function entryCells(entry, locale = undefined, timeZone = undefined) {
  const tool = typeof entry.tool === "string" && entry.tool !== "" ? ` ${entry.tool}` : "";
  return [localTime(entry.ts, locale, timeZone), `${eventWords(entry.event)}${tool}`, decisionBadge(entry.decision).word,
    detailFields(entry).map(([label, value]) => `${label}: ${value}`).join("\n")];
}

/**
 * The choices the filters offer, from the entries loaded: the decisions and events present
 * (sorted by their words) and the tools agents called.
 * @param {Record<string, unknown>[]} entries
 * @returns {{decisions: string[], events: string[], tools: string[]}}
 */
export function filterChoices(entries) {
  const uniq = (/** @type {unknown[]} */ vs) => [...new Set(vs.filter((v) => typeof v === "string" && v !== ""))].map(String);
  const list = Array.isArray(entries) ? entries.filter((e) => e !== null && typeof e === "object") : [];
  const byWords = (/** @type {(v: string) => string} */ words) => (/** @type {string} */ a, /** @type {string} */ b) =>
    words(a).localeCompare(words(b));
  return {
    decisions: uniq(list.map((e) => e.decision)).sort(byWords((d) => decisionBadge(d).word)),
    events: uniq(list.map((e) => e.event)).sort(byWords(eventWords)),
    tools: uniq(list.filter((e) => e.event === "tool_call").map((e) => e.tool)).sort(),
  };
}

/**
 * The entries that pass the filters, order kept: `query` a case-insensitive substring of the
 * event (its name or its words), the decision, the path or the tool (blank: any);
 * `decision` an exact decision (""/absent: any); `event` "event:<name>" or "tool:<name>"
 * (""/absent: any).
 * @param {unknown[]} entries
 * @param {unknown} query
 * @param {{decision?: string, event?: string}} [pick]
 * @returns {Record<string, unknown>[]}
 */
export function filterEntries(entries, query, pick = {}) {
  let list = /** @type {Record<string, unknown>[]} */ ((Array.isArray(entries) ? entries : [])
    .filter((e) => e !== null && typeof e === "object" && !Array.isArray(e)));
  const decision = String(pick.decision ?? "");
  if (decision !== "") list = list.filter((e) => e.decision === decision);
  const event = String(pick.event ?? "");
  if (event.startsWith("event:")) list = list.filter((e) => e.event === event.slice(6));
  else if (event.startsWith("tool:")) list = list.filter((e) => e.event === "tool_call" && e.tool === event.slice(5));
  const q = String(query ?? "").trim().toLowerCase();
  if (q === "") return list;
  return list.filter((e) => [e.event, eventWords(e.event), e.decision, e.path, e.tool].some((v) => text(v).toLowerCase().includes(q)));
}

/**
 * Render `entries` (newest last, shown newest first) into the table's body with textContent
 * only: the local time (the exact UTC time as its tooltip), the event in words (its tool as
 * code), the decision as a coloured badge, and the details as a list of labelled fields.
 * @param {Document} doc
 * @param {HTMLElement} table #audit
 * @param {Record<string, unknown>[]} entries
 */
export function renderAudit(doc, table, entries) {
  const body = /** @type {any} */ (table).tBodies?.[0] ?? table;
  /** @param {string} tag @param {string} content @param {string} [cls] */
  const node = (tag, content, cls) => {
    const e = doc.createElement(tag);
    e.textContent = content;
    if (cls) e.className = cls;
    return e;
  };
  const rows = () => [...entries].reverse().map((entry) => {
    const tr = doc.createElement("tr");
    const time = node("td", localTime(entry.ts), "when");
    const exact = formatTime(entry.ts);
    if (exact !== "") time.setAttribute("title", `${exact} (UTC)`);
    const event = node("td", "", "event");
    event.setAttribute("title", text(entry.event));
    if (typeof entry.tool === "string" && entry.tool !== "") event.append(eventWords(entry.event), " ", node("code", entry.tool));
    else event.textContent = eventWords(entry.event);
    const decisionCell = doc.createElement("td");
    const { kind, word } = decisionBadge(entry.decision);
    const badge = node("span", word, "badge");
    badge.setAttribute("data-kind", kind);
    decisionCell.append(badge);
    const details = doc.createElement("td");
    const fields = detailFields(entry);
    if (fields.length > 0) {
      const dl = doc.createElement("dl");
      dl.className = "fields";
      for (const [label, value, asCode] of fields) {
        const dd = doc.createElement("dd");
        dd.append(asCode ? node("code", value) : value);
        dl.append(node("dt", label), dd);
      }
      details.append(dl);
    }
    tr.append(time, event, decisionCell, details);
    return tr;
  });
  replaceChildrenIfChanged(body, JSON.stringify(entries), rows);
}

/**
 * Fill a filter <select> with "any" and the given choices, keeping the person's pick while it
 * is still offered.
 * @param {Document} doc
 * @param {any} select
 * @param {string} any the "no filter" option's words
 * @param {Array<[string, string] | [string, Array<[string, string]>]>} choices [value, words]
 *   or [group label, its choices] for an <optgroup>
 */
export function fillSelect(doc, select, any, choices) {
  if (!select) return;
  const before = String(select.value ?? "");
  /** @param {string} value @param {string} words */
  const option = (value, words) => {
    const o = doc.createElement("option");
    o.value = value;
    o.textContent = words;
    return o;
  };
  const values = new Set([""]);
  replaceChildrenIfChanged(select, JSON.stringify([any, choices]), () => [option("", any), ...choices.map(([a, b]) => {
    if (!Array.isArray(b)) return option(a, b);
    const group = doc.createElement("optgroup");
    group.setAttribute("label", a);
    group.append(...b.map(([v, w]) => option(v, w)));
    return group;
  })]);
  for (const [a, b] of choices) for (const [v] of Array.isArray(b) ? b : [[a]]) values.add(v);
  select.value = values.has(before) ? before : "";
}

/**
 * The export file's contents: the entries as indented JSON.
 * @param {unknown[]} entries
 */
export function exportJson(entries) {
  return `${JSON.stringify(entries, null, 2)}\n`;
}

/**
 * Download `entries` as tabwarden-audit.json: a Blob, an object URL and a temporary
 * <a download> that is clicked, removed and its URL revoked. No network.
 * @param {Document} doc
 * @param {{createObjectURL: (b: Blob) => string, revokeObjectURL: (u: string) => void}} urlApi
 * @param {unknown[]} entries
 * @param {typeof Blob} [BlobCtor]
 */
export function downloadJson(doc, urlApi, entries, BlobCtor = Blob) {
  const blob = new BlobCtor([exportJson(entries)], { type: "application/json" });
  const url = urlApi.createObjectURL(blob);
  const a = /** @type {HTMLAnchorElement} */ (doc.createElement("a"));
  a.href = url;
  a.download = EXPORT_NAME;
  a.setAttribute("download", EXPORT_NAME);
  try {
    doc.body?.append(a);
    a.click();
  } finally {
    a.remove?.();
    urlApi.revokeObjectURL(url);
  }
  return { url, blob };
}

/**
 * Wire the Audit log section.
 * @param {{doc: Document, api: {sendMessage: (msg: object) => Promise<any>},
 *   urlApi?: {createObjectURL: (b: Blob) => string, revokeObjectURL: (u: string) => void},
 *   BlobCtor?: typeof Blob}} deps
 */
export async function runAuditView({ doc, api, urlApi = URL, BlobCtor = globalThis.Blob }) {
  const table = doc.getElementById("audit");
  const filter = /** @type {HTMLInputElement | null} */ (doc.getElementById("audit-filter"));
  const refreshButton = doc.getElementById("audit-refresh");
  const exportButton = doc.getElementById("audit-export");
  /** @param {string} t */
  const status = (t) => {
    const el = doc.getElementById("audit-status");
    if (el) el.textContent = t;
  };
  /** @type {Record<string, unknown>[]} */
  let entries = [];

  const decisionPick = /** @type {HTMLSelectElement | null} */ (doc.getElementById("audit-decision"));
  const eventPick = /** @type {HTMLSelectElement | null} */ (doc.getElementById("audit-event"));

  const shown = () => filterEntries(entries, filter?.value ?? "", { decision: decisionPick?.value ?? "", event: eventPick?.value ?? "" });
  const draw = () => {
    const list = shown();
    if (table) renderAudit(doc, table, list);
    const all = entries.length;
    status(list.length === all ? `${all} entries${truncated ? " (older entries omitted)" : ""}`
      : `${list.length} of ${all} entries shown`);
  };
  let truncated = false;
  /** The filters offer what the loaded entries hold. */
  function fillFilters() {
    const { decisions, events, tools } = filterChoices(entries);
    fillSelect(doc, decisionPick, "Any decision", decisions.map((d) => [d, decisionBadge(d).word]));
    /** @type {Array<[string, string] | [string, Array<[string, string]>]>} */
    const eventChoices = events.map((e) => [`event:${e}`, eventWords(e)]);
    if (tools.length > 0) eventChoices.push(["Agent calls by tool", tools.map((t) => [`tool:${t}`, `Agent call: ${t}`])]);
    fillSelect(doc, eventPick, "Any event or tool", eventChoices);
  }

  async function refresh() {
    let r = null;
    try {
      r = await api.sendMessage({ type: "audit_tail", limit: AUDIT_LIMIT });
    } catch {
      r = null;
    }
    if (!r || r.ok !== true || !Array.isArray(r.entries)) {
      status(`Audit log unavailable (${text(r?.code ?? CODE.INTERNAL_ERROR)})`);
      return false;
    }
    entries = filterEntries(r.entries, "");
    truncated = r.truncated === true;
    fillFilters();
    draw();
    return true;
  }

  function exportShown() {
    return downloadJson(doc, urlApi, shown(), BlobCtor);
  }

  filter?.addEventListener("input", draw);
  decisionPick?.addEventListener("change", draw);
  eventPick?.addEventListener("change", draw);
  refreshButton?.addEventListener("click", () => {
    refresh().catch(() => {});
  });
  exportButton?.addEventListener("click", () => {
    try {
      exportShown();
    } catch {
      status("Export failed");
    }
  });
  await refresh();
  return { refresh, exportShown, shown };
}
