// webauthn.js — the WebAuthn calls extension pages make (options page, confirm window): parse the
// host's JSON options, run navigator.credentials.create()/get() in the page (the service worker
// cannot), and return the result's toJSON(). Browser-only glue; it must never run in the worker and
// never alter the host's options.

/* global PublicKeyCredential */

/** @param {object} optionsJSON WebAuthn creation options in their JSON form */
export async function createCredential(optionsJSON) {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(/** @type {any} */ (optionsJSON));
  const cred = /** @type {PublicKeyCredential | null} */ (await navigator.credentials.create({ publicKey }));
  if (cred === null) throw new Error("no credential");
  return cred.toJSON();
}

/** @param {object} optionsJSON WebAuthn request options in their JSON form */
export async function getAssertion(optionsJSON) {
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(/** @type {any} */ (optionsJSON));
  const cred = /** @type {PublicKeyCredential | null} */ (await navigator.credentials.get({ publicKey }));
  if (cred === null) throw new Error("no assertion");
  return cred.toJSON();
}
