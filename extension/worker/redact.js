// redact.js — the worker's name for the card masking in page/redact.js (one source for the worker
// and the page: that file's header says how it loads both ways). Pure: no chrome. It must never
// hold a second copy of the rule: it only re-exports page/redact.js's functions.

import "../page/redact.js";

/** Luhn checksum over a string of digits. */
export const luhnValid = globalThis.tabwardenRedact.luhnValid;

/** Replace every run of digit groups holding a card-like number with "[card]". */
export const maskCards = globalThis.tabwardenRedact.maskCards;
