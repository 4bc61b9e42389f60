// agent-tabs-view.js — the "Agent tabs" list of popup.html and options.html: every tab an agent
// opened that is still open, with the client that opened it (its paired label), when it last
// called or since when it is orphaned, its origin and masked title (worker/tab-lifecycle.js),
// orphans (their session ended) marked, each row with a one-click Close (a live session's tab
// too: closing it is narrowing, and its session forgets it) and "Close all orphaned tabs". Pure:
// the document and runtime messaging are injected (popup.js and options.js wire the real ones).
// It must never put worker-supplied text into the DOM as HTML (textContent only) and never offer
// to close a tab no agent opened (the worker lists agent tabs only, and checks again).

import { CODE } from "../shared/error-codes.js";
import { replaceChildrenIfChanged } from "./dom-keep.js";

/** @param {unknown} ms a wall-clock time, or anything else (then null) */
const clock = (ms) => (typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? new Date(ms).toLocaleTimeString() : null);

/**
 * One line describing a row, in words a person reads (never the raw session name):
 * "tab 7 · claude-code · orphaned since 17:40:01 · https://a.test — Title".
 * @param {any} row an agent_tabs_list row
 */
export function rowText(row) {
  const orphanedAt = clock(row?.orphanedAt);
  const lastCall = clock(row?.lastCallAt);
  const state = row?.orphaned === true ? (orphanedAt === null ? "orphaned" : `orphaned since ${orphanedAt}`)
    : lastCall === null ? "in use" : `in use, last call ${lastCall}`;
  const title = typeof row?.title === "string" && row.title !== "" ? row.title : "(no title)";
  const origin = typeof row?.origin === "string" && row.origin !== "" ? row.origin : "(no site)";
  const client = typeof row?.client === "string" && row.client !== "" ? row.client : "agent";
  const tab = Number.isInteger(row?.id) ? `tab ${row.id} · ` : "";
  return `${tab}${client} · ${state} · ${origin} — ${title}`;
}

/**
 * @param {{doc: Document, api: {sendMessage: (msg: object) => Promise<any>}}} deps
 * @returns {Promise<{refresh: () => Promise<void>, closeOrphan: (tabId: number) => Promise<string>,
 *   closeTab: (tabId: number) => Promise<string>, closeOrphans: () => Promise<string>}>}
 */
export async function runAgentTabsView({ doc, api }) {
  const list = doc.getElementById("agent-tabs");
  const closeAll = /** @type {HTMLButtonElement | null} */ (doc.getElementById("close-orphans"));
  /** @param {string} text */
  const say = (text) => {
    const el = doc.getElementById("agent-tabs-status");
    if (el) el.textContent = text;
  };

  /** @param {any} r @param {string} what */
  const outcome = (r, what) => (r && r.ok === true ? `done: ${what}` : `refused: ${String(r?.code ?? CODE.INTERNAL_ERROR)}`);

  /** @param {object} msg */
  async function send(msg) {
    try {
      return await api.sendMessage(msg);
    } catch {
      return null;
    }
  }

  /** @param {number} tabId */
  async function closeOrphan(tabId) {
    const text = outcome(await send({ type: "agent_tabs_close_orphan", tabId }), "closed 1 tab");
    await refresh();
    say(text);
    return text;
  }

  /** A live session's tab: closed, and its session forgets it. @param {number} tabId */
  async function closeTab(tabId) {
    const text = outcome(await send({ type: "agent_tabs_close", tabId }), "closed 1 tab");
    await refresh();
    say(text);
    return text;
  }

  async function closeOrphans() {
    const r = await send({ type: "agent_tabs_close_orphans" });
    const text = outcome(r, `closed ${Number.isInteger(r?.closed) ? r.closed : 0} orphaned tab(s)`);
    await refresh();
    say(text);
    return text;
  }

  async function refresh() {
    const r = await send({ type: "agent_tabs_list" });
    /** @type {any[] | null} */
    const rows = r && r.ok === true && Array.isArray(r.tabs) ? r.tabs : null;
    const items = (rows ?? []).map((row) => {
      const li = doc.createElement("li");
      li.className = row?.orphaned === true ? "orphaned" : "live";
      const span = doc.createElement("span");
      span.textContent = rowText(row);
      li.append(span);
      if (Number.isInteger(row?.id)) {
        const orphan = row?.orphaned === true;
        const button = doc.createElement("button");
        button.type = "button";
        button.textContent = "Close";
        button.className = orphan ? "close-orphan" : "close-tab";
        button.setAttribute("aria-label", `${orphan ? "Close orphaned tab" : "Close agent tab"}: ${rowText(row)}`);
        button.addEventListener("click", () => { (orphan ? closeOrphan : closeTab)(row.id).catch(() => {}); });
        li.append(" ", button);
      }
      return li;
    });
    if (items.length === 0) {
      const li = doc.createElement("li");
      li.textContent = rows === null ? "agent tabs unavailable (is the service worker running?)" : "no agent tabs open";
      items.push(li);
    }
    replaceChildrenIfChanged(list, JSON.stringify(rows), () => items);
    if (closeAll) closeAll.disabled = !(rows ?? []).some((row) => row?.orphaned === true);
  }

  closeAll?.addEventListener("click", () => { closeOrphans().catch(() => {}); });
  await refresh();
  return { refresh, closeOrphan, closeTab, closeOrphans };
}
