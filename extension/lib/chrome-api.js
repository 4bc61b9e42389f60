// chrome-api.js — the one thin wrapper around the chrome.* APIs the extension uses (besides the
// listener registration in background.js). Adapts a native Port to session.js's PortLike and
// exposes tab queries as plain promises. It must never hold logic or state, never let
// chrome.runtime.lastError go unread (onDisconnect reads it and hands its message on), and
// never call APIs beyond the "nativeMessaging" and "tabs" permissions.

/* global chrome */

/**
 * Open the native messaging port to `hostName` (throws if Chrome refuses synchronously).
 * @param {string} hostName
 * @returns {import("./session.js").PortLike}
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
