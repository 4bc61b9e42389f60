// extension_actions.mjs — prints, as JSON, the actions the extension's service worker dispatches:
// the actions of the entries background.js hands to createDispatcher (worker/dispatch.js), captured by
// dispatch_hooks.mjs while the real service worker module (manifest.json's
// background.service_worker) loads against an inert fake `chrome`. Run by test_extension_dispatch.py
// as `node extension_actions.mjs <extension dir>`. It must never reach a network, a browser or a
// native host: every chrome.* call returns another inert stub.

import { readFileSync } from "node:fs";
import { register } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";

const extension = path.resolve(process.argv[2]);
const manifest = JSON.parse(readFileSync(path.join(extension, "manifest.json"), "utf8"));
const worker = pathToFileURL(path.join(extension, manifest.background.service_worker)).href;
const dispatchUrl = pathToFileURL(path.join(extension, "worker", "dispatch.js")).href;

register("./dispatch_hooks.mjs", import.meta.url, { data: { dispatchUrl } });

/** Anything, callable and constructible, whose every property is another such stub. */
function inert() {
  const target = function () {};
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === "then") return undefined; // not a promise: `await stub` gives the stub
      if (prop === Symbol.toPrimitive) return () => "";
      if (prop === Symbol.iterator) return function* () {};
      return inert();
    },
    apply: () => inert(),
    construct: () => inert(),
  });
}

globalThis.chrome = inert();
// The worker's own listeners may fail against stubs; only the Map matters here.
process.on("unhandledRejection", () => {});

const calls = [];
let created;
const dispatcherCreated = new Promise((resolve) => { created = resolve; });
globalThis.__tabwardenRoutes = (actions) => {
  calls.push(actions);
  created();
};

let failure = null;
const loaded = import(worker).catch((err) => { failure = String(err?.stack ?? err); });
await Promise.race([loaded, dispatcherCreated]);
process.stdout.write(`${JSON.stringify({ calls, failure })}\n`);
process.exit(0);
