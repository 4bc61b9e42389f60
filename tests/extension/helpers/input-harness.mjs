// The trusted-input handlers (handlers/input.js: page_mouse, page_hover, page_dialog, page_drag)
// over fakes, called as the dispatcher calls them: the wire schema's check first (bad_request,
// nothing run), then the handler. One harness for input.test.mjs and drag.test.mjs.
import { BridgeError } from "../../../extension/shared/bridge-error.js";
import { createDialogs } from "../../../extension/worker/dialogs.js";
import { createGrace } from "../../../extension/worker/grace.js";
import { createOwnership } from "../../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../../extension/worker/tab-load.js";
import { inputHandlers } from "../../../extension/handlers/input.js";
import { fakeTimers, schemaChecked } from "./fakes.mjs";

export const ORIGIN = "http://127.0.0.1:8000";

/**
 * `points` answer the page's "point" op in order (the last one repeats); `tags` the "describe"
 * op's tag of the hit element; `failMove` makes a CDP move with the button held fail;
 * `provenance(confirm)` builds the provenance gate when the test needs one. `calls.sent` records
 * every CDP command, `calls.ops` every page op, `calls.confirm` every question asked.
 */
export function inputHarness({ points = [], tags = ["div"], decision = "allow", failMove = false, provenance = undefined } = {}) {
  const ownership = createOwnership();
  const dialogs = createDialogs();
  const tabs = new Map();
  const calls = { confirm: [], sent: [], ops: [] };
  const addTab = (id, url, session = "s1") => {
    tabs.set(id, { id, url, status: "complete" });
    if (session) ownership.claim(session, id);
  };
  const next = (list) => (list.length > 1 ? list.shift() : list[0]);
  const browser = {
    getTab: async (id) => {
      const t = tabs.get(id);
      if (!t) throw new Error("No tab with id");
      return { ...t };
    },
    executeFiles: async () => {},
    executeScriptArgs: async (_tabId, _func, [op, a]) => {
      calls.ops.push([op, a]);
      // The wait before an element action (handlers/ready.js): the element is actionable at once.
      if (op === "actionable") return [{ result: { ok: true } }];
      if (op === "describe") return [{ result: { tag: next(tags), kind: "plain", desc: "x" } }];
      return [{ result: next(points) }];
    },
  };
  const cdp = {
    ensure: async (ctx, tabId) => {
      if (ownership.owner(tabId) !== ctx.session) throw new BridgeError("tab_not_owned", "no");
    },
    send: async (_ctx, tabId, method, params) => {
      calls.sent.push([tabId, method, params]);
      if (failMove && params.type === "mouseMoved" && params.buttons === 1) throw new BridgeError("timeout", "the move timed out");
      return {};
    },
  };
  const ensureOrigin = async (url, ctx) => {
    const o = url && new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const confirm = async (req) => { calls.confirm.push(req); return decision; };
  const deps = {
    browser, ownership, loads: createLoadWatcher(fakeTimers()), ensureOrigin, confirm, grace: createGrace(),
    sleep: async () => {}, cdp, dialogs, ...(provenance ? { provenance: provenance(confirm) } : {}),
  };
  const routes = new Map(inputHandlers(deps));
  addTab(1, `${ORIGIN}/a`);
  const checked = schemaChecked((a) => routes.get(a));
  return { call: (action, args, ctx) => checked(action, args, ctx), calls, dialogs, addTab, tabs };
}

/** The page's answer to a "point" op: where it is, what is there, and the document's refs. */
export const pointAnswer = (over = {}) => ({
  x: 50, y: 20, covered: false, desc: 'button "Go"', hitTarget: 'button "Go"', kind: "plain", hitKind: "plain",
  url: `${ORIGIN}/a`, docToken: "d1", lastRef: 3, hitRef: "@e3", ...over,
});

/** The CDP mouse events a harness sent, in order. */
export const mouseEvents = (h) => h.calls.sent.filter(([, m]) => m === "Input.dispatchMouseEvent").map(([, , p]) => p);
