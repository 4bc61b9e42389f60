// options.js — entry script of options.html (pairing this browser). Thin wiring only: hands the
// real document, runtime messaging (via lib/chrome-api.js) and WebAuthn create() to
// lib/options-page.js. It must never hold pairing logic itself.

import { sendRuntimeMessage } from "./lib/chrome-api.js";
import { runOptionsPage } from "./lib/options-page.js";

/** @param {object} optionsJSON WebAuthn creation options in their JSON form */
async function createCredential(optionsJSON) {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(/** @type {any} */ (optionsJSON));
  const cred = /** @type {PublicKeyCredential | null} */ (await navigator.credentials.create({ publicKey }));
  if (cred === null) throw new Error("no credential");
  return cred.toJSON();
}

runOptionsPage({
  doc: document,
  api: { sendMessage: sendRuntimeMessage, createCredential },
}).catch((err) => console.warn("tabwarden: options page failed", err));
