// page_viewport given no size: the current viewport, read, with nothing sent to the debugger;
// `emulating` is the screen page_viewport set on that tab in this session, or null (none, or a
// reset ended it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { filesHandlers, viewportSettings } from "../../extension/handlers/files.js";
import { createOwnership } from "../../extension/worker/ownership.js";
import { createLoadWatcher } from "../../extension/worker/tab-load.js";
import { parsePolicy } from "../../extension/worker/policy.js";
import { BridgeError } from "../../extension/shared/bridge-error.js";
import { fakeTimers, schemaChecked } from "./helpers/fakes.mjs";

const OK = "http://127.0.0.1:8000";
const policy = parsePolicy({ origins: [OK], confirm: [] });
const S1 = { session: "s1", policy };
const S2 = { session: "s2", policy };
const VIEW = { innerWidth: 1280, innerHeight: 720, devicePixelRatio: 1, coarsePointer: false, maxTouchPoints: 0 };

test("viewport settings: nothing given is a read", () => {
  assert.equal(viewportSettings({}), "read");
  assert.equal(viewportSettings({ reset: true }), null);
});

test("page_viewport: no size answers the current viewport and sends nothing; emulating is this session's", async () => {
  const ownership = createOwnership();
  const timers = fakeTimers();
  const sent = [];
  const tabs = new Map([[1, { id: 1, url: `${OK}/`, windowId: 1 }], [2, { id: 2, url: `${OK}/`, windowId: 1 }]]);
  ownership.claim("s1", 1);
  ownership.claim("s2", 2);
  const browser = {
    getTab: async (id) => ({ ...tabs.get(id) }),
    executeScriptArgs: async (id) => [{ result: { href: tabs.get(id).url, ...VIEW } }],
  };
  const cdp = { ensure: async () => {}, send: async (_ctx, tabId, method) => { sent.push([tabId, method]); return {}; } };
  const ensureOrigin = async (url, ctx) => {
    const o = new URL(url).origin;
    if (!ctx.policy.approves(o)) throw new BridgeError("origin_not_approved", "no");
    return o;
  };
  const routes = new Map(filesHandlers(/** @type {any} */ ({ browser, ownership, loads: createLoadWatcher(timers), ensureOrigin, confirm: async () => "deny", cdp })));
  const call = (args, ctx = S1) => schemaChecked((n) => routes.get(n))("page_viewport", args, ctx);

  assert.deepEqual(await call({ tabId: 1 }), { emulating: null, page: VIEW });
  assert.deepEqual(sent, [], "a read sends nothing");
  await call({ tabId: 1, preset: "tablet" });
  sent.length = 0;
  assert.deepEqual((await call({ tabId: 1 })).emulating, { width: 820, height: 1180, deviceScaleFactor: 2, mobile: true, touch: true });
  assert.deepEqual(sent, []);
  await assert.rejects(call({ tabId: 1 }, S2), (e) => e.code === "tab_not_owned");
  assert.equal((await call({ tabId: 2 }, S2)).emulating, null, "another tab's screen is its own");
  await call({ tabId: 1, reset: true });
  assert.equal((await call({ tabId: 1 })).emulating, null);
});
