// chrome-api.js — the one thin wrapper around the chrome.* APIs the extension uses (besides the
// listener registration in background.js). Adapts a native Port to session.js's PortLike and
// exposes tabs, windows, permissions, scripting and runtime messaging as plain promises; the
// confirm page (confirm.js) imports it too. It must never hold logic or state, never let
// chrome.runtime.lastError go unread (onDisconnect reads it and hands its message on), never
// touch chrome at import time, and never call APIs beyond the permissions manifest.test.mjs
// justifies ("storage": the pinned host record and the epoch ratchet in chrome.storage.local only).

/* global chrome */

import { DEFAULT_JPEG_QUALITY, captureClip } from "./screenshot.js";

/**
 * Open the native messaging port to `hostName` (throws if Chrome refuses synchronously).
 * @param {string} hostName
 * @returns {import("../worker/session.js").PortLike}
 */
export function connectNative(hostName) {
  const port = chrome.runtime.connectNative(hostName);
  return {
    postMessage: (msg) => port.postMessage(msg),
    disconnect: () => port.disconnect(),
    onMessage: {
      addListener: (fn) => port.onMessage.addListener((msg) => fn(msg)),
    },
    onDisconnect: {
      addListener: (fn) =>
        port.onDisconnect.addListener(() => {
          // Reading lastError marks it checked, so Chrome logs no "Unchecked runtime.lastError".
          const err = chrome.runtime.lastError;
          fn(err && typeof err.message === "string" ? err.message : null);
        }),
    },
  };
}

/**
 * Every tab in every window.
 * @returns {Promise<unknown[]>}
 */
export function queryAllTabs() {
  return chrome.tabs.query({});
}

/**
 * This extension's version from manifest.json.
 * @returns {string}
 */
export function extensionVersion() {
  return chrome.runtime.getManifest().version;
}

/** @param {number} tabId */
export function getTab(tabId) {
  return chrome.tabs.get(tabId);
}

/** @param {{windowId: number, url: string, active: boolean}} props */
export function createTab(props) {
  return chrome.tabs.create(props);
}

/**
 * @param {number} tabId
 * @param {{url?: string, active?: boolean, muted?: boolean}} props
 */
export function updateTab(tabId, props) {
  return chrome.tabs.update(tabId, props);
}

/** @param {number} tabId */
export function removeTab(tabId) {
  return chrome.tabs.remove(tabId);
}

/** @param {chrome.windows.CreateData} opts */
export function createWindow(opts) {
  return chrome.windows.create(opts);
}

/** @param {number} windowId */
export function removeWindow(windowId) {
  return chrome.windows.remove(windowId);
}

/**
 * Whether the optional host permission `pattern` is granted.
 * @param {string} pattern
 * @returns {Promise<boolean>}
 */
export function permissionsContains(pattern) {
  return chrome.permissions.contains({ origins: [pattern] });
}

/**
 * Ask Chrome for the optional host permission `pattern`; must run inside a user gesture.
 * @param {string} pattern
 * @returns {Promise<boolean>}
 */
export function requestPermission(pattern) {
  return chrome.permissions.request({ origins: [pattern] });
}

/**
 * Run a self-contained `func` in the tab's top frame (isolated world).
 * @param {number} tabId
 * @param {() => unknown} func
 */
export function executeScript(tabId, func) {
  return chrome.scripting.executeScript({ target: { tabId }, func });
}

/**
 * Send a message to this extension's service worker (from an extension page).
 * @param {object} msg
 * @returns {Promise<any>}
 */
export function sendRuntimeMessage(msg) {
  return chrome.runtime.sendMessage(msg);
}

/**
 * Listen to this extension's runtime messages from an extension page (shared/live-refresh.js: the
 * worker's "something changed"). The listener never answers.
 * @param {(msg: unknown) => void} fn
 */
export function onRuntimeMessage(fn) {
  chrome.runtime.onMessage.addListener((msg) => {
    fn(msg);
  });
}

/**
 * Open (or focus) this extension's options page (from the popup).
 * @returns {Promise<void>}
 */
export function openOptionsPage() {
  return chrome.runtime.openOptionsPage();
}

/** This extension's id. */
export function extensionId() {
  return chrome.runtime.id;
}

/** @param {string} path */
export function extensionUrl(path) {
  return chrome.runtime.getURL(path);
}

// --- navigation, focus, capture, cookies and scripting with arguments (handlers/nav.js,
// handlers/read.js). Screenshots go through the debugger (captureVisibleTab would need
// "<all_urls>", which grants every site at install); cookies.getAll needs "cookies" and the
// origin's host permission (tests/extension/manifest.test.mjs says why each permission exists).

/** @param {number} tabId */
export function tabGoBack(tabId) {
  return chrome.tabs.goBack(tabId);
}

/** @param {number} tabId */
export function tabGoForward(tabId) {
  return chrome.tabs.goForward(tabId);
}

/** @param {number} tabId @param {{bypassCache?: boolean}} [props] */
export function tabReload(tabId, props = {}) {
  return chrome.tabs.reload(tabId, props);
}

/**
 * @param {number} windowId
 * @param {{focused?: boolean}} props
 */
export function updateWindowProps(windowId, props) {
  return chrome.windows.update(windowId, props);
}

/**
 * Make the window this page runs in `grow` pixels taller (the confirm window, when Chrome's
 * debugging bar took the room its buttons were sized for).
 * @param {number} grow
 */
export async function growCurrentWindow(grow) {
  const win = await chrome.windows.getCurrent();
  if (win.id === undefined || win.height === undefined) return;
  await chrome.windows.update(win.id, { height: win.height + grow });
}

/**
 * A PNG or JPEG of the tab's page, base64 without a data: prefix: the viewport, with `fullPage`
 * the whole page, or `region`; scaled down to `maxWidth` pixels (shared/screenshot.js computes the
 * clip). Uses the tab's debugger attachment, or attaches one (Chrome shows its banner) for this
 * one capture and detaches it.
 * @param {number} tabId
 * @param {import("./screenshot.js").CaptureOptions & {format?: "png" | "jpeg", quality?: number}} opts
 * @returns {Promise<{data: string}>}
 */
export async function capturePage(tabId, { fullPage, region, element, maxWidth, format = "png", quality }) {
  const target = { tabId };
  // An owned tab usually has worker/debugger.js's attachment already: use it and leave it.
  let own = true;
  try {
    await chrome.debugger.attach(target, "1.3");
  } catch (err) {
    if (!/already attached/i.test(String(/** @type {any} */ (err)?.message))) throw err;
    own = false;
  }
  try {
    /** @type {Record<string, unknown>} */
    const params = format === "jpeg" ? { format, quality: quality ?? DEFAULT_JPEG_QUALITY } : { format };
    if (fullPage || region !== undefined || element !== undefined || maxWidth !== undefined) {
      const metrics = await chrome.debugger.sendCommand(target, "Page.getLayoutMetrics");
      const { clip, beyondViewport } = captureClip(metrics, { fullPage, region, element, maxWidth });
      Object.assign(params, { clip, captureBeyondViewport: beyondViewport });
    }
    const shot = /** @type {any} */ (await chrome.debugger.sendCommand(target, "Page.captureScreenshot", params));
    return { data: shot.data };
  } finally {
    if (own) await chrome.debugger.detach(target).catch(() => {});
  }
}

/**
 * chrome.downloads' records of the downloads matching `query` (read only: page_wait_download
 * learns where Chrome saved a finished download and why a failed one stopped).
 * @param {chrome.downloads.DownloadQuery} query
 */
export function searchDownloads(query) {
  return chrome.downloads.search(query);
}

// --- the debugger on owned tabs (worker/debugger.js; background.js registers onEvent/onDetach).

/**
 * @param {number} tabId
 * @param {string} version
 * @returns {Promise<void>}
 */
export function debuggerAttach(tabId, version) {
  return chrome.debugger.attach({ tabId }, version);
}

/**
 * @param {number} tabId
 * @returns {Promise<void>}
 */
export function debuggerDetach(tabId) {
  return chrome.debugger.detach({ tabId });
}

/**
 * One CDP command on the tab's attachment, or (`sessionId`) on one of its flat child sessions.
 * @param {number} tabId
 * @param {string} method
 * @param {Record<string, unknown>} [params]
 * @param {string} [sessionId]
 * @returns {Promise<unknown>}
 */
export function debuggerSend(tabId, method, params, sessionId) {
  return chrome.debugger.sendCommand(sessionId === undefined ? { tabId } : { tabId, sessionId }, method, params);
}

/**
 * Every cookie Chrome would send to `url`.
 * @param {string} url
 * @returns {Promise<any[]>}
 */
export function cookiesForUrl(url) {
  return chrome.cookies.getAll({ url });
}

/**
 * Run a self-contained `func(...args)` in the tab's top frame; `world` "ISOLATED" (default) or
 * "MAIN" (the page's own world: page_eval only).
 * @param {number} tabId
 * @param {(...a: any[]) => unknown} func
 * @param {unknown[]} args JSON-serialisable
 * @param {"ISOLATED" | "MAIN"} [world]
 * @param {number} [frameId] one frame of the tab (default 0, the top frame)
 */
export function executeScriptArgs(tabId, func, args, world = "ISOLATED", frameId = 0) {
  return chrome.scripting.executeScript({ target: frameTarget(tabId, frameId), func, args, world });
}

/**
 * The injection target: the tab's top frame, or one frame of it (a frameId from getAllFrames).
 * @param {number} tabId
 * @param {number} frameId
 */
const frameTarget = (tabId, frameId) => (frameId === 0 ? { tabId } : { tabId, frameIds: [frameId] });

/**
 * Run a self-contained `func()` in each of the listed frames of the tab (isolated world); one
 * result per frame that ran it, each with its frameId.
 * @param {number} tabId
 * @param {number[]} frameIds
 * @param {() => unknown} func
 * @returns {Promise<Array<{frameId: number, result?: unknown}>>}
 */
export function executeInFrames(tabId, frameIds, func) {
  return chrome.scripting.executeScript({ target: { tabId, frameIds }, func });
}

/**
 * Run a self-contained `func()` in every frame of the tab this extension may read (isolated
 * world), at once, not waiting for a loading document; one result per frame that ran it.
 * @param {number} tabId
 * @param {() => unknown} func
 * @returns {Promise<Array<{frameId: number, result?: unknown}>>}
 */
export function executeInAllFrames(tabId, func) {
  return chrome.scripting.executeScript({ target: { tabId, allFrames: true }, func, injectImmediately: true });
}

/**
 * Every frame of the tab (chrome.webNavigation.getAllFrames): frameId, parentFrameId, url,
 * documentId; null when the tab is gone.
 * @param {number} tabId
 * @returns {Promise<Array<{frameId: number, parentFrameId: number, url: string, documentId?: string}> | null>}
 */
export function getAllFrames(tabId) {
  return chrome.webNavigation.getAllFrames({ tabId });
}

/**
 * Run extension files (classic scripts, paths from the extension root, in order) in the tab's
 * top frame, isolated world: the element tools' page code (worker/elements.js PAGE_FILES).
 * @param {number} tabId
 * @param {readonly string[]} files
 * @param {number} [frameId] one frame of the tab (default 0, the top frame)
 */
export function executeFiles(tabId, files, frameId = 0) {
  return chrome.scripting.executeScript({ target: frameTarget(tabId, frameId), files: [...files], world: "ISOLATED" });
}

// --- the pinned host record (worker/pinning.js) and the epoch ratchet (worker/epoch-ratchet.js), in
// chrome.storage.local: extension-only, pages cannot read it. background.js registers chrome.storage.onChanged itself.

/**
 * @param {string} key
 * @returns {Promise<unknown>} the stored value, or undefined
 */
export async function storageGet(key) {
  const items = await chrome.storage.local.get(key);
  return items ? items[key] : undefined;
}

/**
 * @param {string} key
 * @param {unknown} value
 * @returns {Promise<void>}
 */
export function storageSet(key, value) {
  return chrome.storage.local.set({ [key]: value });
}

// --- the popup's recent calls (worker/recent-calls.js), in chrome.storage.session: in memory,
// extension contexts only, gone when the browser closes.

/**
 * @param {string} key
 * @returns {Promise<unknown>} the stored value, or undefined
 */
export async function sessionStorageGet(key) {
  const items = await chrome.storage.session.get(key);
  return items ? items[key] : undefined;
}

/**
 * @param {string} key
 * @param {unknown} value
 * @returns {Promise<void>}
 */
export function sessionStorageSet(key, value) {
  return chrome.storage.session.set({ [key]: value });
}

/**
 * One alarm by name ("alarms": the worker's wake alarm only, worker/wake.js).
 * @param {string} name
 * @returns {Promise<import("../worker/wake.js").AlarmLike | undefined>}
 */
export function getAlarm(name) {
  return chrome.alarms.get(name);
}

/**
 * Create (or replace, same name) an alarm.
 * @param {string} name
 * @param {{periodInMinutes: number, delayInMinutes: number}} info
 * @returns {Promise<void>}
 */
export function createAlarm(name, info) {
  return chrome.alarms.create(name, info);
}

/**
 * How this extension was installed ("development" when loaded unpacked); null if unknown.
 * management.getSelf needs no permission.
 * @returns {Promise<string | null>}
 */
export async function installType() {
  const self = await chrome.management.getSelf();
  return typeof self?.installType === "string" ? self.installType : null;
}

// --- the command journal (worker/journal.js), in chrome.storage.session as well.

/** @returns {Promise<Record<string, unknown>>} every item of chrome.storage.session */
export async function sessionStorageAll() {
  return (await chrome.storage.session.get(null)) ?? {};
}

/**
 * @param {Record<string, unknown>} items
 * @returns {Promise<void>}
 */
export function sessionStorageSetItems(items) {
  return chrome.storage.session.set(items);
}

/**
 * @param {string[]} keys
 * @returns {Promise<void>}
 */
export function sessionStorageRemove(keys) {
  return chrome.storage.session.remove(keys);
}

// --- stopping an owned tab's top frame before it leaves (worker/nav-block.js): declarativeNetRequest
// session rules (scoped to owned tabs) and the top frame's last error (webNavigation.getFrame).

/** @returns {Promise<Array<{id: number}>>} this extension's session rules */
export function getSessionRules() {
  return chrome.declarativeNetRequest.getSessionRules();
}

/**
 * @param {{removeRuleIds: number[], addRules: unknown[]}} change
 * @returns {Promise<void>}
 */
export function updateSessionRules(change) {
  return chrome.declarativeNetRequest.updateSessionRules(/** @type {any} */ (change));
}

/**
 * The tab's top frame (errorOccurred: its last navigation failed, e.g. blocked by a rule); null
 * when the tab is gone.
 * @param {number} tabId
 * @returns {Promise<{errorOccurred?: boolean, url?: string} | null>}
 */
export async function getTopFrame(tabId) {
  return (await chrome.webNavigation.getFrame({ tabId, frameId: 0 })) ?? null;
}
