// page-text.js — the function chrome.scripting.executeScript runs in the page (isolated world)
// to read its visible text. Pure and self-contained: it is serialised and run in the page, so it
// must never reference anything outside its own body, never read form field values (innerText
// never includes <input> values, so password fields stay out), and never change the page.

/**
 * Runs in the page. Returns the body's rendered text and the document URL it came from, so the
 * caller can check the page did not navigate to another origin in the meantime (`origin`: the
 * document's own, for a frame that took its creator's: shared/origin.js `originOfRead`).
 * @returns {{text: string, href: string, origin: string}}
 */
export function readPageText() {
  const body = document.body;
  return { text: body ? String(body.innerText) : "", href: String(location.href), origin: String(globalThis.origin) };
}

/**
 * Runs in the page. Which document the tab shows now, without reading it: the continuing slices
 * of a page_text read are served from that read while this says it is the same document.
 * @returns {{href: string, origin: string}}
 */
export function probePage() {
  return { href: String(location.href), origin: String(globalThis.origin) };
}
