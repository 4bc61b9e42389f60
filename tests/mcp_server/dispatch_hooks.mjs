// dispatch_hooks.mjs — Node module hooks for extension_actions.mjs (tests only). Every import of
// the extension's worker/dispatch.js, except the spy's own, resolves to a generated spy module that
// re-exports the real one and wraps createDispatcher to hand the actions of the action → handler
// entries it is built from to globalThis.__tabwardenRoutes. It must never change what the real dispatcher
// does with the Map, and never touch anything but that one module.

const SPY = "tabwarden-spy:dispatch";
let dispatchUrl = "";

export function initialize(data) {
  dispatchUrl = data.dispatchUrl;
}

export async function resolve(specifier, context, nextResolve) {
  if (specifier === SPY) return { url: SPY, shortCircuit: true };
  const resolved = await nextResolve(specifier, context);
  if (resolved.url === dispatchUrl && context.parentURL !== SPY) {
    return { url: SPY, shortCircuit: true };
  }
  return resolved;
}

export async function load(url, context, nextLoad) {
  if (url !== SPY) return nextLoad(url, context);
  const real = JSON.stringify(dispatchUrl);
  const source = `
    export * from ${real};
    import { createDispatcher as realCreateDispatcher } from ${real};
    export function createDispatcher(handlers, options) {
      const entries = [...handlers]; // as given: a repeated action would vanish inside a Map
      globalThis.__tabwardenRoutes(entries.map((entry) => entry[0]));
      return realCreateDispatcher(entries, options);
    }
  `;
  return { format: "module", source, shortCircuit: true };
}
