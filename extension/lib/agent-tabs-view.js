// agent-tabs-view.js — the "Agent tabs" list of popup.html and options.html: every tab an agent
// opened that is still open, with its session, origin and masked title (lib/tab-lifecycle.js),
// orphans (their session ended) marked, each orphan with a one-click Close and all of them with
// "Close all orphaned tabs". Pure: the document and runtime messaging are injected (popup.js and
// options.js wire the real ones). It must never put worker-supplied text into the DOM as HTML
// (textContent only) and never offer to close a tab a live session is driving.

import { CODE } from "./error-codes.js";

/**
 * One line describing a row: "tab 7 · orphaned · https://a.test — Title (session s-123-…)".
 * @param {any} row an agent_tabs_list row
 */
export function rowText(row) {
  const state = row?.orphaned === true ? "orphaned" : "in use";
  const title = typeof row?.title === "string" && row.title !== "" ? row.title : "(no title)";
  const origin = typeof row?.origin === "string" && row.origin !== "" ? row.origin : "(no site)";
  const session = typeof row?.session === "string" ? row.session : "?";
  const tab = Number.isInteger(row?.id) ? `tab ${row.id} · ` : "";
  return `${tab}${state} · ${origin} — ${title} (session ${session})`;
}

/**
 * @param {{doc: Document, api: {sendMessage: (msg: object) => Promise<any>}}} deps
 * @returns {Promise<{refresh: () => Promise<void>, closeOrphan: (tabId: number) => Promise<string>,
 *   closeOrphans: () => Promise<string>}>}
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
      if (row?.orphaned === true && Number.isInteger(row?.id)) {
        const button = doc.createElement("button");
        button.type = "button";
        button.textContent = "Close";
        button.className = "close-orphan";
        button.setAttribute("aria-label", `Close orphaned tab: ${rowText(row)}`);
        button.addEventListener("click", () => { closeOrphan(row.id).catch(() => {}); });
        li.append(" ", button);
      }
      return li;
    });
    if (items.length === 0) {
      const li = doc.createElement("li");
      li.textContent = rows === null ? "agent tabs unavailable (is the service worker running?)" : "no agent tabs open";
      items.push(li);
    }
    list?.replaceChildren(...items);
    if (closeAll) closeAll.disabled = !(rows ?? []).some((row) => row?.orphaned === true);
  }

  closeAll?.addEventListener("click", () => { closeOrphans().catch(() => {}); });
  await refresh();
  return { refresh, closeOrphan, closeOrphans };
}
