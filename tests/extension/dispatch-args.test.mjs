// The dispatcher checks every catalogue action's `args` against the wire schema the MCP catalogue
// publishes (worker/catalogue.js ACTION_ARGS) before the handler runs: an attacker's args are
// bad_request naming the field, and the handler is never called.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createDispatcher } from "../../extension/worker/dispatch.js";
import { ACTION_ARGS, ACTION_FAMILIES } from "../../extension/worker/catalogue.js";
import { fakeLog } from "./helpers/fakes.mjs";

const CTX = { session: "s1", policy: { origins: ["http://127.0.0.1:8000"] } };
const req = (action, args) => ({ type: "request", id: "r1", action, args, ...CTX });

/** A dispatcher whose every catalogue action is a spy recording its calls. */
function spied() {
  /** @type {Array<[string, unknown]>} */
  const calls = [];
  const handlers = ACTION_FAMILIES.map(([action]) => [action, async (args) => {
    calls.push([action, args]);
    return { ran: action };
  }]);
  return { d: createDispatcher(handlers, { log: fakeLog() }), calls };
}

test("every catalogue action has a wire schema", () => {
  const schemas = new Map(ACTION_ARGS);
  for (const [action] of ACTION_FAMILIES) assert.ok(schemas.has(action), action);
  assert.equal(schemas.size, ACTION_FAMILIES.length);
});

test("args that match the action's schema reach its handler unchanged", async () => {
  const { d, calls } = spied();
  for (const [action, args] of /** @type {Array<[string, object]>} */ ([
    ["tab_list", {}],
    ["tab_open", { url: "http://127.0.0.1:8000/" }],
    ["page_click", { tabId: 3, ref: "@e12", index: 0, waitFor: { selector: "#done", state: "visible", timeoutMs: 100 } }],
    ["page_mouse", { tabId: 3, x: 10, y: 20.5, button: "left", modifiers: ["Shift"] }],
    ["page_fetch", { tabId: 3, url: "http://127.0.0.1:8000/api", method: "POST", body: "{}", headers: { "content-type": "application/json" } }],
    ["page_scroll", { tabId: 3, to: { x: 0, y: 200 }, container: { selector: "#list", index: 0 } }],
    ["page_type", { tabId: 3, value: "hello" }],
    ["page_fill", { tabId: 3, ref: "@e4", value: "x", provenance: { evidence: [{ sourceOrigin: "http://a.test", kind: "url", token: "h…", readAt: 1 }] } }],
    ["page_upload", { tabId: 3, selector: "input[type=file]", paths: ["/u/a.txt"], files: [{ name: "a.txt", size: 2 }] }],
  ])) {
    const reply = await d.dispatch(req(action, args));
    assert.equal(reply.ok, true, `${action}: ${JSON.stringify(reply)}`);
    assert.deepEqual(calls.at(-1), [action, args]);
  }
});

/** Each: action, args as JSON text (so "__proto__" is an own key, as the native host's JSON is), the field the refusal names. */
const ATTACKS = /** @type {Array<[string, string, RegExp]>} */ ([
  ["page_click", '{"tabId":"3","ref":"@e1"}', /tabId must be integer/], // wrong type
  ["page_click", '{"tabId":3,"ref":"@e1","script":"alert(1)"}', /unknown field "script"/], // extra key
  ["page_click", '{"tabId":3,"ref":"@e1","__proto__":{"isAdmin":true}}', /unknown field "__proto__"/],
  ["page_click", '{"tabId":3,"ref":"@e1","constructor":{"prototype":{}}}', /unknown field "constructor"/],
  ["page_click", '{"tabId":1e300,"ref":"@e1"}', /tabId must be integer/], // huge number
  ["tab_close", '{"tabId":9007199254740993}', /tabId must be integer/],
  ["page_navigate", '{"url":"http://127.0.0.1:8000/"}', /tabId is required/], // missing required
  ["page_fetch", '{"tabId":3}', /url is required/],
  ["page_click", '{"tabId":3,"ref":"@e1","selector":"a"}', /exactly one of ref, selector, text, xpath/], // two targets
  ["page_click", '{"tabId":3}', /exactly one of ref/], // no target
  ["page_click", '{"tabId":3,"ref":""}', /ref must be at least 1/],
  ["page_click", '{"tabId":3,"ref":null}', /ref must be string/], // null never travels
  ["page_click", '{"tabId":3,"ref":"@e1","index":-1}', /index must be at least 0/],
  ["page_mouse", '{"tabId":3,"x":1e400,"y":1}', /x must be number|x must be at most/],
  ["page_mouse", '{"tabId":3,"x":1,"y":2,"ref":"@e1"}', /exactly one of/],
  ["page_mouse", '{"tabId":3,"ref":"@e1","modifiers":["Shift","Hyper"]}', /modifiers\[1\]/],
  ["page_fetch", '{"tabId":3,"url":"http://a/","headers":{"x":1}}', /headers\.x must be string/],
  ["page_fetch", '{"tabId":3,"url":"http://a/","method":"TRACE"}', /method must be one of/],
  ["page_fetch", '{"tabId":3,"url":"http://a/","saveAs":"../x"}', /saveAs does not have the form/],
  ["page_click", '{"tabId":3,"ref":"@e1","waitFor":{"selector":"a","__proto__":{}}}', /waitFor has an unknown field "__proto__"/],
  ["page_click", '{"tabId":3,"ref":"@e1","observe":{"snapshot":"everything"}}', /observe\.snapshot must be one of/],
  ["page_scroll", '{"tabId":3,"container":{"selector":"a","ref":"@e1"}}', /container: give exactly one of/],
  ["page_text", '{"tabId":3,"maxChars":0}', /maxChars must be at least 1/],
  ["tab_open", `{"url":"${"x".repeat(9000)}"}`, /url must be at most 8192/],
  ["tab_list", '{"session":"other"}', /unknown field "session"/],
  // What the handlers no longer check themselves: the schema is the one statement of it.
  ["page_click", '{"tabId":3,"ref":"e1"}', /ref does not have the form/], // the ref's @eN shape
  ["page_click", '{"tabId":3,"ref":"@e1","waitFor":{"ref":"e1"}}', /waitFor\.ref does not have the form/],
  ["page_click", `{"tabId":3,"selector":"${"a".repeat(2001)}"}`, /selector must be at most 2000/],
  ["page_click", '{"tabId":3,"ref":"@e1","index":100001}', /index must be at most 100000/],
  ["page_click", '{"tabId":3,"ref":"@e1","newTab":"yes"}', /newTab must be boolean/],
  ["page_fill", '{"tabId":3,"ref":"@e1"}', /value is required/],
  ["page_fill", `{"tabId":3,"ref":"@e1","value":"${"v".repeat(100_001)}"}`, /value must be at most 100000/],
  ["page_fill", '{"tabId":3,"ref":"@e1","value":"x","method":"eval"}', /method must be one of/],
  ["page_press", '{"tabId":3,"key":""}', /key must be at least 1/],
  ["page_press", `{"tabId":3,"key":"${"k".repeat(33)}"}`, /key must be at most 32/],
  ["page_check", '{"tabId":3,"ref":"@e1","checked":"true"}', /checked must be boolean/],
  ["page_snapshot", '{"tabId":3,"maxNodes":0}', /maxNodes must be at least 1/],
  ["page_snapshot", '{"tabId":3,"mode":"html"}', /mode must be one of/],
  ["page_find", '{"tabId":3,"name":"x","limit":51}', /limit must be at most 50/],
  ["page_wait_for", '{"tabId":3,"selector":"a","timeoutMs":10000000}', /timeoutMs must be at most/],
  ["page_scroll", '{"tabId":3,"to":{"selector":"#go"}}', /to must be/],
  ["page_upload", '{"tabId":3,"ref":"@e1","paths":["/u/a"]}', /files is required/], // the sandbox's check
  ["page_upload", '{"tabId":3,"ref":"@e1","paths":["/u/a"],"files":[{"name":"a","size":1,"data":"aGk="}]}', /data/], // never bytes
  ["page_click", '{"tabId":3,"ref":"@e1","waitFor":{"state":"absent"}}', /waitFor: give exactly one of ref, selector, text/], // nothing to wait for
  ["page_click", '{"tabId":3,"ref":"@e1","waitFor":{"ref":"@e2","text":"x"}}', /waitFor: give exactly one of/],
  ["page_click", '{"tabId":3,"ref":"@e1","waitFor":{"text":""}}', /waitFor\.text must be at least 1/],
  ["page_wait_for", '{"tabId":3}', /give exactly one of ref, selector, text/],
  ["page_wait_for", '{"tabId":3,"selector":"a","text":"b"}', /give exactly one of ref, selector, text/],
  ["page_wait_for", '{"tabId":3,"ref":"@e1","text":"b"}', /give exactly one of ref, selector, text/],
  ["page_wait_for", '{"tabId":3,"selector":"a","state":"gone"}', /state must be one of/],
  ["page_console", '{"tabId":3,"clear":"yes"}', /clear must be boolean/],
  ["page_console", '{"tabId":3,"level":"info"}', /level must be one of/],
  ["page_network", `{"tabId":3,"url":"${"u".repeat(2049)}"}`, /url must be at most 2048/],
  ["page_fetch", '{"tabId":3,"url":"http://a/","body":{"a":1}}', /body must be string/],
  ["page_fetch", '{"tabId":3,"url":"http://a/","headers":{"accept":"a\\r\\nCookie: x"}}', /headers\.accept does not have the form/],
  ["page_fetch", `{"tabId":3,"url":"http://a/","headers":{"accept":"${"a".repeat(1001)}"}}`, /headers\.accept must be at most 1000/],
  ["page_fetch", '{"tabId":3,"url":"http://a/","headers":["accept"]}', /headers must be object/],
  ["page_fetch", '{"tabId":3,"url":"http://a/","saveAs":"a..b"}', /saveAs does not have the form/],
  ["page_pdf", '{"tabId":3,"landscape":"yes"}', /landscape must be boolean/],
  ["page_pdf", '{"tabId":3,"scale":2.5}', /scale must be at most 2/],
  ["page_pdf", '{"tabId":3,"pageRanges":"1; rm -rf /"}', /pageRanges does not have the form/],
  ["page_pdf", `{"tabId":3,"name":"${"n".repeat(201)}"}`, /name must be at most 200/],
  ["page_viewport", '{"tabId":3,"preset":"watch"}', /preset must be one of/],
  ["page_viewport", '{"tabId":3,"preset":"mobile","touch":"yes"}', /touch must be boolean/],
  ["page_mouse", '{"tabId":3,"ref":"@e1","button":"back"}', /button must be one of/],
  ["page_mouse", '{"tabId":3,"ref":"@e1","clickCount":4}', /clickCount must be at most 3/],
  ["page_mouse", '{"tabId":3,"ref":"@e1","force":"yes"}', /force must be boolean/],
  ["page_mouse", '{"tabId":3,"ref":"@e1","modifiers":["Alt","Alt","Alt","Alt","Alt","Alt"]}', /modifiers must hold at most 5/],
  ["page_dialog", '{"tabId":3,"action":"maybe"}', /action must be one of/],
  ["page_dialog", '{"tabId":3,"arm":"always"}', /arm must be one of/],
  ["page_dialog", `{"tabId":3,"action":"accept","promptText":"${"p".repeat(10001)}"}`, /promptText must be at most 10000/],
  ["page_screenshot", '{"tabId":3,"format":"gif"}', /format must be one of/],
  ["page_screenshot", '{"tabId":3,"region":{"x":0,"y":0,"width":5}}', /region\.height is required/],
  ["storage_get", '{"tabId":3,"area":"cookies"}', /area must be one of/],
  ["page_scrape", '{"tabId":3,"selector":"a","attrs":["on click"]}', /attrs\[0\] does not have the form/],
  ["page_scrape", `{"tabId":3,"selector":"a","attrs":[${Array.from({ length: 51 }, (_, i) => `"a${i}"`).join(",")}]}`, /attrs must hold at most 50/],
  ["page_follow", '{"tabId":3}', /ref is required/],
  ["page_follow", '{"tabId":3,"ref":"e3"}', /ref does not have the form/],
  ["page_scroll", '{"tabId":3,"dy":1000001}', /dy must be at most/],
  ["page_scroll", '{"tabId":3,"to":{"x":0}}', /to/],
  ["page_click", '{"tabId":3,"ref":"@e1","provenance":{"evidence":"x"}}', /provenance\.evidence must be array/],
  ["page_click", '{"tabId":3,"ref":"@e1","provenance":{"forged":true}}', /provenance has an unknown field "forged"/],
]);

test("an attacker's args are bad_request naming the field, and the handler never runs", async () => {
  const { d, calls } = spied();
  for (const [action, text, names] of ATTACKS) {
    const args = JSON.parse(text);
    const reply = await d.dispatch(req(action, args));
    assert.equal(reply.ok, false, `${action} ${text}`);
    assert.equal(reply.error.code, "bad_request", `${action} ${text}`);
    assert.match(reply.error.message, names, `${action} ${text}`);
    assert.ok(reply.error.message.length < 400, "the refusal is short");
  }
  assert.deepEqual(calls, [], "no handler ran");
  assert.equal(/** @type {any} */ ({}).isAdmin, undefined, "nothing was polluted");
});

test("an action outside the catalogue is given its args unchecked (its handler checks them)", async () => {
  const seen = [];
  const d = createDispatcher([["terminal_thing", (args) => { seen.push(args); }]], { log: fakeLog() });
  assert.equal((await d.dispatch(req("terminal_thing", { any: 1 }))).ok, true);
  assert.deepEqual(seen, [{ any: 1 }]);
});

test("a schema with a keyword the validator does not know refuses every call to that action", async () => {
  const seen = [];
  const d = createDispatcher([["act", (args) => { seen.push(args); }]], {
    log: fakeLog(),
    argSchemas: new Map([["act", { type: "object", properties: { a: { type: "string", format: "uri" } } }]]),
  });
  for (const args of [{}, { a: "http://x/" }]) {
    const reply = await d.dispatch(req("act", args));
    assert.equal(reply.error?.code, "bad_request");
  }
  assert.deepEqual(seen, []);
});
