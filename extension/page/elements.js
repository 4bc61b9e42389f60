// page/elements.js — the page-side entry point of the element tools: `pageOp(op, a)` checks that
// the document is still on the origin the handler gated, runs one operation (page_snapshot,
// waitFor, page scroll, one element's text (page/snapshot.js), or an element operation of page/actions.js on the element page/locate.js
// resolves) and answers a plain object: the result, or {error: {code, message}} with a table
// code. Runs in the page's isolated world, injected last (worker/elements.js's PAGE_FILES lists the
// order) and called by worker/elements.js's callPageOp; under Node's tests too. It must never act
// when the document's origin is not `a.origin`, and never let an unexpected exception's text out
// (it becomes internal_error with a fixed message).
//
// Loading: a classic script that is also an ES module, defining only `tabwardenElements` on
// globalThis (page/redact.js's header says why and how).

var tabwardenElements = (() => {
  const { PageError, deepActive } = globalThis.tabwardenDom;
  const { resolve, targetOf } = globalThis.tabwardenLocate;
  const { snapshot, elementText, boxOf } = globalThis.tabwardenSnapshot;
  const { ELEMENT_OPS, waitFor, scrollPage, settle, reveal, pointAt, actionable, inputResult, clickResult, pointerHere } = globalThis.tabwardenActions;

  /** Every op pageOp understands: the page-wide ones and the element operations. */
  const PAGE_OPS = Object.freeze(["snapshot", "waitFor", "point", "actionable", "settle", "reveal", "inputResult", "clickResult", "pointerHere", ...ELEMENT_OPS.keys(), "text"]);

  /**
   * @param {string} op
   * @param {Record<string, any>} a
   * @returns {Promise<unknown>}
   */
  async function run(op, a) {
    if (typeof a.origin !== "string" || location.origin !== a.origin) {
      throw new PageError("origin_not_approved", "the page left the approved origin");
    }
    if (op === "snapshot") return snapshot(a);
    if (op === "waitFor") return waitFor(a);
    if (op === "point") return named(pointAt(a), a);
    if (op === "actionable") return actionable(a);
    if (op === "settle") return settle(a);
    if (op === "reveal") return reveal(a);
    if (op === "inputResult") return inputResult();
    if (op === "clickResult") return clickResult(a);
    if (op === "pointerHere") return pointerHere();
    if (op === "scroll" && !a.target) return scrollPage(a);
    const el = !a.target && (op === "press" || op === "describe" || op === "focus") ? deepActive() || document.body : resolve(a.target, a.docToken);
    if (op === "text") return elementText(el);
    if (op === "getState") return named({ ...(await ELEMENT_OPS.get(op)?.(el, a)), ...boxOf(el) }, a, el);
    const act = ELEMENT_OPS.get(op);
    if (act === undefined) throw new PageError("bad_request", `unknown page operation ${String(op).slice(0, 40)}`);
    const target = a.target ? targetOf(el, a.refFloor) : null; // described before the op changes it
    return named(await act(el, a), a, null, target);
  }

  /**
   * An element op's result with `target`: what the op acted on, as page/locate.js targetOf names
   * it (ref, role, name; the ref's document token and the store's last ref, which the worker
   * records so the ref works in the next call). Only when the call named an element (`a.target`).
   * @param {unknown} out
   * @param {Record<string, any>} a
   * @param {any} [el] the resolved element (else: resolved again from a.target)
   * @param {ReturnType<typeof targetOf> | null} [known] already described
   */
  function named(out, a, el = null, known = null) {
    if (!a.target || out === null || typeof out !== "object" || Array.isArray(out)) return out;
    const t = known ?? targetOf(el ?? resolve(a.target, a.docToken), a.refFloor);
    return { ...out, target: t };
  }

  /**
   * Run one op. `a` is a plain JSON object:
   *   origin      the origin the handler gated; the op refuses to act anywhere else
   *   target      {ref|selector|text|xpath, index?} (element ops)
   *   docToken    the token of the tab's latest snapshot (ref addressing)
   *   refFloor    (snapshot) the tab's highest ref so far: a new document numbers after it
   *   compact, maxNodes  (snapshot) interactive elements only; most elements listed (target: the scope)
   *   ...         op-specific fields (value, key, checked, to, allowPassword, expectKind, waitFor fields)
   * @param {string} op one of PAGE_OPS
   * @param {Record<string, any>} a
   * @returns {Promise<unknown>} the op's result, or {error: {code, message}}
   */
  function pageOp(op, a) {
    // An `ambiguous` answer carries `refs` ({docToken, lastRef}): its candidates' refs are bound
    // in this document's RefStore, and the worker records them as a snapshot's.
    return run(op, a).catch((err) => {
      if (!(err instanceof PageError)) return { error: { code: "internal_error", message: "the page operation failed" } };
      const refs = /** @type {{refs?: unknown}} */ (err).refs;
      return { error: { code: err.code, message: err.message, ...(refs ? { refs } : {}) } };
    });
  }

  return Object.freeze({ PAGE_OPS, pageOp });
})();
globalThis.tabwardenElements = tabwardenElements;
void 0; // the script's completion value, which executeScript returns: nothing to serialise
