// audit-view.js — the options page's Audit log section: asks the service worker for the host's
// audit_tail, renders it as a table, filters it (case-insensitive substring over event, decision
// and path) and exports the filtered entries as a JSON download (Blob + object URL + a temporary
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

/**
 * The time of an entry (`ts`, Unix seconds) as an ISO string, or "" when absent or not a number.
 * @param {unknown} ts
 */
export function formatTime(ts) {
  if (typeof ts !== "number" || !Number.isFinite(ts)) return "";
  const d = new Date(ts * 1000);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString().replace(".000Z", "Z");
}

/**
 * The entry's other fields as compact text: `key=value` (strings as is, anything else as JSON),
 * sorted by key, space-separated.
 * @param {Record<string, unknown>} entry
 */
export function otherFields(entry) {
  return Object.keys(entry).filter((k) => !RESERVED.has(k)).sort().map((k) => `${k}=${text(entry[k])}`).join(" ");
}

/**
 * One table row's cells: [time, event, decision, path, other].
 * @param {Record<string, unknown>} entry
 * @returns {string[]}
 */
export function entryCells(entry) {
  return [formatTime(entry.ts), text(entry.event), text(entry.decision), text(entry.path), otherFields(entry)];
}

/**
 * The entries whose event, decision or path contains `query` (case-insensitive); all of them
 * when the query is blank. Order is kept.
 * @param {unknown[]} entries
 * @param {unknown} query
 * @returns {Record<string, unknown>[]}
 */
export function filterEntries(entries, query) {
  const list = /** @type {Record<string, unknown>[]} */ ((Array.isArray(entries) ? entries : [])
    .filter((e) => e !== null && typeof e === "object" && !Array.isArray(e)));
  const q = String(query ?? "").trim().toLowerCase();
  if (q === "") return list;
  return list.filter((e) => [e.event, e.decision, e.path].some((v) => text(v).toLowerCase().includes(q)));
}

/**
 * Render `entries` (newest last, shown newest first) into the table's body with textContent only.
 * @param {Document} doc
 * @param {HTMLElement} table #audit
 * @param {Record<string, unknown>[]} entries
 */
export function renderAudit(doc, table, entries) {
  const body = /** @type {any} */ (table).tBodies?.[0] ?? table;
  const rows = [...entries].reverse().map((entry) => {
    const tr = doc.createElement("tr");
    for (const cell of entryCells(entry)) {
      const td = doc.createElement("td");
      td.textContent = cell;
      tr.append(td);
    }
    return tr;
  });
  replaceChildrenIfChanged(body, JSON.stringify(entries), () => rows);
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

  const shown = () => filterEntries(entries, filter?.value ?? "");
  const draw = () => {
    if (table) renderAudit(doc, table, shown());
  };

  async function refresh() {
    let r = null;
    try {
      r = await api.sendMessage({ type: "audit_tail", limit: AUDIT_LIMIT });
    } catch {
      r = null;
    }
    if (!r || r.ok !== true || !Array.isArray(r.entries)) {
      status(`Audit log unavailable: ${text(r?.code ?? CODE.INTERNAL_ERROR)}`);
      return false;
    }
    entries = filterEntries(r.entries, "");
    draw();
    status(`${entries.length} entries${r.truncated === true ? " (older entries omitted)" : ""}`);
    return true;
  }

  function exportShown() {
    return downloadJson(doc, urlApi, shown(), BlobCtor);
  }

  filter?.addEventListener("input", draw);
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
