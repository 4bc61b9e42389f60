// background.js — the MV3 service worker entry. Thin wiring only: builds the dispatcher, backoff,
// session, ownership, confirm broker, origin gate, host-key pin gate and trust-epoch ratchet from
// the lib/ modules, reads the pinned host record (and follows its changes), connects at top level
// (so every worker start connects) and registers the runtime, tab and window listeners
// synchronously. It must never hold protocol logic (that lives in lib/ and handlers/) and never
// let an error escape a listener uncaught.

/* global chrome */

import { createAgentTabsRelay } from "./worker/agent-tabs-relay.js";
import { createCapture } from "./worker/capture.js";
import { createBackoff, equalJitter } from "./worker/backoff.js";
import * as api from "./shared/chrome-api.js";
import { createConfirmBroker } from "./worker/confirm-broker.js";
import { SOFT_ATTACH_MS, createDebuggerManager, createDialogGuard } from "./worker/debugger.js";
import { createDialogs } from "./worker/dialogs.js";
import { createErrorReporter, pageErrorMessages } from "./worker/error-report.js";
import { createDownloadLog } from "./worker/downloads.js";
import { confirmWindowMessages, createConfirmer } from "./shared/confirm-window.js";
import { createDispatcher } from "./worker/dispatch.js";
import { createEpochRatchet } from "./worker/epoch-ratchet.js";
import { FORM_URLS_KEY, createFormUrls } from "./worker/form-urls.js";
import { SECRET_FIELDS_KEY, createSecretFields, learningAround, passwordFieldNames } from "./worker/secret-fields.js";
import { CODE } from "./shared/error-codes.js";
import { createGrace } from "./worker/grace.js";
import { createJournal } from "./worker/journal.js";
import { backOneEntry, createNavBlocker } from "./worker/nav-block.js";
import { createTabQueue, serialiseByTab } from "./worker/tab-queue.js";
import { createOriginGate } from "./worker/origin-gate.js";
import { createOwnership } from "./worker/ownership.js";
import { createMessageRouter } from "./worker/message-router.js";
import { createPairing } from "./worker/pairing.js";
import { NO_POLICY, parsePolicy } from "./worker/policy.js";
import { createPolicyRelay } from "./worker/policy-relay.js";
import { createPopups } from "./worker/popups.js";
import { createPopupRelay } from "./worker/popup-relay.js";
import { createPresenceConfirm } from "./shared/presence-confirm.js";
import { createProvenanceGate } from "./worker/provenance-gate.js";
import { createRecentCalls } from "./worker/recent-calls.js";
import { PIN_STORAGE_KEY, createPinGate } from "./worker/pinning.js";
import { createSession } from "./worker/session.js";
import { createSessionClients } from "./worker/session-clients.js";
import { AGENT_TABS_KEY, createTabLifecycle } from "./worker/tab-lifecycle.js";
import { createLoadWatcher } from "./worker/tab-load.js";
import { CHANGING, createChangeNotifier } from "./shared/live-refresh.js";
import { NATIVE_HOST_NAME, isPlainObject } from "./shared/wire.js";
import { browserLabels, hostProblem } from "./shared/host-problem.js";
import { ensureWakeAlarm, expectedBackMs, isWakeAlarm, wakePeriodMinutes } from "./worker/wake.js";
import { createRoutes } from "./handlers/actions.js";
import { isMac } from "./handlers/input.js";
import { step } from "./handlers/support.js";
import { TERMINAL_ACTIONS, terminalTabHandlers } from "./handlers/tabs.js";
import { terminalTapHandlers } from "./handlers/terminal-tap.js";

const log = console;

/** @type {import("./worker/pending.js").Timers} */
const timers = {
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(/** @type {number} */ (handle)),
};

// Tab ownership survives a worker restart in chrome.storage.session (worker/ownership.js); it is
// reloaded, reconciled with the tabs that still exist, before any request is served.
const ownership = createOwnership({
  save: (snapshot) => {
    api.sessionStorageSet(AGENT_TABS_KEY, snapshot)
      .catch((err) => log.warn("tabwarden: could not persist tab ownership", err));
    // The live sessions' tabs are the ones whose top frame may not leave for an unapproved origin.
    navBlock.tabs(snapshot.tabs.filter((t) => t.orphanedAt === null).map((t) => t.tabId));
  },
});
const ownershipLoaded = Promise.all([api.sessionStorageGet(AGENT_TABS_KEY), api.queryAllTabs()]).then(
  ([stored, open]) => {
    const ids = (Array.isArray(open) ? open : []).map((t) => /** @type {any} */ (t)?.id).filter(Number.isInteger);
    ownership.load(stored, ids);
    // The tabs open now are the person's or a session's: the opened-tab rules never block them.
    navBlock.everyTab(ids);
  },
  (err) => log.warn("tabwarden: could not restore tab ownership; starting empty", err),
);
const grace = createGrace(); // confirmed-click grace per tab; forgotten with the tab
// Orphans, the agent-tab cap, person-viewed marks, discard protection (worker/tab-lifecycle.js).
const lifecycle = createTabLifecycle({
  ownership,
  browser: { queryAllTabs: api.queryAllTabs, removeTab: api.removeTab, updateTab: api.updateTab },
  timers,
  onReleased: (tabId) => {
    grace.release(tabId);
    cdp.release(tabId);
    downloads.removed(tabId);
  },
  log,
});
const loads = createLoadWatcher(timers);
// An owned tab's top frame cannot leave for an unapproved origin: declarativeNetRequest session
// rules on the live sessions' tabs stop the request before it is sent (worker/nav-block.js).
const navBlock = createNavBlocker({
  dnr: { getSessionRules: api.getSessionRules, updateSessionRules: api.updateSessionRules },
  browser: {
    goBack: (tabId, allowed) => backOneEntry({ send: api.debuggerSend, goBack: api.tabGoBack }, tabId, allowed),
    updateTab: api.updateTab, getTab: api.getTab, getFrame: api.getTopFrame,
  },
  watchLoad: (tabId, ms) => loads.watch(tabId, ms),
  timers,
  log,
});
const broker = createConfirmBroker({ ...timers, newId: () => crypto.randomUUID() });
const confirm = createConfirmer({
  broker,
  windows: { createWindow: api.createWindow, removeWindow: api.removeWindow },
  log,
});
// Presence-confirm mode (policy presenceConfirm): the confirm window's tap for page_eval/page_upload,
// and for the terminal's second factor (handlers/terminal-tap.js).
const presenceConfirm = createPresenceConfirm({ broker, hostCall: (action, args) => session.hostCall(action, args) });
const gateOrigin = createOriginGate({
  confirm,
  permissionsContains: api.permissionsContains,
  requestGrant: (origin) => session.requestGrant(origin),
  // The host decides, at every prompt, what approving a site takes (a click or a tap).
  decide: (origin) => session.hostCall("origin_decide", { origin }),
  log,
});
// Addresses and typed values that carry another site's page content (worker/provenance-gate.js).
// An enrolled browser confirms them with a tap (the host's policy_get says, each time it asks).
const provenance = createProvenanceGate({
  confirm,
  enrolled: async () => {
    const r = await session.hostCall("policy_get", {});
    return r !== null && typeof r === "object" ? r.enrolled : undefined;
  },
});
/** The origin gate; an origin it approves is allowed in the rules before any tab goes there. */
const ensureOrigin = /** @type {typeof gateOrigin} */ (async (url, ctx, tool) => {
  const origin = await gateOrigin(url, ctx, tool);
  await navBlock.allow(origin);
  return origin;
});

// Chrome's debugger on owned tabs only (worker/debugger.js, docs/adr/0005): dialogs, trusted input.
const dialogs = createDialogs();
// The opt-in console and network tails (policy consoleCapture / networkCapture, worker/capture.js).
const capture = createCapture({
  // Outside any call: each command bounded on its own, so a page that does not answer holds nothing up.
  send: (tabId, method, params) =>
    step({ session: "", policy: NO_POLICY }, `capture: ${method}`, cdp.command(tabId, method, params), SOFT_ATTACH_MS),
  hold: (tabId, domain, on) => cdp.hold(tabId, domain, on),
  attached: () => cdp.attached(),
  now: () => Date.now(),
  log,
});
const cdp = createDebuggerManager({
  api: { attach: api.debuggerAttach, detach: api.debuggerDetach, send: api.debuggerSend },
  owned: (tabId) => ownership.owner(tabId) !== null,
  dialogs,
  step,
  log,
  sink: capture,
});
// The downloads owned tabs start, as their debugger reports them (page_wait_download).
const downloads = createDownloadLog({ timers });
const dialogGuard = createDialogGuard({ manager: cdp, dialogs, ownerOf: (tabId) => ownership.owner(tabId) });
// Tabs an owned tab opens join its session (worker/popups.js), debugger attached as for tab_open.
const popups = createPopups({
  ownership,
  lifecycle,
  attach: (session, tabId) => cdp.ensureSoft({ session, policy: NO_POLICY }, tabId),
  mute: (tabId) => api.updateTab(tabId, { muted: true }),
  log,
});

const deps = {
  // The agent's own tab operations: activations they cause are not the person looking.
  browser: lifecycle.agentBrowser({
    queryAllTabs: api.queryAllTabs,
    getTab: api.getTab,
    createTab: api.createTab,
    createWindow: api.createWindow,
    updateTab: api.updateTab,
    removeTab: api.removeTab,
    executeScript: api.executeScript,
  }),
  ownership,
  loads,
  ensureOrigin,
  confirm,
  provenance,
  guardTab: (/** @type {string} */ action, /** @type {number} */ tabId, /** @type {any} */ ctx, /** @type {() => Promise<any>} */ fn) =>
    dialogGuard.run(action, tabId, ctx, fn),
  lifecycle,
};

// Every family gets every chrome-api.js wrapper it uses (nav, read and interact use more).
const routes = provenance.gated(createRoutes({
  ...deps, browser: lifecycle.agentBrowser({ ...api, ...deps.browser }), grace, cdp, dialogs, mac: isMac(globalThis.navigator), popups, capture, downloads, navBlock,
}));
/**
 * Take the policy into effect in the worker's own state: capture turned off drops its buffers,
 * and the navigation rules follow the approved origins (a narrowing too). Every request states
 * the policy; the host's change notice makes the worker read it itself (onTrustChanged).
 * @param {import("./worker/policy.js").Policy} policy read once (worker/policy.js)
 */
const applyPolicy = async (policy) => {
  await capture.observe(policy);
  await navBlock.policy(policy.approvedOrigins);
};
/** No request runs before the persisted ownership is back. @type {(e: Iterable<[string, import("./worker/dispatch.js").Handler]>) => Array<[string, import("./worker/dispatch.js").Handler]>} */
const afterOwnershipLoad = (entries) => [...entries].map(([action, handler]) => [
  action, async (args, ctx) => {
    await ownershipLoaded;
    await applyPolicy(ctx.policy); // before anything runs
    return handler(args, ctx);
  },
]);
// URLs an owned tab reached by a GET form carry what was typed: every reply masks their query
// values (worker/form-urls.js, worker/mask.js). Kept in chrome.storage.session across worker restarts.
const formUrls = createFormUrls({
  save: (snapshot) => {
    api.sessionStorageSet(FORM_URLS_KEY, snapshot).catch((err) => log.warn("tabwarden: could not persist the form URLs", err));
  },
  log,
});
// Restored before any reply leaves; if it fails, every URL's query values are masked (fail closed).
formUrls.restore(api.sessionStorageGet(FORM_URLS_KEY));
// The names and ids password fields had on owned tabs' pages: every reply masks their values as
// it masks secret names (worker/secret-fields.js). Learned before and after each call on an owned
// tab, in every frame the extension may read; kept in chrome.storage.session.
const secretFields = createSecretFields({
  save: (snapshot) => {
    api.sessionStorageSet(SECRET_FIELDS_KEY, snapshot).catch((err) => log.warn("tabwarden: could not persist the password field names", err));
  },
  log,
});
secretFields.restore(api.sessionStorageGet(SECRET_FIELDS_KEY));
/** @param {number} tabId */
const learnFieldNames = async (tabId) => {
  // A tab a dialog blocks runs no script until it is answered: nothing to read then.
  if (ownership.owner(tabId) === null || dialogs.current(tabId) !== null) return;
  // Frames the extension may not read are skipped; should Chrome refuse the whole call for one,
  // the top frame is read alone.
  const frames = await api.executeInAllFrames(tabId, passwordFieldNames)
    .catch(() => api.executeInFrames(tabId, [0], passwordFieldNames));
  for (const frame of frames) secretFields.learn(frame?.result);
};
// Each command id at most once per session, across worker restarts (worker/journal.js).
const journal = createJournal({
  storage: { getAll: api.sessionStorageAll, set: api.sessionStorageSetItems, remove: api.sessionStorageRemove },
  log,
});
// One call at a time per tab (tab-queue.js); different tabs run concurrently; a tab blocked by a
// JavaScript dialog answers dialog_open at once (worker/debugger.js's guard).
const dispatcher = createDispatcher(
  afterOwnershipLoad([
    ...serialiseByTab(learningAround(routes, { fields: secretFields, learnTab: learnFieldNames, timers }), createTabQueue(), dialogGuard),
    ...terminalTabHandlers({ lifecycle }),
    ...terminalTapHandlers({ confirm, presenceConfirm }),
  ]),
  {
    log,
    journal,
    maskContext: async () => {
      const [urls, names] = await Promise.all([formUrls.maskContext(), secretFields.maskContext()]);
      return { ...urls, ...names, everyQuery: urls.everyQuery === true || names.everyQuery === true };
    },
  },
);

// Host-key pinning (worker/pinning.js): with a pinned key, every welcome is followed by host_proof,
// and requests are served only once the host proved it holds the key.
const randomBytes = (/** @type {number} */ n) => crypto.getRandomValues(new Uint8Array(n));
/** The epoch the current connection's welcome stated; witnessed once the host proved its key. */
/** @type {unknown} */
let welcomeEpoch;
const pinGate = createPinGate({
  hostCall: (action, args) => session.hostCall(action, args),
  subtle: crypto.subtle,
  randomBytes,
  timers,
  // Remember the failure across worker restarts until the person pairs again.
  onCompromised: (record) => {
    api.storageSet(PIN_STORAGE_KEY, { ...record, compromisedAt: new Date().toISOString() })
      .catch((err) => log.warn("tabwarden: could not record the compromised host", err));
  },
  // A host that proved the pinned key states the record it serves: witness it (worker/epoch-ratchet.js).
  onChange: (state) => {
    if (state === "trusted" && welcomeEpoch !== undefined) ratchet.observe(welcomeEpoch);
  },
  log,
});
// The trust record's epoch, per pinned host key (worker/epoch-ratchet.js): never lowered; a host
// that states an older record than this browser has seen has every request refused.
const ratchet = createEpochRatchet({
  storageGet: api.storageGet,
  storageSet: api.storageSet,
  fingerprint: () => pinGate.snapshot().pinned?.fingerprint ?? null,
  now: () => Date.now(),
  log,
});
/** Every request: the host proved the pinned key, then its epoch is not older than one seen
 * (the terminal's tap request aside: handlers/terminal-tap.js). */
const requestGate = {
  /** @param {Record<string, unknown>} request */
  async admit(request) {
    const verdict = await pinGate.admit();
    if (verdict !== null) return verdict;
    // The terminal's tap grants nothing (the terminal verifies it against the signed record), and
    // it is how a person with an enrolled key accepts a rolled-back record (`tabwarden unkill`).
    return request.action === "terminal_tap" ? null : ratchet.admit(request.epoch);
  },
};
// Which browser this is, for the install command a missing host needs (its brands; ambiguous
// brands give every label that fits), and why the host cannot be reached, if that is the reason.
const labelsHere = browserLabels(/** @type {any} */ (globalThis.navigator)?.userAgentData?.brands);
const currentHostProblem = () => {
  const s = session.snapshot();
  return s.phase === "ready" ? null : hostProblem({ reason: s.lastDisconnectReason, welcomed: s.lastDisconnectWelcomed }, labelsHere);
};
const pairing = createPairing({
  hostCall: (action, args) => session.hostCall(action, args),
  gate: pinGate,
  storageSet: api.storageSet,
  subtle: crypto.subtle,
  randomBytes,
  nowMs: () => Date.now(),
  rolledBack: () => ratchet.rolledBack(),
  hostProblem: currentHostProblem,
});
// The options page's Policy section (worker/policy-relay.js): the host verifies taps and signs changes.
const policyRelay = createPolicyRelay({ hostCall: (action, args) => session.hostCall(action, args) });
// The popup's last calls (action and outcome only), in chrome.storage.session.
const recentCalls = createRecentCalls({
  storageGet: api.sessionStorageGet, storageSet: api.sessionStorageSet, now: () => Date.now(), setTimer: timers.setTimer, log,
});
// Open extension pages re-read their lists after a change (shared/live-refresh.js).
const pages = createChangeNotifier({
  send: (msg) => api.sendRuntimeMessage(msg), setTimer: (fn, ms) => timers.setTimer(fn, ms),
});
// Which client each session is (the host's label), for the agent-tab rows.
const sessionClients = createSessionClients({
  storageGet: api.sessionStorageGet, storageSet: api.sessionStorageSet, now: () => Date.now(), setTimer: timers.setTimer, log,
});
const popupRelay = createPopupRelay({
  hostCall: (action, args) => session.hostCall(action, args),
  sessionSnapshot: () => session.snapshot(),
  gateSnapshot: () => pinGate.snapshot(),
  rolledBack: () => ratchet.rolledBack(),
  recent: () => recentCalls.list(),
  workerStartedAt: Date.now(),
  hostProblem: currentHostProblem,
});

// Cap below the ~30 s idle shutdown of MV3 workers: an open native port keeps the worker
// alive, but while waiting to reconnect only this timer does (and, once Chrome stopped the
// worker anyway, the wake alarm below).
const BACKOFF_MAX_MS = 20_000;

// The wake alarm (worker/wake.js, docs/platform-facts-wake.md): Chrome starts a stopped worker to
// deliver it, and every worker start connects. Its period depends on the install type.
const wakePeriod = api.installType().then(wakePeriodMinutes, () => wakePeriodMinutes(null));

const session = createSession({
  connect: () => api.connectNative(NATIVE_HOST_NAME),
  dispatcher,
  backoff: createBackoff({ initialMs: 250, maxMs: BACKOFF_MAX_MS, healthyMs: 10_000, jitter: equalJitter(Math.random) }),
  timers,
  now: () => performance.now(),
  wallNow: () => Date.now(),
  extensionVersion: api.extensionVersion(),
  onSessionEnd: (name, { closeTabs }) => {
    ownershipLoaded
      .then(() => lifecycle.sessionEnded(name, { closeTabs }))
      .then((ids) => {
        for (const tabId of ids) {
          grace.release(tabId);
          cdp.release(tabId); // a tab nobody drives keeps no debugger
          downloads.removed(tabId);
        }
      })
      .catch((err) => log.warn("tabwarden: ending a session failed", err))
      .finally(() => pages.changed());
  },
  // The record, kill latch or audit log changed (a terminal, another page). The worker reads the
  // policy itself first, so a narrowing takes effect now rather than at the next request: capture
  // turned off drops what it kept, and the navigation rules lose an origin no longer approved.
  // Then its pages re-read. (policy_get is a read: it writes no audit line, so this never loops.)
  // The notice states the record's epoch too: the ratchet witnesses it now (a kill typed while
  // no agent calls raises it), not at the next request — a host that has not proved the pinned
  // key on this connection yet has it witnessed once it does, as a welcome's.
  onTrustChanged: ({ epoch }) => {
    if (pinGate.snapshot().state === "trusted") ratchet.observe(epoch);
    else welcomeEpoch = epoch;
    session.hostCall("policy_get", {})
      .then((/** @type {any} */ r) => (isPlainObject(r) && isPlainObject(r.policy) ? applyPolicy(parsePolicy(r.policy)) : undefined))
      .catch(() => {}) // the next request states the policy anyway
      .finally(() => pages.changed());
  },
  gate: requestGate,
  // hello tells the host the highest epoch this browser has seen for the pinned key.
  helloFields: async () => {
    await Promise.all([pinnedRead, ratchet.loaded()]);
    // expectedBackMs: the host leaves it in its "last seen" record (tabwarden/bridge/away.py) so the MCP
    // server can say "expected back within N s" while this worker is away.
    const period = await wakePeriod;
    return { epochSeen: ratchet.seen(), expectedBackMs: expectedBackMs(period) };
  },
  onWelcome: ({ epoch }) => {
    welcomeEpoch = epoch;
    pinGate.onWelcome();
    sweepSessions();
    pages.changed();
  },
  onClosed: () => {
    welcomeEpoch = undefined;
    pinGate.onClosed();
    pages.changed();
  },
  onAnswered: (action, reply, who) => {
    // The terminal's own listing (`tabwarden tabs`) is the person's, not an agent's call.
    if (TERMINAL_ACTIONS.has(action)) return;
    Promise.all([recentCalls.record(action, reply, who?.client), who ? sessionClients.seen(who.session, who.client) : null])
      .finally(() => pages.changed());
  },
  log,
});

// The pinned record, read at every worker start; a failed read leaves the gate closed.
const pinnedRead = api.storageGet(PIN_STORAGE_KEY).then(
  (value) => pinGate.setPinned(value),
  (err) => log.warn("tabwarden: could not read the pinned host record; refusing requests", err),
);

/** Sessions whose MCP process died while no host watched (host SIGKILLed, worker away) end now:
 * once ownership is back and the host proved its pinned key, ask it which held ones are gone. */
function sweepSessions() {
  (async () => {
    await ownershipLoaded;
    if ((await pinGate.admit()) !== null) return;
    await lifecycle.sweep((action, args) => session.hostCall(action, args));
  })().catch((err) => log.warn("tabwarden: session sweep failed", err));
}

const agentTabsRelay = createAgentTabsRelay({ lifecycle, sessionClients, log });

/** Connect unless already connected or a reconnect is pending; never throws. */
function ensureConnected() {
  try {
    session.start();
  } catch (err) {
    log.warn("tabwarden: could not start the native session", err);
  }
}

/**
 * Wrap a listener so nothing escapes it.
 * @template {unknown[]} A
 * @param {string} what
 * @param {(...args: A) => void} fn
 * @returns {(...args: A) => void}
 */
const guarded = (what, fn) => (...args) => {
  try {
    fn(...args);
  } catch (err) {
    log.warn(`tabwarden: ${what} listener failed`, err);
    errors.report("error", `worker ${what}`, err);
  }
};

// The extension's own errors into the host's log (worker/error-report.js: masked, capped,
// rate-limited): what the worker's code threw and nothing caught. Listeners that threw are
// reported by `guarded`; a page's console output never comes here.
const errors = createErrorReporter({ hostCall: (action, args) => session.hostCall(action, args), now: () => performance.now() });
/** The worker's global scope (a service worker's; absent where no worker runs, e.g. under Node). */
const workerScope = /** @type {{addEventListener?: (type: string, fn: (event: any) => void) => void}} */ (globalThis);
workerScope.addEventListener?.("error", (event) => errors.report("error", "worker", event?.error ?? event?.message));
workerScope.addEventListener?.("unhandledrejection", (event) => errors.report("rejection", "worker", event?.reason));

/** Create the wake alarm unless it exists with the right period; never throws. */
function ensureWake() {
  wakePeriod
    .then((period) => ensureWakeAlarm({ getAlarm: api.getAlarm, createAlarm: api.createAlarm }, period))
    .catch((err) => log.warn("tabwarden: could not set the wake alarm", err));
}

chrome.runtime.onInstalled.addListener(guarded("runtime.onInstalled", () => {
  ensureWake();
  ensureConnected();
}));
chrome.runtime.onStartup.addListener(guarded("runtime.onStartup", () => {
  ensureWake();
  ensureConnected();
}));
// Chrome starts a stopped worker to deliver the alarm (the top-level ensureConnected() below then
// connects); a worker that stayed alive has its pending backoff reconnect brought forward.
chrome.alarms.onAlarm.addListener(guarded("alarms.onAlarm", (alarm) => {
  if (isWakeAlarm(alarm)) session.wake();
}));

// The extension pages' one door (worker/message-router.js): only this extension's confirm page
// may ask for details, answer or tap (about its own confirmation), only its options page may pair
// or reach the host's policy actions, only its popup may read status or kill, and both may list
// and close agent tabs. The sender's tier is checked there once, before any relay runs.
const messageRouter = createMessageRouter({
  extensionId: api.extensionId(),
  pageUrl: api.extensionUrl,
  handlers: [
    ...pairing.messages, ...policyRelay.messages, ...popupRelay.messages, ...agentTabsRelay.messages,
    ...presenceConfirm.messages, ...confirmWindowMessages(broker), ...pageErrorMessages(errors),
  ],
});
chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  try {
    const answer = /** @type {any} */ (messageRouter.route(msg, sender));
    if (answer === undefined) return false;
    if (typeof answer?.then === "function") {
      /** @type {Promise<unknown>} */ (answer).then(sendResponse, () => sendResponse({ ok: false, code: CODE.INTERNAL_ERROR }))
        .finally(() => { if (CHANGING.has(/** @type {any} */ (msg)?.type)) pages.changed(); });
      return true; // answered asynchronously
    }
    sendResponse(answer);
  } catch (err) {
    log.warn("tabwarden: runtime message listener failed", err);
  }
  return false;
});

chrome.storage.onChanged.addListener(guarded("storage.onChanged", (changes, area) => {
  if (area === "local" && changes && Object.hasOwn(changes, PIN_STORAGE_KEY)) pinGate.setPinned(changes[PIN_STORAGE_KEY].newValue);
}));
// A new tab: one a live session's tab opened is held by the opened-tab rules until it joins; any
// other is the person's and is excluded from them (worker/nav-block.js).
chrome.tabs.onCreated.addListener(guarded("tabs.onCreated", (tab) => {
  ownershipLoaded
    .then(() => navBlock.created(tab?.id, tab?.openerTabId))
    .catch((err) => log.warn("tabwarden: could not place a new tab in the navigation rules", err));
}));
chrome.tabs.onUpdated.addListener(guarded("tabs.onUpdated", (tabId, changeInfo, tab) => {
  if (typeof changeInfo?.url === "string") grace.navigated(tabId, changeInfo.url); // another origin ends the grace
  loads.updated(tabId, changeInfo, tab);
}));
chrome.tabs.onActivated.addListener(guarded("tabs.onActivated", (info) => lifecycle.activated(info.tabId)));
chrome.tabs.onRemoved.addListener(guarded("tabs.onRemoved", (tabId) => {
  ownership.release(tabId); // a reused tab id must never carry ownership over
  grace.release(tabId);
  loads.removed(tabId);
  cdp.removed(tabId);
  downloads.removed(tabId);
  popups.removed(tabId);
  navBlock.removed(tabId);
}));
// A top-frame request of an owned tab our rules stopped: recorded, and the tab brought back. A
// top-frame navigation that ended without a document (a download) ends the tab's load waits,
// unless another navigation starts (worker/tab-load.js).
chrome.webNavigation.onErrorOccurred.addListener(guarded("webNavigation.onErrorOccurred", (details) => {
  loads.failed(details);
  navBlock.failed(details);
}));
chrome.webNavigation.onBeforeNavigate.addListener(guarded("webNavigation.onBeforeNavigate", (details) => loads.started(details)));
// A tab opened by a frame of another tab (target=_blank, window.open): it joins the opener's
// session when a live session owns the opener (worker/popups.js), once ownership is back.
chrome.webNavigation.onCreatedNavigationTarget.addListener(guarded("webNavigation.onCreatedNavigationTarget", (details) => {
  ownershipLoaded
    .then(() => {
      navBlock.sourced(details.tabId, details.sourceTabId);
      return popups.created(details.sourceTabId, details.tabId, details.url);
    })
    .catch((err) => log.warn("tabwarden: a new tab could not join its opener's session", err));
}));
chrome.debugger.onEvent.addListener(guarded("debugger.onEvent", (source, method, params) => {
  if (source.tabId === undefined) return;
  cdp.onEvent(source.tabId, method, params, source.sessionId);
  if (ownership.owner(source.tabId) !== null) downloads.onEvent(source.tabId, method, params);
}));
// "canceled_by_user": the person closed Chrome's "is debugging this browser" bar.
chrome.debugger.onDetach.addListener(guarded("debugger.onDetach", (source, reason) => {
  if (source.tabId !== undefined) cdp.onDetach(source.tabId, reason);
}));
// A GET form submitted in an owned tab (any frame): its URL is learned before it loads (the
// debugger's word) and when it commits (webNavigation's), for worker/form-urls.js.
chrome.debugger.onEvent.addListener(guarded("debugger.onEvent (form URLs)", (source, method, params) => {
  if (source.tabId !== undefined && ownership.owner(source.tabId) !== null) formUrls.cdpEvent(method, params);
}));
chrome.webNavigation.onCommitted.addListener(guarded("webNavigation.onCommitted", (details) => {
  if (details.transitionType !== "form_submit") return;
  ownershipLoaded
    .then(() => { if (ownership.owner(details.tabId) !== null) formUrls.committed(details); })
    .catch((err) => log.warn("tabwarden: a form URL could not be learned", err));
}));
chrome.windows.onRemoved.addListener(guarded("windows.onRemoved", (windowId) => {
  broker.closed(windowId); // closing the confirm window denies
  ownership.forgetWindow(windowId);
}));

ensureWake();
ensureConnected();

/** For inspection from the service worker console: `session.snapshot()`, `pinGate.snapshot()`,
 * `ratchet.rolledBack()`, `cdp.attached()`, `navBlock.rules()`. */
export { session, pinGate, ratchet, cdp, ownership, navBlock };
