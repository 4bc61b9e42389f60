import { test } from "node:test";
import assert from "node:assert/strict";
import { toTabList, toTabSummary } from "../../extension/worker/tab-mapping.js";

test("maps exactly the five fields and drops everything else", () => {
  const tab = {
    id: 4, url: "https://example.com/", title: "Example", active: true, windowId: 2,
    favIconUrl: "https://example.com/f.ico", index: 0, pinned: false, sessionId: "s", incognito: false,
  };
  assert.deepEqual(toTabSummary(tab), { id: 4, url: "https://example.com/", title: "Example", active: true, windowId: 2 });
});

test("defaults: url and title to empty string, active to false, windowId to -1", () => {
  assert.deepEqual(toTabSummary({ id: 1 }), { id: 1, url: "", title: "", active: false, windowId: -1 });
  assert.deepEqual(toTabSummary({ id: 1, url: 5, title: null, active: "yes", windowId: "2" }),
    { id: 1, url: "", title: "", active: false, windowId: -1 });
});

test("tabs without a usable id are skipped", () => {
  for (const t of [{}, { id: undefined }, { id: -1 }, { id: "3" }, { id: 1.5 }, null, 7, "tab"]) {
    assert.equal(toTabSummary(t), null, JSON.stringify(t));
  }
  assert.deepEqual(toTabList([{ id: 2, url: "a" }, { url: "devtools://x" }, { id: -1 }, { id: 0, url: "b" }]), {
    tabs: [
      { id: 2, url: "a", title: "", active: false, windowId: -1 },
      { id: 0, url: "b", title: "", active: false, windowId: -1 },
    ],
  });
});

test("a non-array input gives an empty list", () => {
  assert.deepEqual(toTabList(undefined), { tabs: [] });
  assert.deepEqual(toTabList({ length: 1, 0: { id: 1 } }), { tabs: [] });
});

