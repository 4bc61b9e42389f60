import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createDialogs } from "../../extension/worker/dialogs.js";
import { createGrace } from "../../extension/worker/grace.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { DRAG_STEPS, inputHandlers } from "../../extension/handlers/input.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const ORIGIN = "http://127.0.0.1:8000";
const POLICY = { origins: [ORIGIN], confirm: ["link_click", "submit"], clickGraceSeconds: 0, confirmTimeoutSeconds: 30 };
const S1 = { session: "s1", policy: parsePolicy(POLICY), deadline: Date.now() + 60_000 };

/**
 * page_drag over fakes: `points` answer the page's "point" op in order (the end is located
 * first, then the start; the last answer repeats), `tags` the "describe" op's tag of the hit
 * element; `failMove` makes the CDP move with the button held fail.
 */
function harness({ points = [], tags = ["div"], decision = "allow", failMove = false } = {}) {
  const ownership = createOwnership();
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
    sleep: async () => {}, cdp, dialogs: createDialogs(),
  };
  const routes = new Map(inputHandlers(deps));
  addTab(1, `${ORIGIN}/a`);
  const checked = schemaChecked((a) => routes.get(a));
  return { call: (args, ctx = S1) => checked("page_drag", args, ctx), calls, addTab };
}

const at = (over = {}) => ({
  x: 50, y: 20, covered: false, desc: 'listitem "Alpha"', hitTarget: 'listitem "Alpha"', kind: "plain", hitKind: "plain",
  url: `${ORIGIN}/a`, docToken: "d1", lastRef: 3, hitRef: "@e3", ...over,
});
const END = at({ x: 50, y: 80, desc: 'listitem "Gamma"', hitTarget: 'listitem "Gamma"', hitRef: "@e5" });
const mouseEvents = (h) => h.calls.sent.filter(([, m]) => m === "Input.dispatchMouseEvent").map(([, , p]) => p);

test("page_drag: moves to the start, presses, moves in steps with the button held, releases at the end", async () => {
  const h = harness({ points: [END, at()] });
  const r = await h.call({ tabId: 1, text: "Alpha", to: { text: "Gamma" }, steps: 4 });
  assert.deepEqual(r, {
    dragged: true, navigated: false, url: `${ORIGIN}/a`,
    start: { x: 50, y: 20, covered: false, hitTarget: 'listitem "Alpha"', hitRef: "@e3", element: 'listitem "Alpha"', frame: 0 },
    end: { x: 50, y: 80, covered: false, hitTarget: 'listitem "Gamma"', hitRef: "@e5", element: 'listitem "Gamma"', frame: 0 },
  });
  assert.deepEqual(mouseEvents(h).map((e) => [e.type, e.x, e.y, e.buttons]), [
    ["mouseMoved", 50, 20, 0], ["mousePressed", 50, 20, 1],
    ["mouseMoved", 50, 35, 1], ["mouseMoved", 50, 50, 1], ["mouseMoved", 50, 65, 1], ["mouseMoved", 50, 80, 1],
    ["mouseReleased", 50, 80, 0],
  ]);
  assert.deepEqual(h.calls.confirm, []);
  const plain = harness({ points: [END, at()] });
  await plain.call({ tabId: 1, x: 50, y: 20, to: { x: 50, y: 80 } });
  assert.equal(mouseEvents(plain).length, DRAG_STEPS + 3);
});

test("page_drag: a covered end, or an end over an embedded frame, presses nothing", async () => {
  const covered = harness({ points: [END, at({ covered: true, hitTarget: 'div "veil"' })] });
  await assert.rejects(covered.call({ tabId: 1, text: "Alpha", to: { text: "Gamma" } }),
    (e) => e.code === "element_covered" && /start listitem "Alpha" is covered by div "veil"/.test(e.message));
  assert.deepEqual(covered.calls.sent, []);
  const overFrame = harness({ points: [END], tags: ["iframe"] });
  await assert.rejects(overFrame.call({ tabId: 1, text: "Alpha", to: { x: 300, y: 300 } }),
    (e) => e.code === "bad_request" && /to\.frame/.test(e.message));
  assert.deepEqual(overFrame.calls.sent, []);
});

test("page_drag: a submit at either end asks, naming both ends; denied, nothing is pressed", async () => {
  const h = harness({ points: [at({ kind: "submit", desc: 'button "Send"', x: 90, y: 90 }), at()], decision: "deny" });
  await assert.rejects(h.call({ tabId: 1, text: "Alpha", to: { selector: "#send" } }), (e) => e.code === "confirm_denied");
  assert.equal(h.calls.confirm.length, 1);
  assert.match(h.calls.confirm[0].detail, /^Drag listitem "Alpha" on http:\/\/127\.0\.0\.1:8000 to button "Send"\? A submit button/);
  assert.equal(h.calls.confirm[0].tool, "page_drag");
  assert.deepEqual(h.calls.sent, []);
  // The page moves an end while the person looks: refused, nothing pressed.
  const moved = harness({ points: [at({ kind: "link", desc: 'link "Ad"' }), at(), at({ kind: "link", x: 400 }), at()] });
  await assert.rejects(moved.call({ tabId: 1, text: "Alpha", to: { text: "Ad" } }), (e) => e.code === "policy_denied");
  assert.deepEqual(moved.calls.sent, []);
});

test("page_drag: a move that fails still releases the button, and its error is the answer", async () => {
  const h = harness({ points: [END, at()], failMove: true });
  await assert.rejects(h.call({ tabId: 1, text: "Alpha", to: { text: "Gamma" } }), (e) => e.code === "timeout");
  assert.deepEqual(mouseEvents(h).map((e) => e.type), ["mouseMoved", "mousePressed", "mouseMoved", "mouseReleased"]);
});

test("page_drag: ownership and the origin gate first; bad arguments refused before the page", async () => {
  const h = harness({ points: [at()] });
  h.addTab(2, `${ORIGIN}/b`, "s2");
  h.addTab(3, "http://evil.test/", "s1");
  await assert.rejects(h.call({ tabId: 2, text: "A", to: { text: "B" } }), (e) => e.code === "tab_not_owned");
  await assert.rejects(h.call({ tabId: 3, text: "A", to: { text: "B" } }), (e) => e.code === "origin_not_approved");
  for (const args of [{ text: "A" }, { text: "A", to: {} }, { text: "A", to: { x: 1 } }, { text: "A", to: { text: "B", x: 1, y: 2 } },
    { text: "A", to: { text: "B", selector: "#b" } }, { text: "A", to: { text: "B" }, steps: 0 }, { text: "A", to: { text: "B" }, steps: 51 },
    { text: "A", to: { text: "B", frame: -1 } }, { text: "A", to: { text: "B", force: true } }, { to: { text: "B" } }, { text: "A", to: "B" }]) {
    await assert.rejects(h.call({ tabId: 1, ...args }), (e) => e.code === "bad_request", JSON.stringify(args));
  }
  assert.deepEqual(h.calls.ops, []);
  assert.deepEqual(h.calls.sent, []);
});
