// clients-page.js — the options page's "MCP clients" section: lists the host's paired clients
// (label + exe, each with a free "Revoke" button, ids revoke-client-<n>: client_revoke) and recently
// seen spawners (each with a "Pair" button, ids pair-client-<n>), and pairs one with a tap: presence_begin {action: "pair_client", detail: canonical JSON {exe, label,
// sha256}} through the worker, WebAuthn get() here, presence_complete back (docs/protocol.md "More
// tap-authorised actions"). Pure: the document, runtime messaging and get() are injected
// (options.js wires the real ones). It must never put host-supplied text into the DOM as HTML
// (textContent only) and never pair anything without the host verifying the tap.

import { canonicalJson } from "../shared/canonical-json.js";
import { replaceChildrenIfChanged } from "./dom-keep.js";
import { CODE } from "../shared/error-codes.js";
import { refusalHint } from "./policy-page.js";
import { refusedText } from "../shared/presence-reasons.js";
import { setGlance } from "./glance.js";

/**
 * A client label from an executable path: its basename, lower-cased, every character outside
 * [a-z0-9-] turned into "-", trimmed of "-" at both ends, at most 32 characters; "client" if empty.
 * @param {string} exe
 */
export function defaultLabel(exe) {
  const base = String(exe).split(/[/\\]/).pop() ?? "";
  const label = base.toLowerCase().replace(/[^a-z0-9-]/g, "-").replace(/^-+/, "").slice(0, 32).replace(/-+$/, "");
  return label === "" ? "client" : label;
}

/**
 * @param {{doc: Document, api: {sendMessage: (msg: object) => Promise<any>,
 *   getAssertion: (optionsJSON: object) => Promise<object>}}} deps
 * @returns {Promise<{refresh: () => Promise<void>, pair: (n: number) => Promise<string>,
 *   revoke: (label: string) => Promise<string>}>}
 */
export async function runClientsPage({ doc, api }) {
  /** @param {string} id @param {string} text */
  const show = (id, text) => {
    const el = doc.getElementById(id);
    if (el) el.textContent = text;
  };
  /** The section's outcome, and for a refusal what to do about it (#clients-hint). @param {string} text */
  const say = (text) => {
    show("clients-status", text);
    show("clients-hint", refusalHint(text));
  };
  /** @type {Array<{path: string, sha256: string}>} */
  let recent = [];
  let busy = false;

  /** @param {string} tag @param {string} text */
  const node = (tag, text) => {
    const el = doc.createElement(tag);
    el.textContent = text;
    return el;
  };

  /** @param {any} r a clients_recent answer */
  function render(r) {
    const paired = doc.getElementById("clients-paired");
    const seen = doc.getElementById("clients-recent");
    if (!r || r.ok !== true) {
      replaceChildrenIfChanged(paired, "", () => []);
      replaceChildrenIfChanged(seen, "", () => []);
      recent = [];
      say(`Clients unavailable: ${String(r?.code ?? CODE.INTERNAL_ERROR)}`);
      setGlance(doc, "clients", "unknown", "Unknown", "the host did not answer");
      return;
    }
    /** @type {Array<{label?: unknown, exe?: unknown, sha256?: unknown} | null>} */
    const clients = Array.isArray(r.clients) ? r.clients : [];
    const labels = clients.map((c) => String(c?.label ?? "")).filter((l) => l !== "");
    setGlance(doc, "clients", clients.length === 0 ? "warn" : "good",
      clients.length === 0 ? "None paired" : `${clients.length} paired`,
      clients.length === 0 ? "pair one with `tabwarden pair-client`" : labels.slice(0, 3).join(", "));
    const pairedShown = clients.map((c) => [String(c?.label ?? ""), String(c?.exe ?? "")]);
    replaceChildrenIfChanged(paired, JSON.stringify(pairedShown), () => (clients.length === 0 ? [node("li", "none")]
      : clients.map((c, n) => {
        const label = String(c?.label ?? "");
        const li = node("li", `${label} — ${String(c?.exe ?? "")} `);
        const button = /** @type {HTMLButtonElement} */ (node("button", "Revoke"));
        button.id = `revoke-client-${n}`;
        button.type = "button";
        button.ariaLabel = `Revoke ${label}`; // several "Revoke" buttons: say which client
        button.addEventListener("click", () => {
          revoke(label).catch(() => {});
        });
        li.append(button);
        return li;
      })));
    const pairedKeys = new Set(clients.map((c) => `${String(c?.exe)}\n${String(c?.sha256)}`));
    /** @type {Array<{path?: unknown, sha256?: unknown} | null>} */
    const offered = Array.isArray(r.recent) ? r.recent : [];
    recent = offered
      .map((s) => ({ path: s?.path, sha256: s?.sha256 }))
      .filter(/** @returns {s is {path: string, sha256: string}} */ (s) =>
        typeof s.path === "string" && s.path !== "" && typeof s.sha256 === "string" && s.sha256 !== "")
      .filter((s) => !pairedKeys.has(`${s.path}\n${s.sha256}`));
    replaceChildrenIfChanged(seen, JSON.stringify(recent), () => (recent.length === 0 ? [node("li", "none")] : recent.map((s, n) => {
      const li = node("li", `${s.path} (${s.sha256.slice(0, 12)}…) `);
      const button = /** @type {HTMLButtonElement} */ (node("button", "Pair"));
      button.id = `pair-client-${n}`;
      button.type = "button";
      button.ariaLabel = `Pair ${s.path}`; // several "Pair" buttons: say which client each pairs
      button.addEventListener("click", () => {
        pair(n).catch(() => {});
      });
      li.append(button);
      return li;
    })));
  }

  async function refresh() {
    let r = null;
    try {
      r = await api.sendMessage({ type: "clients_recent" });
    } catch {
      r = null;
    }
    render(r);
  }

  /**
   * Pair recent spawner `n` with a tap.
   * @param {number} n
   * @returns {Promise<string>} the final status text
   */
  async function pair(n) {
    const s = recent[n];
    if (s === undefined) return `refused: ${CODE.BAD_REQUEST}`;
    if (busy) return "busy";
    busy = true;
    const action = "pair_client";
    /** @param {string} text */
    const done = (text) => {
      say(text);
      busy = false;
      return text;
    };
    /** @param {any} answer */
    const refused = (answer) => done(refusedText(answer?.code ?? CODE.INTERNAL_ERROR, answer?.reason));
    try {
      const detail = canonicalJson({ exe: s.path, label: defaultLabel(s.path), sha256: s.sha256 });
      say(`${action}: asking the host`);
      const begun = await api.sendMessage({ type: "presence_begin", action, detail });
      if (!begun || begun.ok !== true) return refused(begun);
      say(`${action}: touch your authenticator`);
      let response;
      try {
        const opts = begun.options && typeof begun.options === "object" ? begun.options : {};
        response = await api.getAssertion(opts.publicKey ?? opts);
      } catch {
        return done(refusedText(CODE.PRESENCE_REFUSED, "no_answer"));
      }
      const finished = await api.sendMessage({ type: "presence_complete", challengeId: begun.challengeId, action, detail, response });
      if (!finished || finished.ok !== true) return refused(finished);
      await refresh();
      return done(`done: ${action}`);
    } catch {
      return done(`refused: ${CODE.INTERNAL_ERROR}`);
    }
  }

  /**
   * Forget paired client `label` (free: narrowing needs no tap).
   * @param {string} label
   * @returns {Promise<string>} the final status text
   */
  async function revoke(label) {
    if (busy) return "busy";
    busy = true;
    say(`revoking ${label}…`);
    let text;
    try {
      const answer = await api.sendMessage({ type: "client_revoke", label });
      text = answer && answer.ok === true ? `done: revoked ${label}` : `refused: ${String(answer?.code ?? CODE.INTERNAL_ERROR)}`;
    } catch {
      text = `refused: ${CODE.INTERNAL_ERROR}`;
    }
    busy = false;
    await refresh();
    say(text);
    return text;
  }

  await refresh();
  return { refresh, pair, revoke };
}
