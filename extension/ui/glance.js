// glance.js — the options page's "at a glance" tiles (#glance-<name>): one word or two for each
// of connection, paired browser, kill switch, sites and clients, with a colour cue (data-state:
// good, warn, bad or unknown) and a short note. Each section's module fills the tiles it knows
// (options-page.js: connection and browser; policy-page.js: kill switch and sites;
// clients-page.js: clients). textContent only; a page without the tiles is left alone.

/** @typedef {"good" | "warn" | "bad" | "unknown"} GlanceState */

/**
 * @param {{getElementById: (id: string) => any}} doc
 * @param {string} name connection, browser, kill, sites or clients
 * @param {GlanceState} state
 * @param {string} value the tile's word or two
 * @param {string} [note] one short line under it
 */
export function setGlance(doc, name, state, value, note = "") {
  const tile = doc.getElementById(`glance-${name}`);
  if (!tile) return;
  tile.setAttribute?.("data-state", state);
  const v = doc.getElementById(`glance-${name}-value`);
  if (v) v.textContent = value;
  const n = doc.getElementById(`glance-${name}-note`);
  if (n) n.textContent = note;
}
