// worker/catalogue.js — generated from mcp_server/catalogue/ by `python -m tabwarden.mcp_server.catalogue.generate --write`:
// edit the tools' declarations there, never this file (a test fails when it differs from what
// the generator writes). The catalogue's facts the extension acts on. Pure data: imports nothing.

/**
 * Every action the MCP server relays, in catalogue order, with the handler family that serves it
 * (handlers/<family>.js; handlers/actions.js builds its dispatch map from this).
 * @type {ReadonlyArray<[string, string]>}
 */
export const ACTION_FAMILIES = Object.freeze([
  ["tab_list", "tabs"],
  ["tab_open", "tabs"],
  ["tab_focus", "nav"],
  ["tab_close", "tabs"],
  ["tab_close_all", "tabs"],
  ["page_navigate", "page"],
  ["page_history", "nav"],
  ["page_reload", "nav"],
  ["page_follow", "nav"],
  ["page_text", "page"],
  ["page_markdown", "read"],
  ["page_snapshot", "interact"],
  ["page_find", "interact"],
  ["page_scrape", "read"],
  ["page_screenshot", "read"],
  ["page_get_state", "interact"],
  ["page_wait_for", "interact"],
  ["page_click", "interact"],
  ["page_fill", "interact"],
  ["page_press", "interact"],
  ["page_select", "interact"],
  ["page_check", "interact"],
  ["page_hover", "input"],
  ["page_mouse", "input"],
  ["page_dialog", "input"],
  ["page_type", "keyboard"],
  ["page_keys", "keyboard"],
  ["page_scroll", "interact"],
  ["page_clear", "interact"],
  ["page_settle", "interact"],
  ["page_reveal", "interact"],
  ["cookie_get", "read"],
  ["storage_get", "read"],
  ["page_eval", "read"],
  ["page_upload", "read"],
  ["page_frames", "frames"],
  ["page_fetch", "fetch"],
  ["page_console", "capture"],
  ["page_network", "capture"],
  ["page_pdf", "files"],
  ["page_wait_download", "files"],
  ["page_viewport", "files"],
]);

/**
 * The actions that take `waitFor` and `observe` (their arguments are the catalogue's `Acting`;
 * handlers/interact.js withAftermath wraps each).
 * @type {ReadonlyArray<string>}
 */
export const OBSERVING_ACTIONS = Object.freeze([
  "page_navigate",
  "page_history",
  "page_reload",
  "page_follow",
  "page_click",
  "page_fill",
  "page_press",
  "page_select",
  "page_check",
  "page_hover",
  "page_mouse",
  "page_type",
  "page_keys",
  "page_scroll",
  "page_clear",
  "page_reveal",
]);

/**
 * The actions whose output renders every frame of the page or saves a file a frame started
 * (the catalogue's `FrameOutput`; docs/adr/0007-frames-in-rendered-output.md).
 * @type {ReadonlyArray<[string, "renders" | "saves"]>}
 */
export const FRAME_OUTPUT = Object.freeze([
  ["page_screenshot", "renders"],
  ["page_pdf", "renders"],
  ["page_wait_download", "saves"],
]);

/**
 * The actions whose address lineage worker/provenance-gate.js decides before the handler runs: the
 * argument the catalogue declares an address (`Lineage.ADDRESS`) or a request's target
 * (`Lineage.REQUEST_TARGET`: `request`, its body and headers go there too).
 * @type {ReadonlyArray<[string, {address: string, request?: boolean}]>}
 */
export const ADDRESS_LINEAGE = Object.freeze([
  ["tab_open", {"address": "url"}],
  ["page_navigate", {"address": "url"}],
  ["page_fetch", {"address": "url", "request": true}],
]);
