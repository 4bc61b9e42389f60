import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { createGrace } from "../../extension/worker/grace.js";
import { createProvenanceGate } from "../../extension/worker/provenance-gate.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { ABORT_SETTLE_MS, createLoadWatcher } from "../../extension/worker/tab-load.js";
import { interactHandlers, withAftermath } from "../../extension/handlers/interact.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";
import { FakeDocument, runIn } from "./helpers/fake-dom.mjs";
import { PAGE_FILES, callPageOp } from "./helpers/page-code.mjs";
import { parsePolicy } from "../../extension/worker/policy.js";

const ORIGIN = "http://127.0.0.1:8000";
const POLICY = {
  origins: [ORIGIN], confirm: ["link_click", "press", "select", "submit", "tab_close"],
  clickGraceSeconds: 30, confirmTimeoutSeconds: 30, passwordFill: false,
};
const S1 = { session: "s1", policy: parsePolicy(POLICY) };
const S2 = { session: "s2", policy: parsePolicy(POLICY) };
const withPolicy = (over) => ({ session: "s1", policy: parsePolicy({ ...POLICY, ...over }) });

/** The page every url shows: a login form, a link, a plain button. */
function build(url) {
  const doc = new FakeDocument(url, `T ${url}`);
  const form = doc.h("form", { id: "f" },
    doc.h("input", { id: "user", name: "user" }),
    doc.h("input", { id: "pw", type: "password", placeholder: "Password" }),
    doc.h("button", { id: "go" }, "Sign in"));
  const sel = doc.h("select", { id: "s" }, doc.h("option", { value: "a" }, "Apple"), doc.h("option", { value: "b" }, "Banana"));
  doc.body.append(form, doc.h("a", { id: "next", href: "/next" }, "Next page"), doc.h("a", { id: "evil", href: "http://evil.test/" }, "Evil"),
    doc.h("button", { id: "menu", type: "button" }, "Menu"), sel, doc.h("input", { id: "c", type: "checkbox" }));
  return doc;
}

function harness({ decision = "allow", filesFail = false, navigatingBetween = 0, stuckOn = "", cdp = undefined, provenance = undefined,
  popups = undefined, blockedWindowOn = "", becomesDownload = "" } = {}) {
  const timers = fakeTimers();
  const ownership = createOwnership();
  const loads = createLoadWatcher(timers);
  const grace = createGrace();
  const clock = { now: 1_000_000 };
  const tabs = new Map();
  const calls = { confirm: [], script: [], gate: [], files: [], getTab: 0 };
  const addTab = (id, url, session = "s1") => {
    tabs.set(id, { id, url, title: `T ${url}`, status: "complete", doc: build(url) });
    if (session) ownership.claim(session, id);
  };
  const browser = {
    getTab: async (id) => {
      calls.getTab += 1;
      const t = tabs.get(id);
      if (!t) throw new Error("No tab with id");
      const { doc, ...rest } = t;
      return { ...rest };
    },
    // The page code is loaded into Node's global scope once (helpers/page-code.mjs); this only
    // records that each call injected it first, as Chrome needs.
    executeFiles: async (tabId, files) => {
      calls.files.push([tabId, [...files]]);
      if (filesFail) throw new Error("Cannot access contents of the page");
    },
    // `navigatingBetween` calls land in a document committed after the files went in: no page code there.
    notInstalledLeft: navigatingBetween,
    executeScriptArgs: async (tabId, func, args, world) => {
      assert.equal(world, "ISOLATED");
      assert.equal(func, callPageOp);
      assert.deepEqual(calls.files.at(-1), [tabId, [...PAGE_FILES]], "the page files are injected before every call");
      calls.files.push("used");
      if (browser.notInstalledLeft > 0) {
        browser.notInstalledLeft -= 1;
        calls.script.push([tabId, "notInstalled"]);
        return [{ result: { notInstalled: true } }];
      }
      calls.script.push([tabId, args[0]]);
      if (args[0] === stuckOn) return new Promise(() => {}); // a page blocked (a JS dialog): never answers
      const t = tabs.get(tabId);
      const before = t.doc.log.length;
      const result = await runIn(t.doc, func, JSON.parse(JSON.stringify(args)));
      navigates(tabId, t, before);
      return [{ result: JSON.parse(JSON.stringify(result)) }];
    },
  };
  /** A link click or a form submission since log entry `before` starts a navigation of the tab. */
  function navigates(tabId, t, before) {
      const nav = t.doc.log.slice(before).find((l) => l[0] === "navigate" || l[0] === "submit");
      if (nav && nav[0] === "navigate" && nav[1].startsWith("#")) {
        t.url = new URL(nav[1], t.url).href; // same-document: the url moves, nothing loads
      } else if (nav && becomesDownload !== "" && nav[1] === becomesDownload) {
        // As Chrome: the navigation turns into a download, ends net::ERR_ABORTED, and the tab
        // never leaves "complete" (no tabs.onUpdated at all).
        const url = new URL(nav[1], t.url).href;
        setImmediate(() => {
          loads.started({ tabId, frameId: 0, url });
          loads.failed({ tabId, frameId: 0, url, error: "net::ERR_ABORTED" });
          timers.advance(ABORT_SETTLE_MS);
        });
      } else if (nav) {
        const next = nav[0] === "navigate" ? new URL(nav[1], t.url).href : t.url;
        Object.assign(t, { status: "loading", url: next });
        setImmediate(() => {
          Object.assign(t, { status: "complete", title: `T ${next}`, doc: build(next) });
          loads.updated(tabId, { status: "complete" });
        });
      }
  }
  const ensureOrigin = async (url, ctx, tool) => {
    calls.gate.push([url, tool]);
    const o = url && new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const confirm = async (req) => { calls.confirm.push(req); return typeof decision === "function" ? decision(req) : decision; };
  const inner = cdp === undefined ? undefined : cdp(tabs);
  // Chrome's debugger: trusted mouse input clicks whatever is at the point of the fake page
  // (page_click); anything else goes to the test's own fake, if it has one.
  calls.mouse = [];
  calls.keys = [];
  const heard = new Set();
  const debuggerFake = {
    ensure: async () => {},
    listen: (tabId, fn) => {
      const l = { tabId, fn };
      heard.add(l);
      const off = inner?.listen?.(tabId, fn);
      return () => { heard.delete(l); off?.(); };
    },
    send: async (ctx, tabId, method, params, what, session) => {
      if (method === "Input.dispatchKeyEvent") {
        calls.keys.push([tabId, params.type, params.key]);
        // Enter on the focused element, as a browser does it: a link or button is clicked, a
        // field submits its form (through its submit button when it has one).
        if (params.key === "Enter" && (params.type === "rawKeyDown" || params.type === "keyDown")) {
          const t = tabs.get(tabId);
          const before = t.doc.log.length;
          const el = t.doc.activeElement;
          if (el?.tagName === "A" || el?.tagName === "BUTTON") el.click({ trusted: true });
          else if (el?.tagName === "INPUT" && el.form) {
            const submit = el.form.querySelectorAll("button").find((b) => b.type === "submit");
            if (submit) submit.click({ trusted: true });
            else el.form.requestSubmit();
          }
          navigates(tabId, t, before);
        }
        return {};
      }
      if (method !== "Input.dispatchMouseEvent") {
        if (inner === undefined) throw new BridgeError("internal_error", "the debugger is not available");
        return inner.send(ctx, tabId, method, params, what, session);
      }
      calls.mouse.push([tabId, params.type]);
      if (params.type === "mouseReleased") {
        const t = tabs.get(tabId);
        const before = t.doc.log.length;
        await runIn(t.doc, () => t.doc.clickAt(params.x, params.y), []);
        navigates(tabId, t, before);
        // The clicked element's handler opens a window Chrome announces without a gesture.
        if (blockedWindowOn !== "" && t.doc.lastMeasured?.getAttribute("id") === blockedWindowOn) {
          for (const l of heard) if (l.tabId === tabId) l.fn("Page.windowOpen", { url: `${ORIGIN}/pop`, userGesture: false });
        }
      }
      return {};
    },
    ...(inner === undefined ? {} : { command: inner.command, children: inner.children }),
  };
  const deps = { browser, ownership, loads, ensureOrigin, confirm, grace, now: () => clock.now, cdp: debuggerFake, sleep: async () => {},
    ...(popups ? { popups } : {}),
    ...(provenance ? { provenance: provenance(confirm) } : {}) };
  const routes = withAftermath(deps, new Map(interactHandlers(deps)));
  const checked = schemaChecked((a) => routes.get(a));
  const raw = (action, args, ctx = S1) => checked(action, args, ctx);
  // Every element action now reports `waitedMs` (the wait before it: handlers/ready.js). It is
  // checked here to be a whole number of ms and left out of the shapes below; its own test is
  // "an element action waits until its element is actionable, and says how long".
  const call = async (action, args, ctx = S1) => {
    const r = await raw(action, args, ctx);
    if (r === null || typeof r !== "object" || !("waitedMs" in r)) return r;
    const { waitedMs, ...rest } = r;
    assert.ok(Number.isSafeInteger(waitedMs) && waitedMs >= 0, `waitedMs ${waitedMs}`);
    return rest;
  };
  addTab(1, `${ORIGIN}/a`);
  return { call, raw, calls, tabs, ownership, grace, clock, routes, addTab, loads, doc: () => tabs.get(1).doc, cdp: inner };
}

/**
 * Chrome's debugger on the fake pages: a flat accessibility tree of every element (Chrome's
 * role and name from page/dom.js, a password's bullets as its AX value, `ignore` ids ignored),
 * three script worlds (the page's, another extension's, tabwarden's — only the last holds the
 * RefStore token), DOM.resolveNode / Runtime.callFunctionOn run in the fake page. `fail` names a
 * CDP method that throws.
 */
const fakeCdp = ({ ignore = [], fail = "" } = {}) => (tabs) => {
  const listeners = new Set();
  const objects = new Map();
  const sent = [];
  const calledIn = new Set();
  const elementsOf = (doc) => [...globalThis.tabwardenDom.walk(doc.documentElement)];
  const objectFor = (v) => {
    const id = `obj${objects.size + 1}`;
    objects.set(id, v);
    return id;
  };
  return {
    sent, calledIn,
    listen(tabId, fn) {
      const l = { tabId, fn };
      listeners.add(l);
      return () => listeners.delete(l);
    },
    async send(_ctx, tabId, method, params) {
      sent.push(method);
      if (method === fail) throw new BridgeError("internal_error", `the debugger step failed`);
      const doc = tabs.get(tabId).doc;
      const worlds = [
        { id: 1, origin: new URL(doc.url).origin, auxData: { frameId: "top", isDefault: true, type: "default" } },
        { id: 2, origin: "chrome-extension://someoneelse", auxData: { frameId: "top", isDefault: false, type: "isolated" } },
        { id: 3, origin: "chrome-extension://tabwarden", auxData: { frameId: "top", isDefault: false, type: "isolated" } },
      ];
      if (method === "Page.getFrameTree") return { frameTree: { frame: { id: "top" } } };
      if (method === "Runtime.enable") {
        for (const l of listeners) if (l.tabId === tabId) for (const context of worlds) l.fn("Runtime.executionContextCreated", { context });
        return {};
      }
      if (method === "Accessibility.getFullAXTree") {
        const els = elementsOf(doc);
        const { roleOf, nameOf } = globalThis.tabwardenDom;
        return {
          nodes: [
            { nodeId: "r", role: { value: "RootWebArea" }, childIds: els.map((_, i) => `n${i + 1}`) },
            ...els.map((el, i) => ({
              nodeId: `n${i + 1}`, parentId: "r", backendDOMNodeId: i + 1, ignored: ignore.includes(el.getAttribute("id")),
              role: { value: roleOf(el) || "generic" }, name: { value: nameOf(el) },
              ...(el.type === "password" ? { value: { value: "•••••" } } : {}),
            })),
          ],
        };
      }
      if (method === "DOM.resolveNode") return { object: { objectId: objectFor(elementsOf(doc)[params.backendNodeId - 1]) } };
      if (method === "DOM.describeNode") return { node: { backendNodeId: elementsOf(doc).indexOf(objects.get(params.objectId)) + 1 } };
      if (method === "Runtime.callFunctionOn") {
        calledIn.add(params.executionContextId);
        if (params.functionDeclaration.includes("__tabwardenRefs")) {
          return { result: { value: params.executionContextId === 3 ? (doc.world?.doc ?? null) : "a token of another world" } };
        }
        const fn = new Function(`return (${params.functionDeclaration})`)();
        const args = params.arguments.map((a) => ("objectId" in a ? objects.get(a.objectId) : a.value));
        const out = await runIn(doc, fn, args);
        return params.returnByValue ? { result: { value: JSON.parse(JSON.stringify(out)) } } : { result: { objectId: objectFor(out) } };
      }
      if (method === "Runtime.disable" || method === "Runtime.releaseObjectGroup") return {};
      throw new Error(`unexpected CDP ${method}`);
    },
  };
};
/** The offsets of a scroll answer (atTop / atBottom depend on the fake page's size). */
const xy = ({ scrollX, scrollY }) => ({ scrollX, scrollY });

/** An action's result without the `target` every element action adds (tested where it is the point). */
const bare = (r) => {
  const { target: _target, ...rest } = r;
  return rest;
};

test("every page call injects the page files first; a failed injection is internal_error, nothing run", async () => {
  const h = harness();
  await h.call("page_snapshot", { tabId: 1 });
  await h.call("page_click", { tabId: 1, selector: "#menu" });
  assert.deepEqual(h.calls.files.filter((f) => f !== "used").length, 5); // snapshot, actionable, describe, point, clickResult
  const broken = harness({ filesFail: true });
  await assert.rejects(broken.call("page_snapshot", { tabId: 1 }), (e) => e.code === "internal_error");
  assert.deepEqual(broken.calls.script, []);
});

test("a new document between the injection and the call: inject again (at most 3 times), else internal_error", async () => {
  const h = harness({ navigatingBetween: 2 });
  const r = await h.call("page_snapshot", { tabId: 1 });
  assert.ok(r.snapshot.length > 0);
  assert.deepEqual(h.calls.script, [[1, "notInstalled"], [1, "notInstalled"], [1, "snapshot"]]);
  const stuck = harness({ navigatingBetween: 3 });
  await assert.rejects(stuck.call("page_click", { tabId: 1, selector: "#menu" }), (e) => e.code === "internal_error");
  assert.deepEqual(stuck.calls.script.map(([, what]) => what), ["notInstalled", "notInstalled", "notInstalled"]);
  assert.equal(stuck.doc().getElementById("menu").events.includes("click"), false);
});

test("a page that never answers ends the call with timeout naming the step, by the call's deadline; the tab stays usable", async () => {
  const h = harness({ stuckOn: "clickResult" });
  const soon = { ...S1, deadline: Date.now() + 100 };
  const started = Date.now();
  await assert.rejects(h.call("page_click", { tabId: 1, selector: "#menu" }, soon),
    (e) => e.code === "timeout" && /step "clickResult"/.test(e.message) && /dialog/.test(e.message));
  assert.ok(Date.now() - started < 5_000, "bounded by the call's deadline, not the step cap");
  // the next call on that tab is not stuck behind it
  assert.equal((await h.call("page_get_state", { tabId: 1, selector: "#menu" })).text, "Menu");
  // a waitFor is bounded by the call's deadline only (its own timeoutMs may exceed a step's cap)
  const waiting = harness({ stuckOn: "waitFor" });
  await assert.rejects(waiting.call("page_wait_for", { tabId: 1, selector: "#late", timeoutMs: 60_000 }, { ...S1, deadline: Date.now() + 100 }),
    (e) => e.code === "timeout" && /step "waitFor"/.test(e.message));
});

const refOf = (snap, name) => snap.snapshot.find((i) => i.name === name).ref;
/** page_get_state's answer for an element that is not there: "bad_ref" (a stale or foreign ref) or the answer itself. */
const gone = async (call) => {
  const r = await call;
  return r.exists === false && /take a new page_snapshot/.test(r.reason) ? "bad_ref" : r;
};

test("routes", () => {
  assert.deepEqual([...harness().routes.keys()], ["page_snapshot", "page_find", "page_click", "page_fill", "page_press", "page_select",
    "page_check", "page_fill_form", "page_clear", "page_scroll", "page_settle", "page_reveal", "page_wait_for", "page_get_state"]);
});

test("page_snapshot: contract shape, no docToken leaked, gate on the current url", async () => {
  const h = harness();
  const r = await h.call("page_snapshot", { tabId: 1 });
  // No debugger in this harness: "auto" answers from the DOM walk and says why.
  assert.deepEqual(Object.keys(r), ["url", "title", "snapshot", "truncated", "mode", "fallback"]);
  assert.equal(r.mode, "dom");
  assert.equal(r.url, `${ORIGIN}/a`);
  assert.deepEqual(r.snapshot.find((i) => i.name === "Password"), { ref: "@e2", role: "textbox", name: "Password", tag: "input" });
  assert.deepEqual(h.calls.gate, [[`${ORIGIN}/a`, "page_snapshot"]]);
});

test("page_click: a plain button by ref clicks without confirming", async () => {
  const h = harness();
  const snap = await h.call("page_snapshot", { tabId: 1 });
  assert.deepEqual(await h.call("page_click", { tabId: 1, ref: refOf(snap, "Menu") }),
    { clicked: true, navigated: false, url: `${ORIGIN}/a`, target: { ref: refOf(snap, "Menu"), role: "button", name: "Menu" } });
  assert.equal(h.calls.confirm.length, 0);
  assert.ok(h.doc().getElementById("menu").events.includes("click"));
});

test("page_click: trusted input at the element's point; a covered element answers element_covered and nothing is clicked", async () => {
  const h = harness();
  await h.call("page_click", { tabId: 1, selector: "#menu" });
  assert.deepEqual(h.calls.mouse, [[1, "mouseMoved"], [1, "mousePressed"], [1, "mouseReleased"]]);
  assert.ok(h.doc().getElementById("menu").events.includes("click"));
  const covered = harness();
  const banner = covered.doc().h("div", { id: "banner" }, "Cookie banner");
  covered.doc().body.append(banner);
  covered.doc().cover = banner;
  // The wait before acting (handlers/ready.js) looks until timeoutMs, then names what covers it.
  await assert.rejects(covered.call("page_click", { tabId: 1, selector: "#next", timeoutMs: 200 }),
    (e) => e.code === "element_covered" && /Cookie banner/.test(e.message) && /nothing was done/.test(e.message));
  assert.deepEqual(covered.calls.mouse, []);
  assert.ok(!covered.doc().log.some((l) => l[0] === "navigate"));
});

test("page_click: a window Chrome announces without a gesture and that never joins answers popup_blocked, waiting or not", async () => {
  const never = () => ({ watch: () => ({ promise: new Promise(() => {}), seen: () => null, cancel() {} }) });
  const h = harness({ popups: never(), blockedWindowOn: "menu" });
  await assert.rejects(h.call("page_click", { tabId: 1, selector: "#menu", newTab: true }),
    (e) => e.code === "popup_blocked" && /pop-up blocker/.test(e.message) && /\/pop/.test(e.message));
  await assert.rejects(h.call("page_click", { tabId: 1, selector: "#menu" }), (e) => e.code === "popup_blocked");
  // One that joins after all (the person allowed pop-ups on the site) is the new tab.
  const joined = { id: 7, url: `${ORIGIN}/pop`, opener: 1, session: "s1" };
  const late = harness({ popups: { watch: () => ({ promise: Promise.resolve(joined), seen: () => joined, cancel() {} }) }, blockedWindowOn: "menu" });
  late.addTab(7, `${ORIGIN}/pop`);
  const r = await late.call("page_click", { tabId: 1, selector: "#menu" });
  assert.deepEqual(r.newTab, { id: 7, url: `${ORIGIN}/pop` });
});

test("page_click: a click that starts no navigation settles at once: no load waited for, no tab lookup", async () => {
  const h = harness();
  const r = await h.call("page_click", { tabId: 1, selector: "#menu" });
  assert.deepEqual(r, { clicked: true, navigated: false, url: `${ORIGIN}/a`, target: { ref: "@e1", role: "button", name: "Menu" } });
  assert.equal(h.calls.getTab, 1); // the ownership check before the click, nothing after it
  assert.equal(h.loads.size(), 0); // the armed load watch was let go
});

test("page_click: a same-document navigation (#hash) is reported with its url, without waiting for a load", async () => {
  const h = harness();
  h.doc().body.append(h.doc().h("a", { id: "top", href: "#top" }, "Top"));
  const r = await h.call("page_click", { tabId: 1, selector: "#top" });
  assert.deepEqual(r, { clicked: true, navigated: true, url: `${ORIGIN}/a#top`, target: { ref: "@e1", role: "link", name: "Top" } });
  assert.equal(h.loads.size(), 0);
});

test("page_click: a navigation the page cancels (its navigate listener) is not reported as one", async () => {
  const h = harness();
  h.doc().navigation.addEventListener("navigate", (e) => e.preventDefault());
  const r = await h.call("page_click", { tabId: 1, selector: "#next" });
  assert.deepEqual(r, { clicked: true, navigated: false, url: `${ORIGIN}/a`, target: { ref: "@e1", role: "link", name: "Next page" } });
  assert.equal(h.loads.size(), 0);
  assert.equal(h.tabs.get(1).status, "complete");
});

test("page_click: a link whose navigation becomes a download answers when it ends, not at the load timeout", async () => {
  const h = harness({ becomesDownload: "/next" });
  const r = await h.call("page_click", { tabId: 1, selector: "#next" });
  assert.deepEqual(r, { clicked: true, navigated: false, url: `${ORIGIN}/a`, target: { ref: "@e1", role: "link", name: "Next page" } });
  assert.equal(h.loads.size(), 0);
});

test("page_click: a submit asks once (detail names the element and origin), the grace covers repeats and a link on that origin, then expires", async () => {
  const h = harness();
  const r = await h.call("page_click", { tabId: 1, selector: "#go" });
  assert.deepEqual(r, { clicked: true, navigated: true, url: `${ORIGIN}/a`, target: { ref: "@e1", role: "button", name: "Sign in" } });
  assert.equal(h.calls.confirm.length, 1);
  const req = h.calls.confirm[0];
  assert.equal(req.kind, "action");
  assert.equal(req.tool, "page_click");
  assert.equal(req.origin, ORIGIN);
  assert.equal(req.timeoutMs, 30_000);
  assert.match(req.detail, /^Click button "Sign in" on http:\/\/127\.0\.0\.1:8000\? This submits a form\.$/);
  h.clock.now += 29_000;
  await h.call("page_click", { tabId: 1, text: "Sign in" });
  assert.equal(h.calls.confirm.length, 1); // within the grace
  // a link on the same tab and origin: the grace covers every graceable action there
  await h.call("page_click", { tabId: 1, selector: "#next" });
  assert.equal(h.calls.confirm.length, 1);
  h.clock.now += 2_000; // the grace (from the first click) is over
  await h.call("page_click", { tabId: 1, selector: "#next" });
  assert.equal(h.calls.confirm.length, 2);
  assert.match(h.calls.confirm[1].detail, /link "Next page".*follows a link/);
});

test("page_click: deny -> confirm_denied, nothing clicked, no grace recorded", async () => {
  const h = harness({ decision: "deny" });
  await assert.rejects(h.call("page_click", { tabId: 1, selector: "#go" }), (e) => e.code === "confirm_denied");
  assert.equal(h.doc().log.filter((l) => l[0] === "submit").length, 0);
  assert.equal(h.grace.covered(1, ORIGIN, "page_click", h.clock.now), false);
  assert.deepEqual(h.calls.script.map((c) => c[1]), ["actionable", "describe"]);
});

test("page_click: an unanswered confirmation -> confirm_timeout, nothing clicked, no grace recorded", async () => {
  const h = harness({ decision: "timeout" });
  await assert.rejects(h.call("page_click", { tabId: 1, selector: "#go" }), (e) => e.code === "confirm_timeout");
  assert.equal(h.doc().log.filter((l) => l[0] === "submit").length, 0);
  assert.equal(h.grace.covered(1, ORIGIN, "page_click", h.clock.now), false);
});

test("page_click: no confirm when the policy does not list the kind; grace 0 asks every time", async () => {
  const h = harness();
  await h.call("page_click", { tabId: 1, selector: "#go" }, withPolicy({ confirm: [] }));
  assert.equal(h.calls.confirm.length, 0);
  await h.call("page_click", { tabId: 1, selector: "#go" }, withPolicy({ clickGraceSeconds: 0 }));
  await h.call("page_click", { tabId: 1, selector: "#go" }, withPolicy({ clickGraceSeconds: 0 }));
  assert.equal(h.calls.confirm.length, 2);
});

test("page_click: a link to an unapproved origin is refused after it navigated", async () => {
  const h = harness();
  await assert.rejects(h.call("page_click", { tabId: 1, selector: "#evil" }), (e) => e.code === "origin_not_approved");
});

test("bad_ref: refs die with the document; a new snapshot gives fresh ones", async () => {
  const h = harness();
  const snap = await h.call("page_snapshot", { tabId: 1 });
  const next = refOf(snap, "Next page");
  const r = await h.call("page_click", { tabId: 1, ref: next });
  assert.deepEqual(r, { clicked: true, navigated: true, url: `${ORIGIN}/next`, target: { ref: next, role: "link", name: "Next page" } });
  assert.equal(await gone(h.call("page_get_state", { tabId: 1, ref: refOf(snap, "Menu") })), "bad_ref");
  const again = await h.call("page_snapshot", { tabId: 1 });
  assert.equal((await h.call("page_get_state", { tabId: 1, ref: refOf(again, "Menu") })).text, "Menu");
  // a ref without any snapshot of the tab is bad_ref too
  h.addTab(2, `${ORIGIN}/b`);
  assert.equal(await gone(h.call("page_get_state", { tabId: 2, ref: "@e1" })), "bad_ref");
});

test("stable refs: the next document of a tab numbers after the last, so an old ref never lands in it", async () => {
  const h = harness();
  const before = await h.call("page_snapshot", { tabId: 1 });
  const oldRefs = before.snapshot.map((i) => i.ref);
  const again = await h.call("page_snapshot", { tabId: 1 });
  assert.deepEqual(again.snapshot.map((i) => i.ref), oldRefs); // same document: same refs
  await h.call("page_click", { tabId: 1, ref: refOf(before, "Next page") }); // a new document
  const after = await h.call("page_snapshot", { tabId: 1 });
  const highest = Math.max(...oldRefs.map((r) => Number(r.slice(2))));
  for (const item of after.snapshot) assert.ok(Number(item.ref.slice(2)) > highest, item.ref);
  for (const ref of oldRefs) {
    assert.equal(await gone(h.call("page_get_state", { tabId: 1, ref })), "bad_ref", ref);
  }
});

test("bad_ref: another session's snapshot token is not used", async () => {
  const h = harness();
  const snap = await h.call("page_snapshot", { tabId: 1 });
  h.ownership.release(1);
  h.ownership.claim("s2", 1);
  assert.equal(await gone(h.call("page_get_state", { tabId: 1, ref: refOf(snap, "Menu") }, S2)), "bad_ref");
});

test("page_fill: password refused (resolved node, focused node) unless passwordFill", async () => {
  const h = harness();
  await assert.rejects(h.call("page_fill", { tabId: 1, selector: "#pw", value: "x" }),
    (e) => e.code === "policy_denied" && /password/.test(e.message));
  const doc = h.doc();
  const user = doc.getElementById("user");
  user.focus = () => doc.setFocus(doc.getElementById("pw")); // focus lands on the password
  await assert.rejects(h.call("page_fill", { tabId: 1, selector: "#user", value: "x" }), (e) => e.code === "policy_denied");
  assert.equal(user.value, "");
  assert.deepEqual(bare(await h.call("page_fill", { tabId: 1, selector: "#pw", value: "s3cret" }, withPolicy({ passwordFill: true }))), { filled: true, applied: "yes", length: 6 });
  delete user.focus;
  assert.deepEqual(bare(await h.call("page_fill", { tabId: 1, selector: "#user", value: "bob" })), { filled: true, applied: "yes", length: 3 });
  assert.equal(user.value, "bob");
  await assert.rejects(h.call("page_fill", { tabId: 1, selector: "#user" }), (e) => e.code === "bad_request");
});

test("not owned and unapproved origins never reach the page", async () => {
  const h = harness();
  h.addTab(7, `${ORIGIN}/x`, null);
  h.addTab(8, `${ORIGIN}/y`, "s2");
  h.addTab(9, "http://evil.test/", "s1");
  for (const [action, args] of [["page_snapshot", {}], ["page_click", { selector: "#go" }], ["page_fill", { selector: "#user", value: "x" }], ["page_get_state", { selector: "#go" }]]) {
    await assert.rejects(h.call(action, { tabId: 7, ...args }), (e) => e.code === "tab_not_owned", action);
    await assert.rejects(h.call(action, { tabId: 8, ...args }), (e) => e.code === "tab_not_owned", action);
    await assert.rejects(h.call(action, { tabId: 9, ...args }), (e) => e.code === "origin_not_approved", action);
  }
  // the tab itself wandered off to an unapproved origin: the gate reads its current url
  h.tabs.get(1).url = "http://evil.test/";
  await assert.rejects(h.call("page_click", { tabId: 1, selector: "#menu" }), (e) => e.code === "origin_not_approved");
  assert.equal(h.calls.script.length, 0);
  h.tabs.delete(1);
  await assert.rejects(h.call("page_get_state", { tabId: 1, selector: "#menu" }), (e) => e.code === "tab_not_found");
});

test("page_press: confirms (press), Enter in a form field submits; no confirm when not listed", async () => {
  const h = harness();
  const doc = h.doc();
  assert.deepEqual(bare(await h.call("page_press", { tabId: 1, selector: "#user", key: "Enter" })), { pressed: true });
  assert.match(h.calls.confirm[0].detail, /^Press "Enter" on textbox "user" on http:\/\/127\.0\.0\.1:8000\? This submits a form\.$/);
  // Enter went in as trusted key input, and the browser submitted the form.
  assert.ok(h.calls.keys.some(([, type, key]) => key === "Enter" && (type === "keyDown" || type === "rawKeyDown")));
  assert.equal(doc.log.filter((l) => l[0] === "submit").length, 1);
  await h.call("page_press", { tabId: 1, key: "Escape" }, withPolicy({ confirm: [] }));
  assert.equal(h.calls.confirm.length, 1);
  // "press" not listed but "submit" is: Enter that submits still asks (past the first one's grace)
  h.clock.now += 601_000;
  await h.call("page_press", { tabId: 1, selector: "#user", key: "Enter" }, withPolicy({ confirm: ["submit"] }));
  assert.equal(h.calls.confirm.length, 2);
  await assert.rejects(h.call("page_press", { tabId: 1, selector: "#pw", key: "a" }, withPolicy({ confirm: [] })), (e) => e.code === "policy_denied");
  await assert.rejects(h.call("page_press", { tabId: 1 }), (e) => e.code === "bad_request");
});

test("page_select: confirms with the values and the element, returns the selection", async () => {
  const h = harness();
  assert.deepEqual(bare(await h.call("page_select", { tabId: 1, selector: "#s", value: "Banana" })), { selected: ["b"], labels: ["Banana"] });
  assert.match(h.calls.confirm[0].detail, /^Select "Banana" in combobox "Apple ?Banana|Select "Banana" in combobox/);
  const deny = harness({ decision: "deny" });
  await assert.rejects(deny.call("page_select", { tabId: 1, selector: "#s", value: "b" }), (e) => e.code === "confirm_denied");
  assert.equal(deny.doc().getElementById("s").value, "a");
  await assert.rejects(h.call("page_select", { tabId: 1, selector: "#s", value: 3 }), (e) => e.code === "bad_request");
});

test("page_check, page_scroll, page_get_state shapes", async () => {
  const h = harness();
  assert.deepEqual(bare(await h.call("page_check", { tabId: 1, selector: "#c", checked: true })), { checked: true });
  assert.deepEqual(xy(await h.call("page_scroll", { tabId: 1, to: { x: 0, y: 500 } })), { scrollX: 0, scrollY: 500 });
  assert.deepEqual(xy(await h.call("page_scroll", { tabId: 1, to: "top" })), { scrollX: 0, scrollY: 0 });
  assert.deepEqual(xy(await h.call("page_scroll", { tabId: 1, selector: "#go" })), { scrollX: 0, scrollY: 0 });
  for (const bad of [{ to: "middle" }, { to: { selector: "#go" } }, { to: "top", selector: "#go", ref: "@e1" }, { to: { x: 0 } },
    { to: { x: -1, y: 0 } }, { to: { x: 0, y: "5" } }, { to: { x: 0, y: 1, z: 2 } }, { to: ["top"] }, { to: 5 }, { dx: 1_000_001 }, { dy: -1_000_001 },
    { dy: "100" }, { dx: 1, to: "top" }, {}, { dy: 100, container: "#list" }, { dy: 100, container: {} }, { dy: 100, container: { selector: "#a", ref: "@e1" } },
    { dy: 100, container: { selector: "" } }]) {
    await assert.rejects(h.call("page_scroll", { tabId: 1, ...bad }), (e) => e.code === "bad_request", JSON.stringify(bad));
  }
  assert.deepEqual(xy(await h.call("page_scroll", { tabId: 1, dx: 0, dy: 0 })), { scrollX: 0, scrollY: 0 }, "a refused call scrolled nothing");
  await h.call("page_fill", { tabId: 1, selector: "#pw", value: "pw" }, withPolicy({ passwordFill: true }));
  assert.deepEqual(await h.call("page_get_state", { tabId: 1, selector: "#pw" }),
    { exists: true, tag: "input", type: "password", disabled: false, visible: true, text: "", box: { x: 10, y: 20, width: 100, height: 20 }, inViewport: true,
      target: { ref: "@e3", role: "textbox", name: "Password" } });
  assert.deepEqual(bare(await h.call("page_get_state", { tabId: 1, selector: "#c" })),
    { exists: true, tag: "input", type: "checkbox", checked: true, disabled: false, visible: true, text: "", box: { x: 10, y: 20, width: 100, height: 20 }, inViewport: true });
  // Not there: an answer, not an error.
  const none = await h.call("page_get_state", { tabId: 1, selector: "#none" });
  assert.equal(none.exists, false);
  assert.match(none.reason, /no element matches selector "#none"/);
  await assert.rejects(h.call("page_get_state", { tabId: 1, selector: "#go", ref: "@e1" }), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_get_state", { tabId: 1, ref: "e1" }), (e) => e.code === "bad_request");
});

test("page_wait_for and waitFor after an action: matched, or wait_not_met (the action was done)", async () => {
  const h = harness();
  assert.deepEqual(await h.call("page_wait_for", { tabId: 1, selector: "#go", state: "visible", timeoutMs: 0 }), { matched: true });
  await assert.rejects(h.call("page_wait_for", { tabId: 1, text: "Sign in", state: "absent", timeoutMs: 0 }), (e) => e.code === "wait_not_met");
  await assert.rejects(h.call("page_wait_for", { tabId: 1, state: "visible" }), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_wait_for", { tabId: 1, selector: "#go", timeoutMs: 10_000_000 }), (e) => e.code === "bad_request");
  // after a navigating click, waitFor runs in the new document
  const r = await h.call("page_click", { tabId: 1, selector: "#next", waitFor: { text: "Next page", state: "visible", timeoutMs: 0 } });
  assert.equal(r.navigated, true);
  await assert.rejects(h.call("page_check", { tabId: 1, selector: "#c", checked: true, waitFor: { selector: "#nope", timeoutMs: 0 } }),
    (e) => e.code === "wait_not_met" && /page_check was done/.test(e.message));
});

test("page_snapshot a11y: the tree's rows carry the DOM walk's refs; only tabwarden's proven world is used", async () => {
  const h = harness({ cdp: fakeCdp({ ignore: ["menu"] }) });
  const dom = await h.call("page_snapshot", { tabId: 1, mode: "dom" });
  const r = await h.call("page_snapshot", { tabId: 1 });
  assert.equal(r.mode, "a11y");
  assert.equal(r.fallback, undefined);
  const names = Object.fromEntries(r.snapshot.map((i) => [i.name, i]));
  const domByRef = new Map(dom.snapshot.map((i) => [i.ref, i]));
  for (const item of r.snapshot) assert.deepEqual([item.name, item.role], [domByRef.get(item.ref).name, domByRef.get(item.ref).role], item.ref);
  assert.deepEqual(r.snapshot.map((i) => i.ref), dom.snapshot.filter((i) => i.name !== "Menu").map((i) => i.ref));
  assert.equal(names.Menu, undefined); // ignored in the tree: left out
  assert.equal(names.Password.value, undefined); // never the AX value (its bullets)
  assert.ok(!JSON.stringify(r).includes("•"));
  assert.ok(r.snapshot.every((i) => !("visible" in i) && !("inViewport" in i)));
  // The page's own world is never run in; another extension's world is asked for the token only.
  assert.ok(!h.cdp.calledIn.has(1));
  assert.ok(h.cdp.sent.includes("Runtime.disable"));
  // The world is found once per document.
  const enables = h.cdp.sent.filter((m) => m === "Runtime.enable").length;
  await h.call("page_snapshot", { tabId: 1, compact: true });
  assert.equal(h.cdp.sent.filter((m) => m === "Runtime.enable").length, enables);
});

test("page_snapshot a11y: scope, maxNodes, compact; the answer says truncated", async () => {
  const h = harness({ cdp: fakeCdp() });
  const scoped = await h.call("page_snapshot", { tabId: 1, selector: "#f" });
  assert.deepEqual(scoped.snapshot.map((i) => i.name), ["f", "user", "Password", "Sign in"].filter((n) => scoped.snapshot.some((i) => i.name === n)));
  assert.ok(scoped.snapshot.some((i) => i.name === "Sign in") && !scoped.snapshot.some((i) => i.name === "Menu"));
  const bounded = await h.call("page_snapshot", { tabId: 1, maxNodes: 2 });
  assert.equal(bounded.snapshot.length, 2);
  assert.equal(bounded.truncated, true);
  await assert.rejects(h.call("page_snapshot", { tabId: 1, maxNodes: 0 }), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_snapshot", { tabId: 1, mode: "tree" }), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_snapshot", { tabId: 1, ref: "@e999" }), (e) => e.code === "bad_ref");
});

test("page_snapshot: auto answers the DOM walk (and why) when the tree cannot be read; a11y answers the error", async () => {
  const h = harness({ cdp: fakeCdp({ fail: "Accessibility.getFullAXTree" }) });
  const r = await h.call("page_snapshot", { tabId: 1 });
  assert.equal(r.mode, "dom");
  assert.match(r.fallback, /internal_error/);
  await assert.rejects(h.call("page_snapshot", { tabId: 1, mode: "a11y" }), (e) => e.code === "internal_error");
  await assert.rejects(h.call("page_snapshot", { tabId: 1, mode: "a11y", frame: 1 }), (e) => e.code === "bad_request");
});

test("page_snapshot auto, text: true, when the tree cannot be read: the walk gives the text runs the tree would have", async () => {
  const h = harness({ cdp: fakeCdp({ fail: "Accessibility.getFullAXTree" }) });
  h.doc().body.append(h.doc().h("p", {}, "Plain words of the page"));
  const plain = await h.call("page_snapshot", { tabId: 1 });
  const worded = await h.call("page_snapshot", { tabId: 1, text: true });
  assert.equal(worded.mode, "dom");
  assert.match(worded.fallback, /internal_error/);
  const runs = worded.snapshot.filter((i) => i.role === "text");
  assert.deepEqual(runs, [{ role: "text", name: "Plain words of the page" }]);
  // The same elements with the same refs as without text; the text is last, as in the page.
  assert.deepEqual(worded.snapshot.filter((i) => i.role !== "text"), plain.snapshot);
  assert.equal(worded.snapshot.at(-1).role, "text");
  // Not asked, or compact: no text runs, and one walk only.
  assert.ok(!plain.snapshot.some((i) => i.role === "text"));
  const compact = await h.call("page_snapshot", { tabId: 1, text: true, compact: true });
  assert.ok(!compact.snapshot.some((i) => i.role === "text"));
  assert.equal(compact.fallback, worded.fallback);
});

test("page_snapshot auto: a sparse tree is merged with the DOM walk's rows, marked", async () => {
  const h = harness({ cdp: fakeCdp({ ignore: ["user", "pw", "go", "next", "evil", "menu", "s"] }) });
  const r = await h.call("page_snapshot", { tabId: 1 });
  assert.equal(r.mode, "a11y+dom");
  const menu = r.snapshot.find((i) => i.name === "Menu");
  assert.equal(menu.source, "dom");
});

test("page_find: ranked refs, role filter, limit; arguments checked", async () => {
  const h = harness({ cdp: fakeCdp() });
  const r = await h.call("page_find", { tabId: 1, name: "e" });
  assert.equal(r.mode, "a11y");
  assert.ok(r.total >= 3);
  const links = await h.call("page_find", { tabId: 1, role: "link" });
  assert.deepEqual(links.matches.map((m) => m.name), ["Next page", "Evil"]);
  const exact = await h.call("page_find", { tabId: 1, name: "next page", exact: true, limit: 1 });
  assert.deepEqual(exact.matches.map((m) => [m.name, m.role, m.tag]), [["Next page", "link", "a"]]);
  await assert.rejects(h.call("page_find", { tabId: 1 }), (e) => e.code === "bad_request");
  await assert.rejects(h.call("page_find", { tabId: 1, name: "x", limit: 51 }), (e) => e.code === "bad_request");
});

test("page_select with another origin's value: one window names both origins and covers the select question; denied, nothing is chosen", async () => {
  const lineage = { provenance: { evidence: [{ sourceOrigin: "http://evil.test", kind: "token", token: "[6 chars]", readAt: 1 }] } };
  const gate = (confirm) => createProvenanceGate({ confirm });
  const h = harness({ provenance: gate });
  assert.deepEqual(bare(await h.call("page_select", { tabId: 1, selector: "#s", value: "Banana", ...lineage })), { selected: ["b"], labels: ["Banana"] });
  assert.equal(h.calls.confirm.length, 1);
  assert.match(h.calls.confirm[0].detail, /^The agent wants to select "Banana" on http:\/\/127\.0\.0\.1:8000, a value that came from a page on http:\/\/evil\.test/);
  const deny = harness({ decision: "deny", provenance: gate });
  await assert.rejects(deny.call("page_select", { tabId: 1, selector: "#s", value: "b", ...lineage }), (e) => e.code === "confirm_denied");
  assert.equal(deny.doc().getElementById("s").value, "a");
  assert.equal(deny.calls.script.filter(([, op]) => op === "select").length, 0, "the page was never asked to select");
  // Same-origin lineage: only the policy's own select question.
  const same = harness({ provenance: gate });
  const own = { provenance: { evidence: [{ sourceOrigin: ORIGIN, kind: "value", token: "[6 chars]", readAt: 1 }] } };
  await same.call("page_select", { tabId: 1, selector: "#s", value: "b", ...own });
  assert.equal(same.calls.confirm.length, 1);
  assert.match(same.calls.confirm[0].detail, /^Select "b" in /);
});

test("grace: an allowed page_select covers page_press and page_click on that tab and origin; another tab asks; the window says so", async () => {
  const h = harness();
  await h.call("page_select", { tabId: 1, selector: "#s", value: "b" });
  assert.equal(h.calls.confirm.length, 1);
  assert.equal(h.calls.confirm[0].grace, 30, "the window is told how long the allow covers");
  await h.call("page_press", { tabId: 1, selector: "#user", key: "a" });
  await h.call("page_select", { tabId: 1, selector: "#s", value: "a" });
  assert.equal(h.calls.confirm.length, 1, "covered: same tab, same origin");
  h.addTab(2, `${ORIGIN}/b`);
  await h.call("page_select", { tabId: 2, selector: "#s", value: "b" });
  assert.equal(h.calls.confirm.length, 2, "another tab asks");
  assert.equal(h.grace.covered(1, "http://evil.test", "page_select", h.clock.now), false, "another origin is not covered");
  assert.equal(h.grace.covered(1, ORIGIN, "page_select", h.clock.now), false, "and it ended the first tab's window");
});

test("an element action waits until its element is actionable, and says how long; a disabled one is never acted on", async () => {
  const h = harness();
  const r = await h.raw("page_click", { tabId: 1, selector: "#menu" });
  assert.equal(r.waitedMs, 0); // the frozen test clock: it was actionable at the first look
  assert.equal(h.calls.script[0][1], "actionable");
  // page_get_state reads the element as it is: no wait, no waitedMs.
  assert.equal("waitedMs" in await h.raw("page_get_state", { tabId: 1, selector: "#menu" }), false);
  const off = harness();
  off.doc().getElementById("menu").setAttribute("disabled", "");
  await assert.rejects(off.call("page_click", { tabId: 1, selector: "#menu", timeoutMs: 100 }),
    (e) => e.code === "element_disabled" && /nothing was done/.test(e.message));
  assert.deepEqual(off.calls.mouse, []);
  assert.ok(!off.doc().getElementById("menu").events.includes("click"));
  assert.deepEqual(off.calls.script.map((c) => c[1]).filter((op) => op !== "actionable"), []);
});

// ---------------------------------------------------------------- page_fill_form

/** A page_fill_form result's fields without their `target` (checked where it is the point). */
const outcomes = (r) => r.fields.map(({ target: _t, ...rest }) => rest);

test("page_fill_form: text, select and checkbox in one call, one question for the select, each field's outcome", async () => {
  const h = harness();
  const r = await h.call("page_fill_form", { tabId: 1, fields: [
    { kind: "text", selector: "#user", value: "alice" },
    { kind: "select", selector: "#s", label: "Banana" },
    { kind: "checkbox", selector: "#c", checked: true },
  ] });
  assert.equal(r.filled, 3);
  assert.equal(r.failed, 0);
  assert.deepEqual(outcomes(r), [
    { kind: "text", ok: true, applied: "yes", length: 5 },
    { kind: "select", ok: true, selected: ["b"], labels: ["Banana"] },
    { kind: "checkbox", ok: true, checked: true },
  ]);
  assert.deepEqual(r.fields[0].target, { ref: r.fields[0].target.ref, role: "textbox", name: "user" });
  const doc = h.doc();
  assert.equal(doc.getElementById("user").value, "alice");
  assert.equal(doc.getElementById("s").value, "b");
  assert.equal(doc.getElementById("c").checked, true);
  // One window, for the select (page_select's question), naming what it picks; never the text.
  assert.equal(h.calls.confirm.length, 1);
  assert.equal(h.calls.confirm[0].tool, "page_fill_form");
  assert.match(h.calls.confirm[0].detail, /select .*"Banana"/);
  assert.match(h.calls.confirm[0].detail, /also fills 2 other fields/);
  assert.doesNotMatch(JSON.stringify(h.calls.confirm[0]), /alice/);
  // Without a select nobody is asked (page_fill and page_check ask nothing).
  const quiet = harness();
  await quiet.call("page_fill_form", { tabId: 1, fields: [{ kind: "text", selector: "#user", value: "bob" }, { kind: "checkbox", selector: "#c", checked: false }] });
  assert.equal(quiet.calls.confirm.length, 0);
});

test("page_fill_form: a missing or disabled field is reported with its code and hint, the others are filled", async () => {
  const h = harness();
  h.doc().getElementById("c").setAttribute("disabled", "");
  const r = await h.call("page_fill_form", { tabId: 1, timeoutMs: 0, fields: [
    { kind: "text", selector: "#nope", value: "x" },
    { kind: "text", selector: "#user", value: "alice" },
    { kind: "checkbox", selector: "#c", checked: true },
    { kind: "select", selector: "#user", value: "a" },
  ] });
  assert.equal(r.filled, 1);
  assert.equal(r.failed, 3);
  const [missing, user, disabled, wrong] = r.fields;
  assert.equal(missing.ok, false);
  assert.equal(missing.error.code, "element_not_found");
  assert.match(missing.error.hint, /No element matches/);
  assert.deepEqual(bare(user), { kind: "text", ok: true, applied: "yes", length: 5 });
  assert.equal(disabled.error.code, "element_disabled");
  assert.match(disabled.error.hint, /stayed disabled/);
  assert.equal(wrong.error.code, "wrong_element");
  assert.equal(h.doc().getElementById("user").value, "alice");
  assert.equal(h.doc().getElementById("c").checked, false);
});

test("page_fill_form: a denial, or a password field without passwordFill, refuses the whole call and changes no field", async () => {
  const fields = [
    { kind: "text", selector: "#user", value: "mallory" },
    { kind: "checkbox", selector: "#c", checked: true },
    { kind: "select", selector: "#s", value: "b" },
  ];
  const deny = harness({ decision: "deny" });
  await assert.rejects(deny.call("page_fill_form", { tabId: 1, fields }), (e) => e.code === "confirm_denied");
  assert.equal(deny.calls.confirm.length, 1, "one window for the whole form");
  const doc = deny.doc();
  assert.deepEqual([doc.getElementById("user").value, doc.getElementById("c").checked, doc.getElementById("s").value], ["", false, "a"]);
  assert.deepEqual(deny.calls.script.map(([, op]) => op).filter((op) => ["fill", "select", "check"].includes(op)), [], "nothing was acted on");
  // A password field, the policy's passwordFill off: refused before anyone is asked or anything filled.
  const pw = harness();
  await assert.rejects(pw.call("page_fill_form", { tabId: 1, fields: [...fields, { kind: "text", selector: "#pw", value: "hunter2" }] }),
    (e) => e.code === "policy_denied" && /fields\[3\] is a password field/.test(e.message) && !/hunter2/.test(e.message));
  assert.equal(pw.calls.confirm.length, 0);
  assert.deepEqual([pw.doc().getElementById("user").value, pw.doc().getElementById("pw").value], ["", ""]);
  // passwordFill on: filled as page_fill fills it, its length only.
  const allowed = harness();
  const r = await allowed.call("page_fill_form", { tabId: 1, fields: [{ kind: "text", selector: "#pw", value: "hunter2" }] }, withPolicy({ passwordFill: true }));
  assert.deepEqual(outcomes(r), [{ kind: "text", ok: true, applied: "yes", length: 7 }]);
  assert.doesNotMatch(JSON.stringify(r), /hunter2/);
});

test("page_fill_form: foreign lineage asks once, naming both origins, and covers the select question; denied, nothing changes", async () => {
  const lineage = { provenance: { evidence: [{ sourceOrigin: "http://evil.test", kind: "token", token: "[6 chars]", readAt: 1 }] } };
  const gate = (confirm) => createProvenanceGate({ confirm });
  const fields = [{ kind: "text", selector: "#user", value: "evil-token" }, { kind: "select", selector: "#s", value: "b" }];
  const h = harness({ provenance: gate });
  const r = await h.call("page_fill_form", { tabId: 1, fields, ...lineage });
  assert.equal(r.filled, 2);
  assert.equal(h.calls.confirm.length, 1);
  assert.match(h.calls.confirm[0].detail, /http:\/\/evil\.test/);
  const deny = harness({ decision: "deny", provenance: gate });
  await assert.rejects(deny.call("page_fill_form", { tabId: 1, fields, ...lineage }), (e) => e.code === "confirm_denied");
  assert.equal(deny.calls.confirm.length, 1);
  assert.deepEqual([deny.doc().getElementById("user").value, deny.doc().getElementById("s").value], ["", "a"]);
});

test("page_fill_form: an allowed form opens a grace that covers page_select on that tab and origin", async () => {
  const h = harness();
  await h.call("page_fill_form", { tabId: 1, fields: [{ kind: "select", selector: "#s", value: "b" }] });
  await h.call("page_select", { tabId: 1, selector: "#s", value: "a" });
  await h.call("page_fill_form", { tabId: 1, fields: [{ kind: "select", selector: "#s", value: "b" }, { kind: "select", selector: "#s", optionIndex: 0 }] });
  assert.equal(h.calls.confirm.length, 1);
});

test("page_fill_form: arguments that make no request are refused before the page is touched", async () => {
  const h = harness();
  const refused = async (args, pattern) => {
    await assert.rejects(h.raw("page_fill_form", { tabId: 1, ...args }), (e) => e.code === "bad_request" && pattern.test(e.message));
  };
  await refused({ fields: [] }, /fields/);
  await refused({ fields: Array.from({ length: 51 }, () => ({ kind: "text", selector: "#user", value: "x" })) }, /fields/);
  await refused({ fields: [{ kind: "password", selector: "#pw", value: "x" }] }, /kind/);
  await refused({ fields: [{ kind: "text", selector: "#user" }] }, /fields\[0\] \(text\): give its value/);
  await refused({ fields: [{ kind: "text", selector: "#user", value: "x", checked: true }] }, /does not take checked/);
  await refused({ fields: [{ kind: "select", selector: "#s", value: "a", label: "Apple" }] }, /exactly one of value, values, label, optionIndex/);
  await refused({ fields: [{ kind: "checkbox", selector: "#c" }] }, /give checked/);
  await refused({ fields: [{ kind: "radio", selector: "#c", checked: false }] }, /cannot be unchecked/);
  await refused({ fields: [{ kind: "text", value: "x" }] }, /fields\[0\]/);
  assert.deepEqual(h.calls.script, []);
});

test("page_fill_form takes waitFor like every action: the fill is done, then the wait answers", async () => {
  const h = harness();
  await assert.rejects(h.call("page_fill_form", { tabId: 1, fields: [{ kind: "text", selector: "#user", value: "alice" }], waitFor: { selector: "#nope", timeoutMs: 0 } }),
    (e) => e.code === "wait_not_met" && /page_fill_form was done/.test(e.message));
  assert.equal(h.doc().getElementById("user").value, "alice");
  const r = await h.call("page_fill_form", { tabId: 1, fields: [{ kind: "checkbox", selector: "#c", checked: true }], waitFor: { selector: "#user", timeoutMs: 0 } });
  assert.deepEqual(outcomes(r), [{ kind: "checkbox", ok: true, checked: true }]);
});
