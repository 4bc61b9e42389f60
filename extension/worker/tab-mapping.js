// tab-mapping.js — turns browser tab objects into the `tab_list` result shape.
// Pure: no chrome (tabs arrive as plain data). It must never pass through fields beyond
// {id, url, title, active, windowId} (no favicons, no session data) or tabs without a real id.

/** @typedef {{id: number, url: string, title: string, active: boolean, windowId: number}} TabSummary */

/**
 * One tab's summary, or null when the tab has no usable id (missing, or TAB_ID_NONE = -1).
 * @param {unknown} tab a chrome.tabs.Tab-like object
 * @returns {TabSummary | null}
 */
export function toTabSummary(tab) {
  if (tab === null || typeof tab !== "object") return null;
  const t = /** @type {Record<string, unknown>} */ (tab);
  if (!Number.isInteger(t.id) || /** @type {number} */ (t.id) < 0) return null;
  return {
    id: /** @type {number} */ (t.id),
    url: typeof t.url === "string" ? t.url : "",
    title: typeof t.title === "string" ? t.title : "",
    active: t.active === true,
    windowId: Number.isInteger(t.windowId) ? /** @type {number} */ (t.windowId) : -1,
  };
}

/**
 * The `tab_list` result: summaries of every tab with a usable id, in input order.
 * @param {unknown} tabs
 * @returns {{tabs: TabSummary[]}}
 */
export function toTabList(tabs) {
  const list = Array.isArray(tabs) ? tabs : [];
  /** @type {TabSummary[]} */
  const out = [];
  for (const tab of list) {
    const summary = toTabSummary(tab);
    if (summary !== null) out.push(summary);
  }
  return { tabs: out };
}
