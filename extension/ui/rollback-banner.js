// rollback-banner.js — the "Trust record rolled back" banner the popup and the options page both
// show while the host serves a record older than this browser has seen (worker/epoch-ratchet.js):
// what happened and the two ways on. Pure: the document is passed in. It must never put worker-
// or host-supplied text into the DOM as HTML (textContent only), and never offer a way on that
// does not go through the person (a terminal phrase, or pairing again).

/** The banner's heading, word for word (tests and the screenshots look for it). */
export const ROLLBACK_TITLE = "Trust record rolled back";

/** The two next steps, in the order shown. */
export const ROLLBACK_STEPS = Object.freeze([
  "If you restored or edited trust.json yourself: run `tabwarden unkill` at a terminal to confirm the record as it is.",
  "Otherwise someone may have put an older record back: run `tabwarden pair --reset` at a terminal and pair this browser again.",
]);

/**
 * The banner's sentence under the heading.
 * @param {{epoch: number, seen: number}} rolledBack
 */
export function rollbackDetail({ epoch, seen }) {
  return `The host is serving trust record epoch ${epoch}, older than epoch ${seen} this browser has already seen. `
    + "Every request from an agent is refused until you do one of these:";
}

/**
 * Show (or hide) the banner in the element with id `rollback`, from a status answer's
 * `rolledBack` field ({epoch, seen} while rolled back, else null).
 * @param {Document} doc
 * @param {unknown} rolledBack
 * @returns {boolean} whether the banner is shown
 */
export function renderRollbackBanner(doc, rolledBack) {
  const el = doc.getElementById("rollback");
  if (!el) return false;
  const rb = /** @type {{epoch?: unknown, seen?: unknown} | null} */ (rolledBack !== null && typeof rolledBack === "object" ? rolledBack : null);
  if (rb === null || typeof rb.epoch !== "number" || typeof rb.seen !== "number") {
    el.hidden = true;
    el.replaceChildren();
    return false;
  }
  const title = doc.createElement("strong");
  title.textContent = ROLLBACK_TITLE;
  const detail = doc.createElement("p");
  detail.textContent = rollbackDetail({ epoch: rb.epoch, seen: rb.seen });
  const steps = doc.createElement("ol");
  steps.replaceChildren(...ROLLBACK_STEPS.map((text) => {
    const li = doc.createElement("li");
    // `backticked` commands become <code> (kept on one line by the pages' CSS).
    li.replaceChildren(...text.split("`").map((part, i) => {
      const node = doc.createElement(i % 2 === 1 ? "code" : "span");
      node.textContent = part;
      return node;
    }));
    return li;
  }));
  el.replaceChildren(title, detail, steps);
  el.hidden = false;
  return true;
}
