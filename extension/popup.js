// popup.js — entry script of popup.html (the toolbar popup). Thin wiring only: hands the real
// document and runtime messaging (via shared/chrome-api.js) to ui/popup-page.js and
// ui/agent-tabs-view.js, and keeps both current (shared/live-refresh.js). It must never hold logic
// itself and never talk to the host except through the service worker.

import { runAgentTabsView } from "./ui/agent-tabs-view.js";
import { extensionVersion, onRuntimeMessage, openOptionsPage, sendRuntimeMessage } from "./shared/chrome-api.js";
import { runLiveRefresh } from "./shared/live-refresh.js";
import { runPopupPage } from "./ui/popup-page.js";
import { reportPageErrors } from "./shared/page-errors.js";

// This page's own errors go to the host's log too (masked there, as the worker's are).
const reportError = reportPageErrors("popup", window, sendRuntimeMessage);

const popupPage = runPopupPage({
  doc: document, api: { sendMessage: sendRuntimeMessage, openOptionsPage }, version: extensionVersion(),
});
popupPage.catch((err) => { console.warn("tabwarden: popup failed", err); reportError(err); });

const agentTabs = runAgentTabsView({ doc: document, api: { sendMessage: sendRuntimeMessage } });
agentTabs.catch((err) => { console.warn("tabwarden: agent tab list failed", err); reportError(err); });

runLiveRefresh({
  doc: document, win: window, listen: onRuntimeMessage,
  refreshers: [() => popupPage.then((p) => p.refresh()), () => agentTabs.then((t) => t.refresh())],
});
