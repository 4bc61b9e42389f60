// debugger.js — Chrome's debugger (CDP 1.3 through chrome.debugger, injected) on the tabs a
// session owns: attached when the tab is opened (a debugger attached after a JavaScript dialog
// opened never sees that dialog), re-attached lazily when it is missing, every command bounded by
// the call's deadline (the injected `step`, handlers/support.js), its Page dialog and navigation
// events fed to worker/dialogs.js (a dialog it says to answer at once, armed or auto-dismissed, is
// answered here; a main-frame navigation drops the tab's arm), and its detaches reported: the person closing Chrome's "is debugging this
// browser" bar is answered once with `debugger_detached` before anything re-attaches. Also the tab
// guard tab-queue.js runs every tab call through (`dialog_open` at once while a dialog is open).
// Every event of an owned tab is also routed to the capture tails (worker/capture.js), which are
// told of each attachment (to enable their CDP domains before the tab navigates) and of each tab
// forgotten; a domain capture holds stays enabled when another user sends its `.disable`, and its
// `.enable` from another user re-enables it (so Chrome reports the domain's state again).
// An attach Chrome refuses is tried again with backoff (ATTACH_ATTEMPTS, ATTACH_BACKOFF: under a
// second in all) unless Chrome's refusal is final (a page no extension may debug, a tab gone);
// still held by another debugger after the last try, the call answers `debugger_detached` naming
// the next step (close DevTools or the other debugging tool on that tab), and the next call
// tries afresh. Chrome says "Another debugger is already attached" only of this extension's own
// attachment (a plain CDP client, DevTools or another extension attach beside it:
// docs/platform-facts-dialogs.md), so each try first takes such an attachment over (an earlier
// worker's); what then still holds the tab is another context re-attaching at once.
// Every attachment first holds its tab in front (FOREGROUND_EMULATION), so an owned tab behind
// the person's window, minimised or not its window's active tab runs as a foreground tab does;
// only owned tabs are attached, so a person's own tab is never held.
// Pure: no chrome. It must never attach to (or keep attached to) a tab no session owns, never
// let a CDP failure escape as anything but a table code, and never let an event listener throw.
// docs/adr/0005-debugger-on-owned-tabs.md says why the debugger stays attached.

import { BridgeError } from "../shared/bridge-error.js";
import { dialogOpenError, leaveRefused } from "./dialogs.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { NO_POLICY } from "./policy.js";
import { createBackoff } from "./backoff.js";

/** The CDP version chrome.debugger.attach is asked for. */
export const CDP_VERSION = "1.3";
/** Longest an attach (attach + Page.enable) may take inside a call that does not need it. */
export const SOFT_ATTACH_MS = 5000;
/**
 * What every attachment to an owned tab sends first, so the tab runs as a foreground tab does
 * behind the person's window:
 * - focus emulation: Chrome counts a focus-emulated tab as visible (it holds the tab as a capture
 *   would), so it is not hidden when it is not its window's active tab or its window is
 *   minimised, and its timers (1 tick a second when hidden) and animation frames (none when
 *   hidden) run at full rate; `document.hasFocus()` is true in it.
 * - a screencast nobody reads: in a minimised window Chrome draws nothing, so a visible tab's
 *   frames pile up undrawn and it is given one animation frame a second; a capture of the tab
 *   takes each frame as drawn, so its frames keep pace. Tiny, one image in 600 frames and never
 *   acknowledged (Chrome then sends at most a few), dropped on arrival (`onEvent`).
 * Both last as long as this attachment (navigations included) and end with it: a re-attachment
 * sends them again. Measured in docs/platform-facts-background-tabs.md; why owned tabs only and
 * what it costs in docs/adr/0010.
 * @type {ReadonlyArray<readonly [string, Record<string, unknown>]>}
 */
export const FOREGROUND_EMULATION = Object.freeze([
  Object.freeze(/** @type {const} */ (["Emulation.setFocusEmulationEnabled", Object.freeze({ enabled: true })])),
  Object.freeze(/** @type {const} */ (["Page.startScreencast", Object.freeze({ format: "jpeg", quality: 1, maxWidth: 64, maxHeight: 64, everyNthFrame: 600 })])),
]);
/** Most attach tries before a tab held by another debugger is answered (the first and retries). */
export const ATTACH_ATTEMPTS = 4;
/** The delays between attach tries: 100 ms doubling (100, 200, 400 ms: under a second in all). */
export const ATTACH_BACKOFF = Object.freeze({ initialMs: 100, maxMs: 1000, factor: 2 });
/** Chrome's words for a tab whose debugger is held ("Another debugger is already attached …"). */
const HELD_RE = /already attached/i;
/** Chrome's refusals no retry changes: a page no extension may debug, a tab that is gone. */
const FINAL_RE = /cannot access|cannot attach|no tab with|not allowed|restricted/i;
/** An attach that found the tab held by another debugger on every try. */
class HeldElsewhere extends Error {}
/**
 * The overrides page_emulate (handlers/emulate.js) can set on an owned tab, each as the command
 * that ends it. They live on this attachment: `release` (the session let the tab go) sends these
 * before it detaches, so none outlives the session even where Chrome would keep one; a detach
 * ends them too (Chrome drops a client's Emulation overrides with the client).
 * @type {ReadonlyArray<readonly [string, Record<string, unknown>]>}
 */
export const EMULATION_CLEARS = Object.freeze([
  Object.freeze(/** @type {const} */ (["Emulation.setUserAgentOverride", Object.freeze({ userAgent: "" })])),
  Object.freeze(/** @type {const} */ (["Emulation.clearGeolocationOverride", Object.freeze({})])),
  Object.freeze(/** @type {const} */ (["Emulation.setEmulatedMedia", Object.freeze({ media: "", features: [] })])),
  Object.freeze(/** @type {const} */ (["Emulation.setLocaleOverride", Object.freeze({})])),
  Object.freeze(/** @type {const} */ (["Emulation.setTimezoneOverride", Object.freeze({ timezoneId: "" })])),
]);
/** Longest Chrome text quoted in an error. */
const MAX_QUOTE = 200;

/**
 * chrome.debugger, by tab id (shared/chrome-api.js provides the real one).
 * @typedef {object} DebuggerApi
 * @property {(tabId: number, version: string) => Promise<void>} attach
 * @property {(tabId: number) => Promise<void>} detach
 * @property {(tabId: number, method: string, params?: Record<string, unknown>, sessionId?: string) => Promise<unknown>} send
 *   `sessionId`: a child target's flat session (an out-of-process iframe: Target.setAutoAttach)
 */
/** A call's context (handlers/support.js: its deadline bounds every step). */
/** @typedef {import("../handlers/support.js").Ctx} Ctx */
/**
 * @typedef {(ctx: Ctx, what: string, work: Promise<any>, capMs?: number) => Promise<any>} Step
 */

/**
 * @typedef {object} DebuggerManager
 * @property {(ctx: Ctx, tabId: number) => Promise<void>} ensure attached, or
 *   `debugger_detached` (once after the person closed the bar; or when Chrome refuses)
 * @property {(ctx: Ctx, tabId: number) => Promise<boolean>} ensureSoft as ensure,
 *   never throwing and never re-attaching after the person closed the bar; true when attached
 * @property {(ctx: Ctx, tabId: number, method: string, params: Record<string, unknown>, what: string, sessionId?: string) =>
 *   Promise<any>} send one CDP command on an owned tab (or, with `sessionId`, on one of its child
 *   targets: an out-of-process iframe), bounded by the call's deadline
 * @property {(tabId: number, method: string, params: unknown, sessionId?: string) => void} onEvent
 *   chrome.debugger.onEvent (`sessionId`: the event is a child target's; only listeners get it)
 * @property {(tabId: number) => ChildTarget[]} children the tab's attached child targets
 *   (Target.attachedToTarget seen, not yet detached), outermost first
 * @property {(tabId: number, reason: unknown) => void} onDetach chrome.debugger.onDetach
 * @property {(tabId: number) => void} release the tab left its session: detach and forget it
 * @property {(tabId: number) => void} removed the tab closed: forget it
 * @property {() => number[]} attached tab ids with a live (or pending) attachment
 * @property {(tabId: number, fn: (method: string, params: any, sessionId?: string) => void) => () => void} listen
 *   every later CDP event of an owned tab to `fn` (a throwing `fn` is ignored) until the
 *   returned function is called (page_snapshot's a11y mode: Runtime.executionContextCreated)
 * @property {(tabId: number, method: string, params?: Record<string, unknown>) => Promise<any>} command
 *   one CDP command outside any call (the capture tails): on a tab with an attachment only
 *   (rejects otherwise), after that attachment settled
 * @property {(tabId: number, domain: string, on: boolean) => void} hold keep `domain` enabled
 *   on the tab against other users' `.disable` (and re-enable it on their `.enable`)
 * @property {(tabId: number) => void} emulating page_emulate is about to set an override on the
 *   tab: `release` ends every one (EMULATION_CLEARS) before it detaches
 */

/**
 * Who else hears of attachments and events (worker/capture.js).
 * @typedef {object} EventSink
 * @property {(tabId: number, via: (tabId: number, method: string, params?: Record<string, unknown>) => Promise<any>) =>
 *   Promise<void>} attached the tab was just attached (`via` sends on that attachment)
 * @property {(tabId: number, method: string, params: unknown) => void} event an owned tab's event
 * @property {(tabId: number) => void} forget the tab left its session or closed
 */

/**
 * A child target of an owned tab, attached through Target.setAutoAttach {flatten: true}:
 * `parent` is the session it was announced on (undefined: the tab's own).
 * @typedef {{sessionId: string, parent: string | undefined, targetId: string, type: string}} ChildTarget
 */

/**
 * @param {{api: DebuggerApi, owned: (tabId: number) => boolean, dialogs: import("./dialogs.js").Dialogs,
 *   step: Step, log?: {warn: (...a: unknown[]) => void}, sink?: EventSink,
 *   sleep?: (ms: number) => Promise<void>}} deps `sleep`: the wait between attach tries
 * @returns {DebuggerManager}
 */
export function createDebuggerManager({ api, owned, dialogs, step, log = console, sink, sleep = defaultSleep }) {
  /** tabId -> the attachment (attach + Page.enable), settled or pending. */
  /** @type {Map<number, Promise<void>>} */
  const sessions = new Map();
  /** Tabs whose debugger the person detached (closed the bar): told once, then re-attached. */
  /** @type {Set<number>} */
  const cancelled = new Set();

  /** Listeners for the events of one tab (DebuggerManager.listen). */
  /** @type {Set<{tabId: number, fn: (method: string, params: any, sessionId?: string) => void}>} */
  const listeners = new Set();
  /** tabId -> its child targets by sessionId (an out-of-process iframe's, handlers/frames.js). */
  /** @type {Map<number, Map<string, ChildTarget>>} */
  const childTargets = new Map();
  /** tabId -> the CDP domains held enabled (DebuggerManager.hold). */
  /** @type {Map<number, Set<string>>} */
  const holds = new Map();
  /** Tabs page_emulate set an override on, on their current attachment (DebuggerManager.emulating). */
  /** @type {Set<number>} */
  const emulated = new Set();

  /** @param {unknown} err */
  const quote = (err) => String(err instanceof Error ? err.message : err).slice(0, MAX_QUOTE);

  /** @param {number} tabId */
  function attach(tabId) {
    const existing = sessions.get(tabId);
    if (existing !== undefined) return existing;
    const p = (async () => {
      const backoff = createBackoff(ATTACH_BACKOFF);
      for (let attempt = 1; ; attempt += 1) {
        try {
          await attachOnce(tabId);
          break;
        } catch (err) {
          const said = quote(err);
          if (FINAL_RE.test(said)) throw err;
          if (attempt >= ATTACH_ATTEMPTS) throw HELD_RE.test(said) ? new HeldElsewhere(said) : err;
          log.warn(`tabwarden: could not attach the debugger to tab ${tabId} (try ${attempt} of ${ATTACH_ATTEMPTS}); trying again`, said);
          await sleep(backoff.next());
        }
      }
      await api.send(tabId, "Page.enable");
      await keepInFront(tabId);
      // Before anything navigates the tab: the capture tails' domains, when they are on.
      // Bounded: a page that does not answer must not hold the attachment (nor its call) up.
      if (sink !== undefined) {
        const noCall = /** @type {Ctx} */ ({ session: "", policy: NO_POLICY });
        await step(noCall, "enable the capture tails", sink.attached(tabId, api.send), SOFT_ATTACH_MS).catch(() => {});
      }
    })();
    sessions.set(tabId, p);
    p.catch(() => {
      if (sessions.get(tabId) === p) sessions.delete(tabId);
    });
    return p;
  }

  /**
   * One attach try. "Already attached" is this extension's own attachment (an earlier worker's:
   * Chrome keeps it across a worker restart): taken over.
   * @param {number} tabId
   */
  async function attachOnce(tabId) {
    try {
      await api.attach(tabId, CDP_VERSION);
    } catch (err) {
      if (!HELD_RE.test(quote(err))) throw err;
      await api.detach(tabId).catch(() => {});
      await api.attach(tabId, CDP_VERSION);
    }
  }

  /**
   * Hold an owned tab in front (FOREGROUND_EMULATION) on this attachment. A failure is logged,
   * never fatal: the tab still works where the person can see it.
   * @param {number} tabId
   */
  async function keepInFront(tabId) {
    for (const [method, params] of FOREGROUND_EMULATION) {
      try {
        await api.send(tabId, method, params);
      } catch (err) {
        log.warn(`tabwarden: could not keep tab ${tabId} running in the background (${method})`, quote(err));
      }
    }
  }

  /** @param {number} tabId */
  function refuseUnowned(tabId) {
    if (!owned(tabId)) throw new BridgeError(CODE.TAB_NOT_OWNED, `tab ${tabId} was not opened by this session`);
  }

  /** @param {number} tabId */
  function release(tabId) {
    cancelled.delete(tabId);
    dialogs.removed(tabId);
    childTargets.delete(tabId);
    holds.delete(tabId);
    sink?.forget(tabId);
    const clear = emulated.delete(tabId);
    const had = sessions.get(tabId);
    sessions.delete(tabId);
    if (had !== undefined) had.then(() => (clear ? clearEmulation(tabId) : undefined)).then(() => api.detach(tabId)).catch(() => {});
  }

  /**
   * End every page_emulate override on the tab (each on its own: one failing never keeps the
   * others on, nor the detach from coming).
   * @param {number} tabId
   */
  async function clearEmulation(tabId) {
    for (const [method, params] of EMULATION_CLEARS) {
      try {
        await api.send(tabId, method, params);
      } catch (err) {
        log.warn(`tabwarden: could not end an emulation on tab ${tabId} (${method})`, quote(err));
      }
    }
  }

  return {
    async ensure(ctx, tabId) {
      refuseUnowned(tabId);
      if (cancelled.delete(tabId)) {
        throw new BridgeError(CODE.DEBUGGER_DETACHED,
          `the person closed Chrome's "is debugging this browser" bar for tab ${tabId}, which detached tabwarden's debugger; nothing was done. Call again to re-attach it`);
      }
      try {
        await step(ctx, "attach the debugger", attach(tabId));
      } catch (err) {
        if (err instanceof BridgeError) throw err; // the step's timeout
        if (err instanceof HeldElsewhere) {
          throw new BridgeError(CODE.DEBUGGER_DETACHED,
            `another debugger holds tab ${tabId} (Chrome: "${err.message}"; tried ${ATTACH_ATTEMPTS} times); nothing was done. Close DevTools or the other debugging tool on that tab, then call again`);
        }
        throw new BridgeError(CODE.DEBUGGER_DETACHED, `Chrome would not attach its debugger to tab ${tabId}: ${quote(err)}`);
      }
    },

    async ensureSoft(ctx, tabId) {
      if (!owned(tabId) || cancelled.has(tabId)) return false;
      try {
        await step(ctx, "attach the debugger", attach(tabId), SOFT_ATTACH_MS);
        return true;
      } catch (err) {
        log.warn(`tabwarden: could not attach the debugger to tab ${tabId}`, quote(err));
        return false;
      }
    },

    async send(ctx, tabId, method, params, what, sessionId) {
      await this.ensure(ctx, tabId);
      const [domain, verb] = method.split(".");
      // Holds are on the tab's own session; a child session (an out-of-process frame) has none.
      const held = sessionId === undefined && holds.get(tabId)?.has(domain) === true;
      // Another user of a held domain: its disable is answered here, its enable re-enables (a
      // second enable alone would not report the domain's state, e.g. execution contexts, again).
      if (held && verb === "disable") return {};
      try {
        if (held && verb === "enable") await step(ctx, what, api.send(tabId, `${domain}.disable`, {}));
        return await step(ctx, what, sessionId === undefined ? api.send(tabId, method, params) : api.send(tabId, method, params, sessionId));
      } catch (err) {
        if (err instanceof BridgeError) throw err; // the step's timeout
        // Detached without an onDetach (our own detach from an earlier worker, or a race).
        if (/not attached/i.test(quote(err))) {
          sessions.delete(tabId);
          dialogs.forget(tabId);
        }
        if (!sessions.has(tabId)) {
          throw new BridgeError(CODE.DEBUGGER_DETACHED, `the debugger left tab ${tabId} during "${what}"; call again to re-attach it`);
        }
        throw new BridgeError(CODE.INTERNAL_ERROR, `the debugger step "${what}" failed: ${quote(err)}`);
      }
    },

    onEvent(tabId, method, params, sessionId) {
      if (!Number.isInteger(tabId)) return;
      if (!owned(tabId)) {
        release(tabId); // never stay on a tab nobody owns
        return;
      }
      if (method === "Page.screencastFrame") return; // FOREGROUND_EMULATION's: nobody reads it
      const p = /** @type {any} */ (params);
      const child = typeof sessionId === "string" ? sessionId : undefined;
      if (method === "Target.attachedToTarget" && typeof p?.sessionId === "string") {
        const known = childTargets.get(tabId) ?? new Map();
        childTargets.set(tabId, known);
        known.set(p.sessionId, { sessionId: p.sessionId, parent: child, targetId: String(p?.targetInfo?.targetId ?? ""), type: String(p?.targetInfo?.type ?? "") });
      } else if (method === "Target.detachedFromTarget" && typeof p?.sessionId === "string") childTargets.get(tabId)?.delete(p.sessionId);
      if (child !== undefined) {
        // A child target's event (an out-of-process iframe): not the tab's page, so not its dialogs.
        for (const l of listeners) {
          if (l.tabId !== tabId) continue;
          try {
            l.fn(method, params, child);
          } catch {
            // a listener must never throw into chrome.debugger.onEvent
          }
        }
        return;
      }
      if (method === "Page.javascriptDialogOpening") {
        const answer = dialogs.opened(tabId, params);
        if (answer !== null) {
          api.send(tabId, "Page.handleJavaScriptDialog", answer.params).catch((/** @type {unknown} */ err) => {
            log.warn(`tabwarden: could not answer the dialog on tab ${tabId}`, quote(err));
            dialogs.answerFailed(tabId);
          });
        }
      } else if (method === "Page.javascriptDialogClosed") dialogs.closed(tabId, params);
      // Any navigation ends the document an arm was bound to: a new document in the main frame,
      // or a same-document one (history.pushState, a fragment) in any frame.
      else if (method === "Page.frameNavigated" && (p?.frame?.parentId === undefined || p?.frame?.parentId === "")) dialogs.navigated(tabId);
      else if (method === "Page.navigatedWithinDocument") dialogs.navigated(tabId);
      sink?.event(tabId, method, params); // never throws (worker/capture.js)
      for (const l of listeners) {
        if (l.tabId !== tabId) continue;
        try {
          l.fn(method, params);
        } catch {
          // a listener must never break the dialog bookkeeping above
        }
      }
    },

    listen(tabId, fn) {
      const l = { tabId, fn };
      listeners.add(l);
      return () => {
        listeners.delete(l);
      };
    },

    command(tabId, method, params) {
      const p = sessions.get(tabId);
      if (p === undefined || !owned(tabId)) return Promise.reject(new Error(`no debugger on tab ${tabId}`));
      return p.then(() => api.send(tabId, method, params));
    },

    hold(tabId, domain, on) {
      const set = holds.get(tabId) ?? new Set();
      if (on) set.add(domain);
      else set.delete(domain);
      if (set.size > 0) holds.set(tabId, set);
      else holds.delete(tabId);
    },

    emulating(tabId) {
      if (owned(tabId)) emulated.add(tabId);
    },

    onDetach(tabId, reason) {
      if (!Number.isInteger(tabId)) return;
      emulated.delete(tabId); // Chrome ended this client's overrides with it
      sessions.delete(tabId);
      childTargets.delete(tabId);
      dialogs.forget(tabId); // unseen from now on
      if (reason === "canceled_by_user" && owned(tabId)) cancelled.add(tabId);
      else cancelled.delete(tabId);
    },

    release,

    removed(tabId) {
      emulated.delete(tabId);
      sessions.delete(tabId);
      childTargets.delete(tabId);
      cancelled.delete(tabId);
      dialogs.removed(tabId);
      holds.delete(tabId);
      sink?.forget(tabId);
    },

    attached: () => [...sessions.keys()],

    children: (tabId) => [...(childTargets.get(tabId)?.values() ?? [])],
  };
}

/** @param {number} ms */
function defaultSleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Actions that run at once even while a dialog is open (they answer it or end the tab). */
export const DIALOG_EXEMPT = Object.freeze(["page_dialog", "tab_close"]);

/**
 * The guard tab-queue.js runs every call on a tab through: on a tab the calling session owns, a
 * call arriving while a dialog is open answers `dialog_open` at once (page_dialog and tab_close
 * run at once, outside the queue); a queued call re-checks when its turn comes, (re-)attaches the
 * debugger if it is missing, and ends with `dialog_open` the moment a dialog opens while it runs
 * (the page is blocked; its late outcome is ignored). Calls on tabs the session does not own pass
 * untouched (their handler answers tab_not_owned), so nothing of another session's tab leaks.
 * @param {{manager: DebuggerManager, dialogs: import("./dialogs.js").Dialogs,
 *   ownerOf: (tabId: number) => string | null}} deps
 * @returns {import("./tab-queue.js").TabGuard}
 */
export function createDialogGuard({ manager, dialogs, ownerOf }) {
  /** @param {number} tabId @param {{session?: unknown}} ctx */
  const mine = (tabId, ctx) => typeof ctx?.session === "string" && ownerOf(tabId) === ctx.session;
  /**
   * The refusal, with the dialog's text only when its frame's site is approved.
   * @param {number} tabId
   * @param {import("./dialogs.js").Dialog} d
   * @param {any} ctx
   * @param {string} [during]
   */
  const refusal = (tabId, d, ctx, during) => {
    const approved = (ctx?.policy ?? NO_POLICY).approves(originOf(d.url));
    if (d.pending?.answered === "auto-dismissed" && during !== undefined) return leaveRefused(tabId, d, during, approved);
    return dialogOpenError(tabId, d, during, { approved });
  };
  /** The tab's calls run under this policy's dialogArming. @param {number} tabId @param {any} ctx */
  const track = (tabId, ctx) => dialogs.setArming(tabId, (ctx?.policy ?? NO_POLICY).allows("dialogArming"));
  return {
    admit(action, tabId, ctx) {
      if (!mine(tabId, ctx)) return "queue";
      track(tabId, ctx);
      if (DIALOG_EXEMPT.includes(action)) return dialogs.current(tabId) !== null || action === "page_dialog" ? "now" : "queue";
      const open = dialogs.blocking(tabId);
      if (open !== null) throw refusal(tabId, open, ctx);
      return "queue";
    },
    async run(action, tabId, ctx, fn) {
      if (!mine(tabId, ctx) || DIALOG_EXEMPT.includes(action)) return fn();
      track(tabId, ctx);
      await manager.ensureSoft(ctx, tabId);
      const open = dialogs.blocking(tabId);
      if (open !== null) throw refusal(tabId, open, ctx);
      const watch = dialogs.watch(tabId);
      try {
        const interrupted = watch.promise.then((d) => {
          throw refusal(tabId, d, ctx, action);
        });
        return await Promise.race([Promise.resolve().then(fn), interrupted]);
      } finally {
        watch.cancel();
      }
    },
  };
}
