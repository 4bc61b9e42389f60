// options.js — entry script of options.html (pairing this browser, and its Policy section). Thin
// wiring only: hands the real document, runtime messaging (via lib/chrome-api.js) and WebAuthn
// create()/get() to lib/options-page.js and lib/policy-page.js. It must never hold pairing or
// policy logic itself, and never talk to the host except through the service worker.

import { sendRuntimeMessage } from "./lib/chrome-api.js";
import { runOptionsPage } from "./lib/options-page.js";
import { runPolicyPage } from "./lib/policy-page.js";

/** @param {object} optionsJSON WebAuthn creation options in their JSON form */
async function createCredential(optionsJSON) {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(/** @type {any} */ (optionsJSON));
  const cred = /** @type {PublicKeyCredential | null} */ (await navigator.credentials.create({ publicKey }));
  if (cred === null) throw new Error("no credential");
  return cred.toJSON();
}

/** @param {object} optionsJSON WebAuthn request options in their JSON form */
async function getAssertion(optionsJSON) {
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(/** @type {any} */ (optionsJSON));
  const cred = /** @type {PublicKeyCredential | null} */ (await navigator.credentials.get({ publicKey }));
  if (cred === null) throw new Error("no assertion");
  return cred.toJSON();
}

const policyPage = runPolicyPage({ doc: document, api: { sendMessage: sendRuntimeMessage, getAssertion } });
policyPage.catch((err) => console.warn("tabwarden: policy section failed", err));

runOptionsPage({
  doc: document,
  api: { sendMessage: sendRuntimeMessage, createCredential },
  onPaired: () => {
    policyPage.then((p) => p.refresh()).catch(() => {});
  },
}).catch((err) => console.warn("tabwarden: options page failed", err));
