// handlers/tabs.js — the tab actions (`tab_list`). Thin glue: the tab query is injected (the real
// one comes from lib/chrome-api.js), the shaping is lib/tab-mapping.js. It must never touch the
// chrome global itself, never read page content, and never return more than the mapped fields.

import { toTabList } from "../lib/tab-mapping.js";

/**
 * @typedef {object} TabsApi
 * @property {() => Promise<unknown[]>} queryAllTabs every tab in every window (tabs.query({}))
 */

/**
 * Handler entries for the dispatcher: [["tab_list", handler]].
 * @param {TabsApi} api
 * @returns {Array<[string, import("../lib/dispatch.js").Handler]>}
 */
export function tabHandlers(api) {
  return [["tab_list", async () => toTabList(await api.queryAllTabs())]];
}
