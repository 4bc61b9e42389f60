// handlers/eval-upload.js — page_eval and page_upload (served in the read family: handlers/read.js
// lists them), both through Chrome's debugger on the owned tab (docs/adr/0005, ADR 0013):
// page_eval runs the confirmed code with CDP Runtime.evaluate (an expression) or
// Runtime.callFunctionOn (a function, with the element `ref` names and JSON `args`) in the page's
// main world, so a strict Content-Security-Policy (no unsafe-eval) does not stop it; page_upload
// hands Chrome the real paths of files the MCP server checked in the upload sandbox
// (DOM.setFileInputFiles: Chrome reads them, no byte crosses the bridge), then reads back what
// the input holds. Thin glue over elementTools (handlers/interact.js: ownership, the origin gate,
// the page code that resolves an element) and createFrameWorlds (handlers/frames.js: the CDP
// session and tabwarden's isolated world of the element's document). It must never run either
// unless the signed policy enables it AND the person allowed that very call (the full code, the
// element and the args; the paths) in the confirm window — with presenceConfirm, a tap the host
// verified for it —, never run or upload after the tab left the origin the person was asked
// about, never act on a tab the session does not own, and never name a file to Chrome that did
// not come from the MCP server's sandbox check (`files` beside `paths`). Results leave through
// worker/dispatch.js, which masks every reply (worker/mask.js).

import { BridgeError } from "../shared/bridge-error.js";
import { canonicalJson } from "../shared/canonical-json.js";
import { refuseUnlessAllowed } from "../shared/confirm-window.js";
import { CODE } from "../shared/error-codes.js";
import { turnOnWords } from "../shared/policy-words.js";
import { originOf } from "../shared/origin.js";
import { isPlainObject } from "../shared/wire.js";
import { createFrameWorlds } from "./frames.js";
import { argTarget, elementTools } from "./interact.js";
import { ownedTab, sameOrigin } from "./support.js";

/** Most characters of JSON a page_eval result may hold (the reply must fit the bridge's frame). */
export const MAX_RESULT_CHARS = 4_000_000;
/** Longest quote of a thrown error. */
const MAX_THROWN = 300;
/** The CDP object group of one call's remote objects (released at its end). */
const GROUP = "tabwarden-eval-upload";
/** Runs in tabwarden's isolated world: the element page/locate.js resolves. */
const RESOLVE_FN = "function (t, d) { return globalThis.tabwardenLocate.resolve(t, d); }";
/** Runs on the element (isolated world): what kind of file input it is. */
const FILE_INPUT_FN = "function () { return this instanceof HTMLInputElement && this.type === 'file' ? { file: true, multiple: this.multiple === true } : { file: false }; }";
/** Runs on the element (isolated world): the files it holds, as the page sees them. */
const FILES_FN = "function () { return Array.from(this.files || [], (f) => ({ name: String(f.name), size: Number(f.size) })); }";
/** Runs on a result object (main world): itself, by value (CDP's serialiser, not the page's JSON). */
const SELF_FN = "function () { return this; }";

/**
 * @param {import("./support.js").Ctx} ctx
 * @param {string} key
 * @param {string} tool
 */
function requirePolicy(ctx, key, tool) {
  if (!ctx.policy.allows(key)) throw new BridgeError(CODE.POLICY_DENIED, `${tool} is off: the signed policy does not enable "${key}"; ${turnOnWords(key)}`);
}

/**
 * What a CDP RemoteObject is as a page_eval result: JSON when it is (objects and arrays by value,
 * through `byValue`), else its description (a function, a symbol, a node, NaN, a bigint).
 * @param {any} r
 * @param {(objectId: string) => Promise<unknown>} byValue
 * @returns {Promise<unknown>}
 */
export async function resultValue(r, byValue) {
  if (!isPlainObject(r) || r.type === "undefined" || r.subtype === "null") return null;
  if (typeof r.unserializableValue === "string") return r.unserializableValue;
  if (r.type === "string" || r.type === "number" || r.type === "boolean") return r.value ?? null;
  const described = typeof r.description === "string" ? r.description : String(r.type ?? "");
  if (r.type !== "object" || r.subtype === "node" || r.subtype === "proxy" || typeof r.objectId !== "string") return described;
  const v = await byValue(r.objectId);
  return v === undefined ? described : v;
}

/**
 * The thrown error's first line, as CDP reports it.
 * @param {any} details a CDP ExceptionDetails
 */
export function thrownText(details) {
  const d = isPlainObject(details) ? details : {};
  const ex = isPlainObject(d.exception) ? d.exception : {};
  const text = typeof ex.description === "string" ? ex.description : typeof ex.value === "string" ? ex.value : String(d.text ?? "an exception");
  return text.split("\n")[0].slice(0, MAX_THROWN);
}

/**
 * What a presence-confirm tap for page_eval signs (with the origin): everything the window shows.
 * @param {string} code the code, the element and the args, as shown
 */
const evalTap = (code) => ({ code });

/**
 * page_upload's files as the relay sent them: the checked real paths and each one's name and size.
 * @param {Record<string, unknown>} args
 * @returns {Array<{path: string, name: string, size: number}>}
 */
export function argFiles(args) {
  // Their types and counts are the wire schema's (worker/dispatch.js); that they pair up and are
  // absolute, one-line paths is read here.
  const paths = Array.isArray(args.paths) ? args.paths : [];
  const files = Array.isArray(args.files) ? args.files : [];
  if (paths.length === 0 || paths.length !== files.length) throw new BridgeError(CODE.BAD_REQUEST, "paths and the sandbox's files do not pair up");
  return paths.map((p, i) => {
    const f = files[i];
    if (typeof p !== "string" || !p.startsWith("/") || /[\0\r\n]/.test(p) || !isPlainObject(f) || typeof f.name !== "string" || !Number.isSafeInteger(f.size)) {
      throw new BridgeError(CODE.BAD_REQUEST, "each path must be an absolute path the upload sandbox checked");
    }
    if (!p.endsWith(`/${f.name}`)) throw new BridgeError(CODE.BAD_REQUEST, "a path does not end with its file's name");
    return { path: p, name: f.name, size: /** @type {number} */ (f.size) };
  });
}

/**
 * The page_eval and page_upload handler entries.
 * @param {import("./support.js").HandlerDeps & {browser: any, cdp?: import("../worker/debugger.js").DebuggerManager,
 *   docTokens?: import("./interact.js").DocTokens, callFrame?: WeakMap<object, number>, sleep?: (ms: number) => Promise<void>}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function evalUploadHandlers(deps) {
  const { confirm } = deps;
  const { open, page } = elementTools(/** @type {any} */ (deps));
  const sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  const worlds = createFrameWorlds({ cdp: deps.cdp, sleep });

  /** @returns {import("../worker/debugger.js").DebuggerManager} */
  const cdpOf = () => {
    if (deps.cdp === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "the debugger is not available");
    return deps.cdp;
  };

  /**
   * Ask the person about one call (every call, no grace); re-check ownership and origin after.
   * @param {import("./support.js").Ctx} ctx
   * @param {{tabId: number, origin: string, topOrigin: string, tool: string, detail: string, tapped: Record<string, string>}} q
   *   tapped: what a presence-confirm tap signs for, with the origin (docs/protocol.md)
   */
  async function confirmEveryCall(ctx, { tabId, origin, topOrigin, tool, detail, tapped }) {
    /** @type {{action: string, detail: string} | null} */
    let presence = null;
    if (ctx.policy.allows("presenceConfirm")) {
      try {
        presence = { action: tool === "page_eval" ? "confirm.eval" : "confirm.upload", detail: canonicalJson({ ...tapped, origin }) };
      } catch {
        throw new BridgeError(CODE.BAD_REQUEST, "the request cannot be shown for a tap (invalid text)");
      }
    }
    const decision = await confirm({ kind: "action", tool, origin, detail, presence, client: ctx.client, timeoutMs: ctx.policy.confirmTimeoutMs });
    refuseUnlessAllowed(decision, tool);
    const now = await ownedTab(deps, ctx, tabId);
    sameOrigin(now?.url, topOrigin);
  }

  /**
   * The element `target` names in frame `frameId`'s document, as a remote object in tabwarden's
   * isolated world there, with the CDP session that document lives in. The page code resolves it
   * first (its refusals: bad_ref, element_not_found, ambiguous…), which also names the document.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {number} frameId
   * @param {string} origin
   * @param {Record<string, unknown>} target
   * @param {string | null} docToken
   */
  async function element(ctx, tabId, frameId, origin, target, docToken) {
    const found = await page(ctx, tabId, "getState", { origin, target, docToken });
    const t = isPlainObject(found.target) ? found.target : {};
    const doc = typeof t.docToken === "string" ? t.docToken : null;
    if (doc === null) throw new BridgeError(CODE.INTERNAL_ERROR, "could not find the element's document; retry");
    // By the ref the page just gave it (the same element, not a new match of a selector).
    const by = typeof t.ref === "string" ? { ref: t.ref } : target;
    const world = await worlds.locate(ctx, tabId, doc, { topOnly: frameId === 0 });
    const r = await cdpOf().send(ctx, tabId, "Runtime.callFunctionOn", {
      executionContextId: world.contextId, functionDeclaration: RESOLVE_FN, arguments: [{ value: by }, { value: doc }], objectGroup: GROUP,
    }, "find the element", world.session);
    const objectId = r?.result?.objectId;
    if (r?.exceptionDetails !== undefined || typeof objectId !== "string") throw new BridgeError(CODE.BAD_REF, "the element left the page; take a new page_snapshot");
    return { objectId, session: world.session, found, desc: `${String(t.role ?? "element")} ${JSON.stringify(String(t.name ?? "").slice(0, 80))}` };
  }

  /**
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {string | undefined} session
   */
  const release = (ctx, tabId, session) => cdpOf().send(ctx, tabId, "Runtime.releaseObjectGroup", { objectGroup: GROUP }, "release the call's objects", session).catch(() => {});

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageEval(args, ctx) {
    requirePolicy(ctx, "eval", "page_eval");
    // code's length, ref's shape and args' count are the wire schema's (worker/dispatch.js).
    const code = String(args.code);
    const ref = typeof args.ref === "string" && args.ref !== "" ? args.ref : null;
    const fnArgs = Array.isArray(args.args) ? args.args : null;
    const asFunction = ref !== null || fnArgs !== null;
    const { tabId, tab, origin, docToken } = await open({ tabId: args.tabId }, ctx, "page_eval");
    const url = String(tab?.url ?? "").slice(0, 300);
    let on = "";
    if (ref !== null) {
      // Resolved before asking, so the window names the element (and a stale ref asks nothing).
      const t = (await page(ctx, tabId, "getState", { origin, target: { ref }, docToken })).target;
      on = `\n\nOn the element ${ref}: ${String(t?.role ?? "element")} ${JSON.stringify(String(t?.name ?? "").slice(0, 80))}`;
    }
    const withArgs = fnArgs !== null ? `\n\nWith the arguments: ${JSON.stringify(fnArgs)}` : "";
    await confirmEveryCall(ctx, {
      tabId, origin, topOrigin: origin, tool: "page_eval",
      detail: `Run this JavaScript in ${url}?\n\n${code}${on}${withArgs}`,
      tapped: evalTap(`${code}${on}${withArgs}`),
    });
    const cdp = cdpOf();
    await cdp.ensure(ctx, tabId);
    /** @type {string | undefined} */
    let session;
    let r;
    try {
      if (!asFunction) {
        r = await cdp.send(ctx, tabId, "Runtime.evaluate", { expression: code, awaitPromise: true, returnByValue: false, objectGroup: GROUP }, "run the code");
      } else {
        /** @type {Array<Record<string, unknown>>} */
        const callArgs = [];
        let self;
        if (ref !== null) {
          const el = await element(ctx, tabId, 0, origin, { ref }, tokenOf(ctx, tabId, 0, docToken));
          session = el.session;
          // The same node in the page's main world, where the code runs.
          const node = await cdp.send(ctx, tabId, "DOM.describeNode", { objectId: el.objectId }, "find the element", session);
          const backendNodeId = node?.node?.backendNodeId;
          if (!Number.isInteger(backendNodeId)) throw new BridgeError(CODE.BAD_REF, `${ref} left the page; take a new page_snapshot`);
          const main = await cdp.send(ctx, tabId, "DOM.resolveNode", { backendNodeId, objectGroup: GROUP }, "find the element", session);
          self = main?.object?.objectId;
          if (typeof self !== "string") throw new BridgeError(CODE.BAD_REF, `${ref} left the page; take a new page_snapshot`);
          callArgs.push({ objectId: self });
        } else {
          const g = await cdp.send(ctx, tabId, "Runtime.evaluate", { expression: "globalThis", objectGroup: GROUP }, "find the page's window");
          self = g?.result?.objectId;
          if (typeof self !== "string") throw new BridgeError(CODE.INTERNAL_ERROR, "could not reach the page's window; retry");
        }
        for (const v of fnArgs ?? []) callArgs.push({ value: v });
        r = await cdp.send(ctx, tabId, "Runtime.callFunctionOn", {
          objectId: self, functionDeclaration: code, arguments: callArgs, awaitPromise: true, returnByValue: false, objectGroup: GROUP,
        }, "run the code", session);
      }
      if (r?.exceptionDetails !== undefined) {
        const thrown = thrownText(r.exceptionDetails);
        if (asFunction && /does not evaluate to a function/i.test(thrown + String(r.exceptionDetails.text ?? ""))) {
          throw new BridgeError(CODE.SCRIPT_ERROR, "with ref or args, code must be a function, e.g. (el, n) => el.textContent.slice(0, n)");
        }
        throw new BridgeError(CODE.SCRIPT_ERROR, `the code threw: ${thrown}`);
      }
      const value = await resultValue(r?.result, async (objectId) => {
        try {
          const v = await cdp.send(ctx, tabId, "Runtime.callFunctionOn", { objectId, functionDeclaration: SELF_FN, returnByValue: true }, "read the code's result", session);
          return v?.exceptionDetails === undefined ? v?.result?.value : undefined;
        } catch (err) {
          if (err instanceof BridgeError && err.code !== CODE.INTERNAL_ERROR) throw err;
          return undefined; // not serialisable by value (a cycle, a host object): its description
        }
      });
      // The page must not have left the origin the person was asked about meanwhile.
      const after = await ownedTab(deps, ctx, tabId);
      sameOrigin(after?.url, origin);
      const json = JSON.stringify(value ?? null);
      if (json.length > MAX_RESULT_CHARS) {
        throw new BridgeError(CODE.RESULT_TOO_LARGE, `the result is ${json.length} characters of JSON; at most ${MAX_RESULT_CHARS} can be returned`);
      }
      return { result: value ?? null };
    } finally {
      await release(ctx, tabId, undefined);
      if (session !== undefined) await release(ctx, tabId, session);
    }
  }

  /**
   * The tab's latest snapshot token for frame `frameId` in this session (a page op may have
   * named the element since the call opened), else `fallback`.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {number} frameId
   * @param {string | null} fallback
   */
  function tokenOf(ctx, tabId, frameId, fallback) {
    const saved = deps.docTokens?.get(tabId);
    if (saved === undefined || saved.session !== ctx.session) return fallback;
    return frameId === 0 ? saved.token : saved.frames?.get(frameId) ?? null;
  }

  /**
   * The element must be a file input, taking several files when `count` > 1; bad_request otherwise.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {{objectId: string, session: string | undefined}} el
   * @param {number} count
   */
  async function fileInputFor(ctx, tabId, el, count) {
    const kind = await cdpOf().send(ctx, tabId, "Runtime.callFunctionOn", { objectId: el.objectId, functionDeclaration: FILE_INPUT_FN, returnByValue: true }, "look at the file input", el.session);
    const k = kind?.result?.value;
    if (!isPlainObject(k) || k.file !== true) throw new BridgeError(CODE.BAD_REQUEST, "the target is not an <input type=file>");
    if (count > 1 && k.multiple !== true) throw new BridgeError(CODE.BAD_REQUEST, `the file input takes one file (it has no multiple attribute); ${count} were given`);
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageUpload(args, ctx) {
    requirePolicy(ctx, "upload", "page_upload");
    const files = argFiles(args);
    const target = /** @type {Record<string, unknown>} */ (argTarget(args));
    const { tabId, tab, origin, docToken, frameId } = await open(args, ctx, "page_upload");
    const topOrigin = String(originOf(tab?.url));
    // Found and judged before asking (and again after: the page may change it meanwhile): a
    // wrong element, or several files for a single-file input, asks nothing.
    const probe = await page(ctx, tabId, "getState", { origin, target, docToken });
    if (probe.tag !== "input" || probe.type !== "file") throw new BridgeError(CODE.BAD_REQUEST, "the target is not an <input type=file>");
    const cdp = cdpOf();
    await cdp.ensure(ctx, tabId);
    const before = await element(ctx, tabId, frameId, origin, target, tokenOf(ctx, tabId, frameId, docToken));
    try {
      await fileInputFor(ctx, tabId, before, files.length);
    } finally {
      await release(ctx, tabId, before.session);
    }
    const url = String(tab?.url ?? "").slice(0, 300);
    const into = frameId === 0 ? `a file field of ${url}` : `a file field of a frame on ${origin}, inside ${url}`;
    const list = files.map((f) => `${f.path} (${f.size} bytes)`).join("\n");
    await confirmEveryCall(ctx, {
      tabId, origin, topOrigin, tool: "page_upload",
      detail: `Upload ${files.length === 1 ? "this file" : `these ${files.length} files`} into ${into}?\n\n${list}`,
      tapped: { path: files.map((f) => f.path).join("\n") },
    });
    const el = await element(ctx, tabId, frameId, origin, target, tokenOf(ctx, tabId, frameId, docToken));
    try {
      await fileInputFor(ctx, tabId, el, files.length);
      await cdp.send(ctx, tabId, "DOM.setFileInputFiles", { files: files.map((f) => f.path), objectId: el.objectId }, "set the files", el.session);
      const held = await cdp.send(ctx, tabId, "Runtime.callFunctionOn", { objectId: el.objectId, functionDeclaration: FILES_FN, returnByValue: true }, "read the files back", el.session);
      const seen = Array.isArray(held?.result?.value) ? held.result.value : [];
      const same = seen.length === files.length && files.every((f, i) => isPlainObject(seen[i]) && seen[i].name === f.name && seen[i].size === f.size);
      if (!same) {
        // Not what the sandbox checked (the file changed since, or Chrome could not read it).
        await cdp.send(ctx, tabId, "DOM.setFileInputFiles", { files: [], objectId: el.objectId }, "clear the files", el.session).catch(() => {});
        throw new BridgeError(CODE.POLICY_DENIED, "the files Chrome read differ from the ones the sandbox checked (changed since, or unreadable by Chrome); the file input was cleared");
      }
      return { uploaded: true, files: files.map((f) => ({ name: f.name, size: f.size })) };
    } finally {
      await release(ctx, tabId, el.session);
    }
  }

  return [
    ["page_eval", pageEval],
    ["page_upload", pageUpload],
  ];
}
