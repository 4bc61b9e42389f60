// grace.js — the grace window after the person allowed an action: for policy.clickGraceSeconds,
// further calls of any action the catalogue declares graceable (worker/catalogue.js
// GRACE_ACTIONS: Asks.GRACE) on that tab AND that origin are not asked again. Pure: no chrome;
// the clock is passed in. It must never record or cover an action outside GRACE_ACTIONS (eval,
// upload, fetch, a dialog's answer, a tab closed are asked on every call; the new-site and
// provenance questions never come here), must end a tab's grace as soon as that tab is seen on
// another origin (an action there, or a navigation), and must forget a tab when it is released
// (closed, or its session ended).

import { originOf } from "../shared/origin.js";
import { GRACE_ACTIONS } from "./catalogue.js";

/** Longest grace accepted (trust/policy.py clickGraceSeconds: 0..600). */
const MAX_SECONDS = 600;

/** @param {unknown} tool */
export const graceable = (tool) => typeof tool === "string" && GRACE_ACTIONS.includes(tool);

/**
 * @typedef {object} Grace
 * @property {(tabId: number, origin: string, tool: string, now: number, seconds: unknown) => boolean} allow
 *   record that the person allowed `tool` on `tabId` at `origin` at `now` (ms): a window of
 *   `seconds`; false (nothing recorded) for a tool outside GRACE_ACTIONS, no origin, or a
 *   non-positive / unreadable duration
 * @property {(tabId: number, origin: string, tool: string, now: number) => boolean} covered
 *   is `tool` on `tabId` at `origin` inside a window; a window of another origin ends here
 * @property {(tabId: number, url: unknown) => void} navigated
 *   the tab's top document is now at `url`: another origin (or none) ends its window
 * @property {(tabId: number) => void} release
 * @property {() => number} size tabs with a recorded grace
 */

/** @returns {Grace} */
export function createGrace() {
  /** @type {Map<number, {origin: string, until: number}>} one window per tab */
  const byTab = new Map();
  /** @param {number} tabId @param {string | null} origin */
  const leave = (tabId, origin) => {
    if (byTab.get(tabId)?.origin !== origin) byTab.delete(tabId);
  };
  return {
    allow(tabId, origin, tool, now, seconds) {
      if (!graceable(tool) || !Number.isInteger(tabId) || !Number.isFinite(now)) return false;
      if (typeof origin !== "string" || origin === "" || origin === "null") return false;
      if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) return false;
      byTab.set(tabId, { origin, until: now + Math.min(seconds, MAX_SECONDS) * 1000 });
      return true;
    },
    covered(tabId, origin, tool, now) {
      if (!graceable(tool) || typeof origin !== "string" || origin === "") return false;
      leave(tabId, origin);
      const until = byTab.get(tabId)?.until;
      return until !== undefined && Number.isFinite(now) && now < until;
    },
    navigated(tabId, url) {
      leave(tabId, originOf(url));
    },
    release(tabId) {
      byTab.delete(tabId);
    },
    size: () => byTab.size,
  };
}
