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

/**
 * The JSON schema of every action's `args` as the MCP server sends them (`Arguments.wire()`;
 * mcp_server/catalogue/wire.py derives each from the tool's input schema): worker/dispatch.js
 * checks a request's `args` against its action's with shared/arg-schema.js before the handler runs.
 * @type {ReadonlyArray<[string, Record<string, unknown>]>}
 */
export const ACTION_ARGS = Object.freeze([
  ["tab_list", {"additionalProperties":false,"properties":{},"type":"object"}],
  ["tab_open", {"additionalProperties":false,"properties":{"url":{"maxLength":8192,"minLength":1,"type":"string"}},"required":["url"],"type":"object"}],
  ["tab_focus", {"additionalProperties":false,"properties":{"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["tab_close", {"additionalProperties":false,"properties":{"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["tab_close_all", {"additionalProperties":false,"properties":{},"type":"object"}],
  ["page_navigate", {"additionalProperties":false,"properties":{"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"tabId":{"minimum":0,"type":"integer"},"url":{"maxLength":8192,"minLength":1,"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"}},"required":["tabId","url"],"type":"object"}],
  ["page_history", {"additionalProperties":false,"properties":{"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"steps":{"maximum":50,"minimum":-50,"type":"integer"},"tabId":{"minimum":0,"type":"integer"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"}},"required":["tabId"],"type":"object"}],
  ["page_reload", {"additionalProperties":false,"properties":{"bypassCache":{"type":"boolean"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"tabId":{"minimum":0,"type":"integer"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"}},"required":["tabId"],"type":"object"}],
  ["page_follow", {"additionalProperties":false,"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"pattern":"^@e[1-9][0-9]{0,6}$","type":"string"},"tabId":{"minimum":0,"type":"integer"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"}},"required":["tabId","ref"],"type":"object"}],
  ["page_text", {"additionalProperties":false,"properties":{"maxChars":{"maximum":5000000,"minimum":1,"type":"integer"},"offset":{"minimum":0,"type":"integer"},"ref":{"type":"string"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_markdown", {"additionalProperties":false,"properties":{"maxChars":{"maximum":5000000,"minimum":1,"type":"integer"},"offset":{"minimum":0,"type":"integer"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_snapshot", {"additionalProperties":false,"properties":{"compact":{"type":"boolean"},"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"maxNodes":{"maximum":5000,"minimum":1,"type":"integer"},"mode":{"enum":["auto","a11y","dom"],"type":"string"},"ref":{"type":"string"},"selector":{"type":"string"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_find", {"additionalProperties":false,"properties":{"exact":{"type":"boolean"},"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"limit":{"maximum":50,"minimum":1,"type":"integer"},"name":{"maxLength":2000,"type":"string"},"role":{"maxLength":2000,"type":"string"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_scrape", {"additionalProperties":false,"properties":{"attrs":{"items":{"type":"string"},"type":"array"},"selector":{"type":"string"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId","selector"],"type":"object"}],
  ["page_screenshot", {"additionalProperties":false,"properties":{"format":{"enum":["png","jpeg"],"type":"string"},"fullPage":{"type":"boolean"},"maxWidth":{"maximum":16384,"minimum":16,"type":"integer"},"quality":{"maximum":100,"minimum":1,"type":"integer"},"region":{"additionalProperties":false,"properties":{"height":{"exclusiveMinimum":0,"maximum":16384,"type":"number"},"width":{"exclusiveMinimum":0,"maximum":16384,"type":"number"},"x":{"maximum":1000000,"minimum":0,"type":"number"},"y":{"maximum":1000000,"minimum":0,"type":"number"}},"required":["x","y","width","height"],"type":"object"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_get_state", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId"],"type":"object"}],
  ["page_wait_for", {"additionalProperties":false,"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"selector":{"type":"string"},"state":{"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"type":"string"},"timeoutMs":{"maximum":60000,"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_click", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"newTab":{"type":"boolean"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId"],"type":"object"}],
  ["page_fill", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"method":{"enum":["value","insertText"],"type":"string"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"value":{"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId","value"],"type":"object"}],
  ["page_press", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]},{"not":{"anyOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}]}}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"key":{"type":"string"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId","key"],"type":"object"}],
  ["page_select", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"label":{"type":"string"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"optionIndex":{"minimum":0,"type":"integer"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"value":{"type":"string"},"values":{"items":{"type":"string"},"maxItems":1000,"type":"array"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId"],"type":"object"}],
  ["page_check", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}],"properties":{"checked":{"type":"boolean"},"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId","checked"],"type":"object"}],
  ["page_hover", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]},{"required":["x","y"]}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"x":{"maximum":100000,"minimum":0,"type":"number"},"xpath":{"minLength":1,"type":"string"},"y":{"maximum":100000,"minimum":0,"type":"number"}},"required":["tabId"],"type":"object"}],
  ["page_mouse", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]},{"required":["x","y"]}],"properties":{"button":{"enum":["left","right","middle"],"type":"string"},"clickCount":{"maximum":3,"minimum":1,"type":"integer"},"force":{"type":"boolean"},"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"modifiers":{"items":{"enum":["Alt","Control","Meta","Shift","Mod"],"type":"string"},"type":"array"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"x":{"maximum":100000,"minimum":0,"type":"number"},"xpath":{"minLength":1,"type":"string"},"y":{"maximum":100000,"minimum":0,"type":"number"}},"required":["tabId"],"type":"object"}],
  ["page_dialog", {"additionalProperties":false,"properties":{"action":{"enum":["accept","dismiss"],"type":"string"},"arm":{"enum":["accept","dismiss","off"],"type":"string"},"promptText":{"maxLength":10000,"type":"string"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_type", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]},{"not":{"anyOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}]}}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"value":{"maxLength":100000,"minLength":1,"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId","value"],"type":"object"}],
  ["page_keys", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]},{"not":{"anyOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}]}}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"keys":{"anyOf":[{"maxLength":40,"minLength":1,"type":"string"},{"items":{"maxLength":40,"minLength":1,"type":"string"},"maxItems":50,"minItems":1,"type":"array"}]},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId","keys"],"type":"object"}],
  ["page_scroll", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]},{"not":{"anyOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}]}}],"properties":{"container":{"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}],"properties":{"index":{"minimum":0,"type":"integer"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"text":{"minLength":1,"type":"string"},"xpath":{"minLength":1,"type":"string"}},"type":"object"},"dx":{"maximum":1000000.0,"minimum":-1000000.0,"type":"number"},"dy":{"maximum":1000000.0,"minimum":-1000000.0,"type":"number"},"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"to":{"anyOf":[{"enum":["top","bottom"],"type":"string"},{"additionalProperties":false,"properties":{"x":{"maximum":10000000.0,"minimum":0,"type":"number"},"y":{"maximum":10000000.0,"minimum":0,"type":"number"}},"required":["x","y"],"type":"object"}]},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId"],"type":"object"}],
  ["page_clear", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId"],"type":"object"}],
  ["page_settle", {"additionalProperties":false,"properties":{"stableMs":{"maximum":120000,"minimum":0,"type":"integer"},"tabId":{"minimum":0,"type":"integer"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_reveal", {"additionalProperties":false,"properties":{"container":{"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}],"properties":{"index":{"minimum":0,"type":"integer"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"text":{"minLength":1,"type":"string"},"xpath":{"minLength":1,"type":"string"}},"type":"object"},"maxSteps":{"maximum":2000,"minimum":1,"type":"integer"},"observe":{"additionalProperties":false,"properties":{"snapshot":{"enum":["compact","full"],"type":"string"},"text":{"type":"boolean"}},"type":"object"},"selector":{"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"},"waitFor":{"additionalProperties":false,"properties":{"ref":{"type":"string"},"selector":{"type":"string"},"state":{"enum":["visible","absent"],"type":"string"},"text":{"type":"string"},"timeoutMs":{"maximum":120000,"minimum":0,"type":"integer"}},"type":"object"}},"required":["tabId"],"type":"object"}],
  ["cookie_get", {"additionalProperties":false,"properties":{"name":{"type":"string"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["storage_get", {"additionalProperties":false,"properties":{"area":{"type":"string"},"key":{"type":"string"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_eval", {"additionalProperties":false,"properties":{"code":{"maxLength":100000,"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId","code"],"type":"object"}],
  ["page_upload", {"additionalProperties":false,"oneOf":[{"required":["ref"]},{"required":["selector"]},{"required":["text"]},{"required":["xpath"]}],"properties":{"frame":{"maximum":2147483647,"minimum":0,"type":"integer"},"index":{"minimum":0,"type":"integer"},"path":{"type":"string"},"ref":{"minLength":1,"type":"string"},"selector":{"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"text":{"minLength":1,"type":"string"},"xpath":{"minLength":1,"type":"string"}},"required":["tabId","path"],"type":"object"}],
  ["page_frames", {"additionalProperties":false,"properties":{"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_fetch", {"additionalProperties":false,"properties":{"body":{"maxLength":1000000,"type":"string"},"headers":{"additionalProperties":{"type":"string"},"type":"object"},"maxBytes":{"maximum":1000000,"minimum":1,"type":"integer"},"method":{"enum":["GET","POST","PUT","PATCH","DELETE","HEAD"],"type":"string"},"saveAs":{"maxLength":255,"minLength":1,"pattern":"^[A-Za-z0-9][A-Za-z0-9._ -]*$","type":"string"},"tabId":{"minimum":0,"type":"integer"},"url":{"maxLength":8192,"minLength":1,"type":"string"}},"required":["tabId","url"],"type":"object"}],
  ["page_console", {"additionalProperties":false,"properties":{"clear":{"type":"boolean"},"level":{"enum":["error","warning","all"],"type":"string"},"limit":{"maximum":200,"minimum":1,"type":"integer"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_network", {"additionalProperties":false,"properties":{"clear":{"type":"boolean"},"limit":{"maximum":200,"minimum":1,"type":"integer"},"tabId":{"minimum":0,"type":"integer"},"url":{"maxLength":2048,"minLength":1,"type":"string"}},"required":["tabId"],"type":"object"}],
  ["page_pdf", {"additionalProperties":false,"properties":{"landscape":{"type":"boolean"},"name":{"maxLength":200,"minLength":1,"type":"string"},"pageRanges":{"maxLength":200,"pattern":"^[0-9][0-9 ,\\-]*$","type":"string"},"printBackground":{"type":"boolean"},"scale":{"maximum":2,"minimum":0.1,"type":"number"},"tabId":{"minimum":0,"type":"integer"}},"required":["tabId"],"type":"object"}],
  ["page_wait_download", {"additionalProperties":false,"properties":{"filename":{"maxLength":500,"minLength":1,"type":"string"},"tabId":{"minimum":0,"type":"integer"},"timeoutMs":{"maximum":40000,"minimum":100,"type":"integer"},"url":{"maxLength":2000,"minLength":1,"type":"string"}},"required":["tabId"],"type":"object"}],
  ["page_viewport", {"additionalProperties":false,"properties":{"deviceScaleFactor":{"exclusiveMinimum":0,"maximum":3,"type":"number"},"height":{"maximum":4096,"minimum":100,"type":"integer"},"mobile":{"type":"boolean"},"preset":{"enum":["mobile","tablet","desktop"],"type":"string"},"reset":{"type":"boolean"},"tabId":{"minimum":0,"type":"integer"},"touch":{"type":"boolean"},"width":{"maximum":4096,"minimum":100,"type":"integer"}},"required":["tabId"],"type":"object"}],
]);
