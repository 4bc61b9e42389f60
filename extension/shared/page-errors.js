// page-errors.js — an extension page's own errors (the options page, the popup, the confirm
// window), handed to the service worker as a `page_error` message, which reports them to the
// host's log as the worker's own are (worker/error-report.js: masked, capped, rate-limited).
// Only what this page's code threw or left unhandled: a web page never runs here, and its console
// never reaches this. Sending never throws and never waits: a worker that is not there loses the
// report (the page's console still has it).

/** The pages that report (worker/message-router.js TIER: the message is admitted from these). */
export const PAGES = Object.freeze(["options", "popup", "confirm"]);

/**
 * The message for one error, or null for a page not in PAGES.
 * @param {string} page
 * @param {"error" | "rejection"} kind
 * @param {unknown} err
 * @returns {Record<string, unknown> | null}
 */
export function pageErrorMessage(page, kind, err) {
  if (!PAGES.includes(page)) return null;
  const e = /** @type {{name?: unknown, message?: unknown, stack?: unknown}} */ (err instanceof Error ? err : {});
  let message = "";
  try {
    message = err instanceof Error ? String(e.message) : typeof err === "string" ? err : String(JSON.stringify(err) ?? err);
  } catch {
    message = String(err);
  }
  return {
    type: "page_error", page, kind,
    name: err instanceof Error ? String(e.name) : "",
    message,
    stack: err instanceof Error && typeof e.stack === "string" ? e.stack : "",
  };
}

/**
 * Report this page's uncaught errors and unhandled rejections; returns the reporter for errors
 * the page catches itself (a section that failed to load).
 * @param {string} page one of PAGES
 * @param {{addEventListener: (type: string, fn: (event: any) => void) => void}} win
 * @param {(msg: Record<string, unknown>) => Promise<unknown>} send chrome.runtime.sendMessage
 * @param {Record<string, unknown>} [also] fields every message carries (the confirm window: the
 *   `id` of its confirmation, which the worker admits its messages by)
 * @returns {(err: unknown) => void}
 */
export function reportPageErrors(page, win, send, also = {}) {
  /** @param {"error" | "rejection"} kind @param {unknown} err */
  const report = (kind, err) => {
    try {
      const msg = pageErrorMessage(page, kind, err);
      if (msg !== null) send({ ...also, ...msg }).catch?.(() => {});
    } catch {
      // reporting an error must never raise one
    }
  };
  win.addEventListener("error", (event) => report("error", event?.error ?? event?.message));
  win.addEventListener("unhandledrejection", (event) => report("rejection", event?.reason));
  return (err) => report("error", err);
}
