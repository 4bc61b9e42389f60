// provenance-gate.js — the one decision on an address the agent opens, a request it sends or a
// value it types that carries what a page said: the MCP server's ledger (mcp_server/provenance.py)
// attaches that lineage to the call as `args.provenance` ({evidence: [{sourceOrigin, kind, token
// (masked), readAt}]}), and every request passes `gated` (one wrapper around every route), which
// decides by LINEAGE_RULES before the handler runs: an address or a request's URL (tab_open,
// page_navigate, page_fetch — its body goes where its URL goes) is checked there against its own
// origin; typed text is checked by its handler against the tab's or frame's current origin (only
// the handler knows which), through `check`; an action with no rule that carries lineage is
// refused before its handler runs (a new tool cannot skip the gate by forgetting it). Lineage from
// another origin's page follows the signed policy `provenance`: "strict" refuses
// (provenance_refused), "off" lets it through, anything else asks the person in the confirm
// window, naming the page that supplied it (and, for typed text, both origins); for an enrolled
// browser (the host's word, asked each time) the window asks for a tap instead of the click: a
// `confirm.provenance` challenge naming the target origin, the sources and the SHA-256 of the
// value, which only the host's verdict on the tap allows (shared/presence-confirm.js). Lineage only
// from the target's own origin is allowed; no lineage: nothing to decide. The target origin
// being approved does not exempt a call. Pure: the confirm window and the host's enrolment answer
// are injected. It must never let foreign lineage through without the person's yes unless the
// policy says "off", never downgrade an enrolled browser's tap to a click (nor guess when the
// host cannot say), never treat a malformed `provenance` as none, and never show more of a
// recorded value than the masked form the server sent.
//
// Captures (docs/adr/0008): the server also sends `provenance.captures` ([{sourceOrigin,
// readAt}]), the origins a screenshot, PDF or saved file showed the model earlier in the session
// — pixels nobody can match a value against. Under "strict" a call aimed at another origin than
// a capture's, with no text lineage to refuse, is asked (there is no proof the value came from
// the picture), the window's "Came from" row naming the capture and when it was taken; an
// enrolled browser cannot answer it with a tap (the host confirms no tap under strict), so it is
// refused. Under "confirm" and "off" captures are a stated residual: ignored, nobody asked.

import { BridgeError } from "../shared/bridge-error.js";
import { canonicalJson, compareCodePoints } from "../shared/canonical-json.js";
import { ADDRESS_LINEAGE } from "./catalogue.js";
import { refuseUnlessAllowed } from "../shared/confirm-window.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { isPlainObject } from "../shared/wire.js";

/** Most evidence items read from one call (the server sends at most 4). */
const MAX_EVIDENCE = 8;
/** Longest text of an evidence field or an address shown in the confirm window. */
const MAX_SHOWN = 300;

/**
 * Where each action's lineage is decided: `{address}`: here, before the handler, against the
 * origin of that argument (the address a tab goes to; the URL a request goes to, whose body and
 * headers go there too); "handler": by the handler, against the origin of the page or frame the
 * text goes into. The MCP server's catalogue declares which arguments carry lineage
 * (mcp_server/catalogue/ `Lineage`): the address rules are generated from it (worker/catalogue.js
 * ADDRESS_LINEAGE); the "handler" ones say the handler checks, and tests hold every action the
 * catalogue gates to a rule here.
 * @type {ReadonlyMap<string, {address: string, request?: boolean} | "handler">}
 */
export const LINEAGE_RULES = new Map(/** @type {Array<[string, {address: string, request?: boolean} | "handler"]>} */ ([
  ...ADDRESS_LINEAGE,
  ["page_fill", "handler"],
  ["page_type", "handler"],
  ["page_select", "handler"],
  ["page_fill_form", "handler"],
  ["page_keys", "handler"],
  ["page_dialog", "handler"],
  ["page_emulate", "handler"],
]));

/** @typedef {{sourceOrigin: string, kind: string, token: string, readAt: number | null}} Evidence */
/** @typedef {"same_origin" | "off" | "confirmed"} ProvenanceDecision */
/** How a "confirmed" decision was given: a click in the window, or a tap the host verified. @typedef {"window" | "webauthn"} ProvenancePath */

/**
 * Lower-case hex SHA-256 of a text's UTF-8 (Web Crypto: the service worker's and Node's).
 * @param {string} text
 */
export async function sha256Hex(text) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The detail a `confirm.provenance` tap signs for (host/taps.py checks it is exactly this):
 * canonical `{origin, sha256, sources}`, the sources sorted by code point, each once.
 * @param {string} target
 * @param {string} value the address or typed value (only its hash is named)
 * @param {string[]} sources
 */
export async function provenanceTapDetail(target, value, sources) {
  const sorted = [...new Set(sources)].sort(compareCodePoints);
  return canonicalJson({ origin: target, sha256: await sha256Hex(value), sources: sorted });
}

/** @typedef {{sourceOrigin: string, readAt: number | null}} Capture */

/**
 * The call's lineage, checked: its text `evidence` and its `captures` (each empty when absent);
 * null when the call carries none; BridgeError(bad_request) when `provenance` is there but
 * malformed (never read as "no lineage").
 * @param {Record<string, unknown>} args
 * @returns {{evidence: Evidence[], captures: Capture[]} | null}
 */
export function lineageOf(args) {
  const p = args.provenance;
  if (p === undefined || p === null) return null;
  if (!isPlainObject(p) || (p.evidence === undefined && p.captures === undefined)) {
    throw new BridgeError(CODE.BAD_REQUEST, "provenance must carry evidence or captures");
  }
  const evidence = p.evidence === undefined ? [] : evidenceList(p.evidence);
  const captures = p.captures === undefined ? [] : captureList(p.captures);
  return { evidence, captures };
}

/**
 * The call's text evidence, checked; null when the call carries no lineage ([] when it carries
 * only captures).
 * @param {Record<string, unknown>} args
 * @returns {Evidence[] | null}
 */
export function evidenceOf(args) {
  return lineageOf(args)?.evidence ?? null;
}

/** @param {unknown} list @returns {Capture[]} */
function captureList(list) {
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_EVIDENCE) {
    throw new BridgeError(CODE.BAD_REQUEST, "provenance must carry 1 to 8 captures");
  }
  return list.map((c) => {
    if (!isPlainObject(c) || typeof c.sourceOrigin !== "string" || c.sourceOrigin === "") {
      throw new BridgeError(CODE.BAD_REQUEST, "a provenance capture needs its sourceOrigin");
    }
    return {
      sourceOrigin: c.sourceOrigin.slice(0, MAX_SHOWN),
      readAt: typeof c.readAt === "number" && Number.isFinite(c.readAt) ? c.readAt : null,
    };
  });
}

/** @param {unknown} list @returns {Evidence[]} */
function evidenceList(list) {
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_EVIDENCE) {
    throw new BridgeError(CODE.BAD_REQUEST, "provenance must carry 1 to 8 evidence items");
  }
  return list.map((e) => {
    if (!isPlainObject(e) || typeof e.sourceOrigin !== "string" || e.sourceOrigin === ""
        || typeof e.kind !== "string" || typeof e.token !== "string") {
      throw new BridgeError(CODE.BAD_REQUEST, "provenance evidence needs sourceOrigin, kind and token");
    }
    return {
      sourceOrigin: e.sourceOrigin.slice(0, MAX_SHOWN),
      kind: e.kind.slice(0, 16),
      token: e.token.slice(0, 64),
      readAt: typeof e.readAt === "number" && Number.isFinite(e.readAt) ? e.readAt : null,
    };
  });
}

/** @param {number | null} at */
function when(at) {
  return at === null ? "earlier" : new Date(at).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

/**
 * @param {{confirm: import("../shared/confirm-window.js").Confirm, enrolled?: () => Promise<unknown>}} deps
 *   enrolled: whether this browser holds an enrolled credential (the host's policy_get
 *   `enrolled`); asked only when the person must be asked; a failure refuses the call
 */
export function createProvenanceGate({ confirm, enrolled = async () => false }) {
  /** Each call's decision (and how a confirmation was given), for the reply (`withDecision`). */
  /** @type {WeakMap<object, {decision: ProvenanceDecision, path?: ProvenancePath}>} */
  const decided = new WeakMap();

  /** @param {string} why */
  async function isEnrolled(why) {
    let answer;
    try {
      answer = await enrolled();
    } catch {
      answer = undefined;
    }
    if (typeof answer !== "boolean") {
      throw new BridgeError(CODE.INTERNAL_ERROR, `the host could not say whether this browser confirms with a tap; ${why} was not done`);
    }
    return answer;
  }

  /**
   * Decide on the call's lineage against `target`, the origin the call really goes to or types
   * into (null: unknown, so all lineage is foreign). Resolves with the decision (null: no
   * lineage); rejects with provenance_refused, confirm_denied or confirm_timeout.
   * @param {Record<string, unknown>} args
   * @param {import("../handlers/support.js").Ctx} ctx
   * @param {string} tool
   * @param {string | null} target
   * @param {{address?: string, value?: string, doing?: string, request?: boolean}} [shown] the
   *   address, for a navigation's window (`request`: a request sent to it, whose body counts too);
   *   else the typed value (hashed for a tap, never shown) and what the call does (`doing`, e.g.
   *   "choose an option in …"; default "type into <target>")
   * @returns {Promise<ProvenanceDecision | null>}
   */
  async function check(args, ctx, tool, target, shown = {}) {
    const lineage = lineageOf(args);
    if (lineage === null) return null;
    const { evidence } = lineage;
    const foreign = evidence.filter((e) => e.sourceOrigin !== target);
    const pictured = foreign.length === 0 && ctx.policy.provenance === "strict"
      ? lineage.captures.filter((c) => c.sourceOrigin !== target) : [];
    // Captures alone decide nothing unless strict asks about one: no decision to report.
    if (evidence.length === 0 && pictured.length === 0) return null;
    /** @type {ProvenanceDecision} */
    let decision;
    /** @type {ProvenancePath | undefined} */
    let path;
    if (pictured.length > 0) {
      await askAboutCaptures(ctx, tool, target, pictured, shown);
      decision = "confirmed";
      path = "window";
    } else if (foreign.length === 0) {
      decision = "same_origin";
    } else {
      const mode = ctx.policy.provenance;
      const sources = [...new Set(foreign.map((e) => e.sourceOrigin))];
      const named = sources.map((s) => (s === "unknown" ? "a page whose site is not known" : `a page on ${s}`)).join(" and ");
      if (mode === "strict") {
        throw new BridgeError(CODE.PROVENANCE_REFUSED, shown.request
          ? `${named} suggested this request (its address or what it sends); policy provenance is strict`
          : shown.address !== undefined
          ? `${named} suggested this address; policy provenance is strict`
          : `this value came from ${named}, not from ${target ?? "the page typed into"}; policy provenance is strict`);
      }
      if (mode === "off") {
        decision = "off";
      } else {
        const first = foreign[0];
        const what = `(matched: ${first.kind} ${first.token}, read ${when(first.readAt)})`;
        const doing = (shown.doing ?? `type into ${target ?? "this page"}`).slice(0, MAX_SHOWN);
        const why = shown.request ? "sending a request a page suggested"
          : shown.address !== undefined ? "opening an address a page suggested" : "typing a value from another site's page";
        const tap = await isEnrolled(why);
        let detail = shown.request && shown.address !== undefined
          ? `${named[0].toUpperCase()}${named.slice(1)} suggested this request: ${shown.address.slice(0, MAX_SHOWN)} ${what}. `
            + `Let the agent send it${target ? ` to ${target}` : ""} with this tab's cookies? Only say yes if you asked for this.`
          : shown.address !== undefined
          ? `${named[0].toUpperCase()}${named.slice(1)} suggested this address: ${shown.address.slice(0, MAX_SHOWN)} ${what}. `
            + `Let the agent open it${target ? ` on ${target}` : ""}? Only say yes if you asked for this.`
          : `The agent wants to ${doing} a value that came from ${named} ${what}. `
            + "Only say yes if you meant that site's text to go here.";
        /** @type {{action: string, detail: string} | null} */
        let presence = null;
        if (tap) {
          if (target === null) throw new BridgeError(CODE.PROVENANCE_REFUSED, `the site this goes to is not known, so a tap cannot name it; ${why} was not done`);
          presence = { action: "confirm.provenance", detail: await provenanceTapDetail(target, shown.address ?? shown.value ?? "", sources) };
          detail += " Confirm with your security key.";
        }
        const answer = await confirm({
          kind: "action", tool, origin: target ?? "", client: ctx.client ?? null, detail, presence, source: named,
          timeoutMs: ctx.policy.confirmTimeoutMs,
        });
        refuseUnlessAllowed(answer, why);
        decision = "confirmed";
        path = tap ? "webauthn" : "window";
      }
    }
    decided.set(ctx, path === undefined ? { decision } : { decision, path });
    return decision;
  }

  /**
   * Under strict, a call aimed at another origin than a capture's: asked in the window, naming
   * the capture (an enrolled browser is refused: the host confirms no tap under strict, and its
   * tap is never downgraded to a click). Resolves when the person allowed it.
   * @param {import("../handlers/support.js").Ctx} ctx
   * @param {string} tool
   * @param {string | null} target
   * @param {Capture[]} pictured
   * @param {{address?: string, value?: string, doing?: string, request?: boolean}} shown
   */
  async function askAboutCaptures(ctx, tool, target, pictured, shown) {
    const named = pictured.map((c) => `a capture of ${c.sourceOrigin === "unknown" ? "a page whose site is not known" : c.sourceOrigin} taken ${when(c.readAt)}`).join(" and ");
    const what = shown.request ? "this request (its address or what it sends)"
      : shown.address !== undefined ? "this address" : "this value";
    const why = shown.request ? "sending a request that may have come from a capture"
      : shown.address !== undefined ? "opening an address that may have come from a capture" : "typing a value that may have come from a capture";
    if (await isEnrolled(why)) {
      throw new BridgeError(CODE.PROVENANCE_REFUSED, `${what} may have been read from ${named} (a screenshot or a saved file tabwarden cannot read); policy provenance is strict and this browser confirms with a tap, which strict does not take`);
    }
    const doing = (shown.doing ?? `type into ${target ?? "this page"}`).slice(0, MAX_SHOWN);
    const intro = `The agent earlier took ${named}: pictures or a file tabwarden cannot read, so it cannot tell whether ${what} came from there.`;
    const detail = shown.request && shown.address !== undefined
      ? `${intro} Let the agent send this request${target ? ` to ${target}` : ""} with this tab's cookies: ${shown.address.slice(0, MAX_SHOWN)}? Only say yes if you asked for this.`
      : shown.address !== undefined
      ? `${intro} Let the agent open ${shown.address.slice(0, MAX_SHOWN)}${target ? ` on ${target}` : ""}? Only say yes if you asked for this.`
      : `${intro} Let the agent ${doing} this value? Only say yes if you meant it to go here.`;
    const answer = await confirm({
      kind: "action", tool, origin: target ?? "", client: ctx.client ?? null, detail, presence: null,
      source: `possibly ${named}`, timeoutMs: ctx.policy.confirmTimeoutMs,
    });
    refuseUnlessAllowed(answer, why);
  }

  /**
   * Every route behind the gate, the one place a request's lineage is looked at: an action whose
   * rule is an address is decided here before its handler runs; one whose rule is "handler" is
   * decided by its handler (`check`); an action without a rule that carries lineage is refused
   * before its handler runs. Replies say what the gate decided (`provenance`) and, for a
   * confirmation, how it was given (`provenancePath`: "window" or "webauthn"), for the MCP
   * server's audit.
   * @param {Iterable<[string, import("./dispatch.js").Handler]>} routes
   * @returns {Array<[string, import("./dispatch.js").Handler]>}
   */
  function gated(routes) {
    return [...routes].map(([action, handler]) => [action, async (args, ctx) => {
      if (lineageOf(args) !== null) {
        const rule = LINEAGE_RULES.get(action);
        if (rule === undefined) {
          throw new BridgeError(CODE.PROVENANCE_REFUSED, `${action} carries page lineage but has no provenance rule; nothing was done`);
        }
        if (rule !== "handler") {
          const address = typeof args[rule.address] === "string" ? /** @type {string} */ (args[rule.address]) : "";
          await check(args, ctx, action, originOf(address), { address, request: rule.request === true });
        }
      }
      const result = await handler(args, ctx);
      const d = decided.get(ctx);
      if (d === undefined || !isPlainObject(result)) return result;
      return { ...result, provenance: d.decision, ...(d.path !== undefined ? { provenancePath: d.path } : {}) };
    }]);
  }

  return { check, gated };
}
