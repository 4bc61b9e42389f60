// page/pick.js — which rows a snapshot lists when it may list fewer than it found: the ONE copy
// of this rule, used by the DOM walk in the page (page/snapshot.js) and by the accessibility
// mode and the merge in the service worker (worker/a11y.js imports this file). Pure: no chrome,
// no DOM. It must never cut silently: whatever is left out, `cut` says how many rows, how many
// of them interactive, and how to list the rest; interactive rows are kept before the others.
//
// Loading: a classic script that is also an ES module, defining only `tabwardenPick` on
// globalThis (page/redact.js's header says why and how).

var tabwardenPick = (() => {
  /** Most rows a snapshot may list (its maxNodes' ceiling). */
  const MAX_NODES = 5000;

  /**
   * What a snapshot left out when it could not list every row: how many rows, how many of them
   * interactive, and how to list the rest (`skip`: the row to start at, given when interactive
   * elements were left out; `rest`: the sentence that says so). Null when nothing was cut.
   * @typedef {{rows: number, interactive: number, skip?: number, rest: string}} Cut
   */

  /**
   * Which of `rows` (document order) a snapshot lists when it may list `max`: from row `skip` on,
   * every interactive row first (in document order, up to `max`), then the others (headings,
   * lists, regions, text, …) while room is left; the listed rows stay in document order. Never
   * cuts silently: `cut` says how many rows and how many interactive ones were left out, and how
   * to list the rest (a `skip` that starts at the first interactive row left out; a larger
   * maxNodes; a scope).
   * @template R
   * @param {R[]} rows
   * @param {(row: R) => boolean} acts the row is interactive
   * @param {number} max
   * @param {number} [skip]
   * @returns {{kept: R[], cut: Cut | null}}
   */
  function pick(rows, acts, max, skip = 0) {
    const from = Number.isSafeInteger(skip) && skip > 0 ? Math.min(skip, rows.length) : 0;
    const rest = rows.slice(from);
    if (rest.length <= max) return { kept: rest, cut: null };
    /** @type {number[]} */
    const inter = [];
    /** @type {number[]} */
    const other = [];
    rest.forEach((row, i) => (acts(row) ? inter : other).push(i));
    const keepInter = inter.slice(0, max);
    const keep = new Set([...keepInter, ...other.slice(0, max - keepInter.length)]);
    const kept = rest.filter((_, i) => keep.has(i));
    const lostInter = inter.length - keepInter.length;
    const lost = rest.length - kept.length;
    /** @type {Cut} */
    const cut = { rows: lost, interactive: lostInter, rest: "" };
    if (lostInter > 0) {
      cut.skip = from + inter[keepInter.length];
      cut.rest = `${lostInter} interactive element${lostInter === 1 ? " was" : "s were"} left out (the first ${keepInter.length} are listed): call again with skip: ${cut.skip} to list from the first one left out, or a larger maxNodes (up to ${MAX_NODES}), or scope by ref`;
    } else {
      cut.rest = `every interactive element is listed; ${lost} other row${lost === 1 ? "" : "s"} (headings, lists, regions, text) left out: call again with a larger maxNodes (up to ${MAX_NODES}) or scope by the ref of a listed region`;
    }
    return { kept, cut };
  }

  return Object.freeze({ MAX_NODES, pick });
})();
globalThis.tabwardenPick = tabwardenPick;
void 0; // the script's completion value, which executeScript returns: nothing to serialise
