// popup.js — entry script of popup.html (the toolbar popup). Thin wiring only: hands the real
// document and runtime messaging (via lib/chrome-api.js) to lib/popup-page.js and
// lib/agent-tabs-view.js. It must never hold logic itself and never talk to the host except
// through the service worker.

import { runAgentTabsView } from "./lib/agent-tabs-view.js";
import { openOptionsPage, sendRuntimeMessage } from "./lib/chrome-api.js";
import { runPopupPage } from "./lib/popup-page.js";

runPopupPage({ doc: document, api: { sendMessage: sendRuntimeMessage, openOptionsPage } })
  .catch((err) => console.warn("tabwarden: popup failed", err));

runAgentTabsView({ doc: document, api: { sendMessage: sendRuntimeMessage } })
  .catch((err) => console.warn("tabwarden: agent tab list failed", err));
