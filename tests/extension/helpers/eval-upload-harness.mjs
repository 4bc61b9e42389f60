// A fake tab for handlers/eval-upload.js: the page code (callPageOp's getState, resolving a ref or
// a selector in a tiny DOM) and a fake Chrome debugger that runs Runtime.evaluate /
// Runtime.callFunctionOn on Node values, finds tabwarden's isolated world by its RefStore token,
// maps an element between the worlds (DOM.describeNode / DOM.resolveNode) and holds the files
// DOM.setFileInputFiles set (their sizes from a fake file system).
import { BridgeError } from "../../../extension/shared/bridge-error.js";
import { createOwnership } from "../../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../../extension/worker/tab-load.js";
import { evalUploadHandlers } from "../../../extension/handlers/eval-upload.js";
import { fakeTimers, schemaChecked } from "./fakes.mjs";

export const OK = "http://127.0.0.1:8000";
const DOC = "doc-1";

/**
 * A CDP RemoteObject of a Node value (objects kept by id for later calls).
 * @param {Map<string, unknown>} objects
 * @param {unknown} v
 */
function remote(objects, v) {
  if (v === undefined) return { type: "undefined" };
  if (v === null) return { type: "object", subtype: "null", value: null };
  if (typeof v === "bigint") return { type: "bigint", unserializableValue: `${v}n`, description: `${v}n` };
  if (typeof v === "number" && !Number.isFinite(v)) return { type: "number", unserializableValue: String(v), description: String(v) };
  if (typeof v !== "object" && typeof v !== "function") return { type: typeof v, value: v };
  const objectId = `obj-${objects.size + 1}`;
  objects.set(objectId, v);
  if (typeof v === "function") return { type: "function", objectId, description: String(v) };
  const node = /** @type {any} */ (v).nodeName !== undefined;
  return { type: "object", ...(node ? { subtype: "node" } : {}), objectId, description: node ? `${/** @type {any} */ (v).nodeName}#x` : "Object" };
}

/** @param {unknown} err */
const exception = (err) => ({ exceptionDetails: { text: "Uncaught", exception: { description: `${String(err instanceof Error ? `${err.name}: ${err.message}` : err)}\n    at <anonymous>:1:1` } } });

export function harness({ decision = "allow", files = new Map() } = {}) {
  const ownership = createOwnership();
  const tabs = new Map();
  const calls = { confirm: [], cdp: [], pageOps: [] };
  let answer = decision;
  let onConfirm = () => {};
  /** The page's main world: what Runtime.evaluate sees as globals, and its elements. */
  const page = { title: "Shop", marker: "untouched", el: { nodeName: "P", textContent: "Price: 12", dataset: {} } };
  /** The file input: what it holds, and whether it takes several files. */
  const input = { multiple: true, files: [] };
  /** main-world and isolated-world objects by objectId */
  const objects = new Map();
  /** @type {Set<(method: string, params: any, session?: string) => void>} */
  const listeners = new Set();
  const elements = {
    "#file": { tag: "input", type: "file", role: "button", name: "Choose file", kind: "file" },
    "#pw": { tag: "input", type: "password", role: "textbox", name: "Password", kind: "other" },
    "#p": { tag: "p", type: "", role: "paragraph", name: "Price: 12", kind: "p" },
  };
  const refs = { "@e1": "#file", "@e2": "#pw", "@e3": "#p" };
  const refOf = Object.fromEntries(Object.entries(refs).map(([r, s]) => [s, r]));

  const browser = {
    getTab: async (id) => { const t = tabs.get(id); if (!t) throw new Error("No tab"); return { ...t }; },
    executeFiles: async () => [],
    getAllFrames: async (tabId) => [{ frameId: 0, parentFrameId: -1, url: tabs.get(tabId).url }],
    executeScriptArgs: async (tabId, func, args) => {
      const [op, a] = args;
      calls.pageOps.push([op, a]);
      if (a.origin !== new URL(tabs.get(tabId).url).origin) return [{ result: { error: { code: "origin_not_approved", message: "the page left the approved origin" } } }];
      const t = a.target ?? {};
      const sel = typeof t.ref === "string" ? refs[t.ref] : t.selector;
      if (typeof t.ref === "string" && (a.docToken !== DOC || sel === undefined)) return [{ result: { error: { code: "bad_ref", message: `${t.ref} is from an earlier page; take a new page_snapshot` } } }];
      const el = elements[sel];
      if (el === undefined) return [{ result: { error: { code: "element_not_found", message: "no element matches" } } }];
      return [{ result: { tag: el.tag, type: el.type, target: { ref: refOf[sel], role: el.role, name: el.name, docToken: DOC, lastRef: 3 } } }];
    },
  };

  /** @param {string} objectId */
  const valueOf = (objectId) => objects.get(objectId);

  const cdp = {
    async ensure(_ctx, tabId) {
      if (ownership.owner(tabId) === null) throw new BridgeError("tab_not_owned", "not owned");
    },
    listen(_tabId, fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    children: () => [],
    async send(_ctx, tabId, method, params = {}, _what, session) {
      if (ownership.owner(tabId) === null) throw new BridgeError("tab_not_owned", "not owned");
      calls.cdp.push([method, structuredClone(params)]);
      const p = /** @type {any} */ (params);
      if (method === "Runtime.enable") {
        for (const fn of listeners) fn("Runtime.executionContextCreated", { context: { id: 1, origin: OK, auxData: { type: "default", frameId: "F" } } }, session);
        for (const fn of listeners) fn("Runtime.executionContextCreated", { context: { id: 7, origin: "chrome-extension://abc", auxData: { type: "isolated", frameId: "F" } } }, session);
        return {};
      }
      if (method === "Runtime.disable" || method === "Runtime.releaseObjectGroup") return {};
      if (method === "Runtime.evaluate") {
        if (p.expression === "globalThis") return { result: remote(objects, page) };
        try {
          const fn = new Function("page", `with (page) { return (${p.expression}); }`);
          let v = fn(page);
          if (p.awaitPromise && v instanceof Promise) v = await v;
          return { result: remote(objects, v) };
        } catch (err) {
          return exception(err);
        }
      }
      if (method === "DOM.describeNode") return p.objectId === "iso-el" ? { node: { backendNodeId: 42 } } : {};
      if (method === "DOM.resolveNode") return p.backendNodeId === 42 ? { object: remote(objects, page.el) } : {};
      if (method === "DOM.setFileInputFiles") {
        input.files = p.files.map((/** @type {string} */ path) => ({ name: path.slice(path.lastIndexOf("/") + 1), size: files.get(path) ?? 0 }));
        return {};
      }
      if (method === "Runtime.callFunctionOn") {
        const decl = String(p.functionDeclaration);
        if (decl.includes("__tabwardenRefs")) return { result: { value: p.executionContextId === 7 ? DOC : null } };
        if (decl.includes("tabwardenLocate.resolve")) {
          const t = p.arguments[0].value;
          const sel = typeof t.ref === "string" ? refs[t.ref] : t.selector;
          return p.arguments[1].value === DOC && elements[sel] !== undefined ? { result: { type: "object", subtype: "node", objectId: "iso-el" } } : exception(new Error("bad_ref"));
        }
        if (decl.includes("this.type === 'file'")) return { result: { value: { file: true, multiple: input.multiple } } };
        if (decl.includes("this.files")) return { result: { value: input.files.map((f) => ({ ...f })) } };
        if (decl === "function () { return this; }") {
          const v = valueOf(p.objectId);
          return { result: { type: "object", value: JSON.parse(JSON.stringify(v)) } };
        }
        // The agent's function, on the page's window or element.
        try {
          const f = (0, eval)(`(${decl})`);
          if (typeof f !== "function") throw new TypeError("Given expression does not evaluate to a function");
          const args = (p.arguments ?? []).map((/** @type {any} */ a) => (a.objectId !== undefined ? valueOf(a.objectId) : a.value));
          let v = f.apply(valueOf(p.objectId), args);
          if (p.awaitPromise && v instanceof Promise) v = await v;
          return { result: remote(objects, v) };
        } catch (err) {
          return exception(err);
        }
      }
      throw new Error(`unexpected CDP ${method}`);
    },
  };

  const ensureOrigin = async (url, ctx) => {
    const o = url && new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const confirm = async (req) => { calls.confirm.push(req); onConfirm(req); return answer; };
  const docTokens = new Map();
  const routes = new Map(evalUploadHandlers({
    browser, ownership, loads: createLoadWatcher(fakeTimers()), ensureOrigin, confirm, cdp, docTokens, callFrame: new WeakMap(), sleep: async () => {},
  }));
  const open = (id, url, session = "s1") => {
    tabs.set(id, { id, windowId: 7, active: false, url, title: `T ${url}`, status: "complete" });
    if (session) ownership.claim(session, id);
    if (session === "s1") docTokens.set(id, { session: "s1", token: DOC, floor: 3 });
  };
  const checked = schemaChecked((a) => routes.get(a));
  return {
    call: (action, args, ctx) => checked(action, args, ctx),
    calls, tabs, page, input, routes, open,
    set decision(d) { answer = d; },
    set onConfirm(fn) { onConfirm = fn; },
  };
}
