// options.js — entry script of options.html (its Status, Sites, Permissions, Clients and Audit
// sections). Thin wiring only: hands the real document, runtime messaging (via shared/chrome-api.js)
// and WebAuthn create()/get() (via ui/webauthn.js) to ui/options-page.js, ui/policy-page.js,
// ui/clients-page.js, ui/agent-tabs-view.js and ui/audit-view.js, and keeps them current
// (shared/live-refresh.js). It must never hold pairing or policy logic itself, and never talk to the
// host except through the service worker.

import { runAgentTabsView } from "./ui/agent-tabs-view.js";
import { runAuditView } from "./ui/audit-view.js";
import { extensionVersion, onRuntimeMessage, sendRuntimeMessage } from "./shared/chrome-api.js";
import { runClientsPage } from "./ui/clients-page.js";
import { runLiveRefresh } from "./shared/live-refresh.js";
import { runOptionsPage } from "./ui/options-page.js";
import { runPolicyPage } from "./ui/policy-page.js";
import { createCredential, getAssertion } from "./ui/webauthn.js";
import { reportPageErrors } from "./shared/page-errors.js";

// This page's own errors go to the host's log too (masked there, as the worker's are).
const reportError = reportPageErrors("options", window, sendRuntimeMessage);

const policyPage = runPolicyPage({ doc: document, api: { sendMessage: sendRuntimeMessage, getAssertion } });
policyPage.catch((err) => { console.warn("tabwarden: policy section failed", err); reportError(err); });

const clientsPage = runClientsPage({ doc: document, api: { sendMessage: sendRuntimeMessage, getAssertion } });
clientsPage.catch((err) => { console.warn("tabwarden: clients section failed", err); reportError(err); });

const agentTabs = runAgentTabsView({ doc: document, api: { sendMessage: sendRuntimeMessage } });
agentTabs.catch((err) => { console.warn("tabwarden: agent tab list failed", err); reportError(err); });

const audit = runAuditView({ doc: document, api: { sendMessage: sendRuntimeMessage } });
audit.catch((err) => { console.warn("tabwarden: audit log section failed", err); reportError(err); });

const optionsPage = runOptionsPage({
  doc: document,
  api: { sendMessage: sendRuntimeMessage, createCredential, getAssertion },
  version: extensionVersion(),
  onPaired: () => {
    policyPage.then((p) => p.refresh()).catch(() => {});
    clientsPage.then((c) => c.refresh()).catch(() => {});
  },
});
optionsPage.catch((err) => { console.warn("tabwarden: options page failed", err); reportError(err); });

runLiveRefresh({
  doc: document, win: window, listen: onRuntimeMessage,
  refreshers: [
    () => optionsPage.then((s) => s.refresh()), () => policyPage.then((s) => s.refresh()),
    () => clientsPage.then((s) => s.refresh()), () => agentTabs.then((s) => s.refresh()),
    () => audit.then((s) => s.refresh()),
  ],
});
