// redact.js — masks card-like numbers in text before it leaves the extension. Pure: no chrome.
// It must never pass through a 13–19 digit run (spaces or dashes between digits allowed) that
// passes the Luhn check (alone or as whole groups of a longer grouped run), and should leave
// other numbers (dates, prices, long ungrouped ids) alone.

/** Maximal runs of digit groups joined by single spaces, no-break spaces or dashes. */
const RUN = /(?<![0-9])[0-9]+(?:[ \u00a0-][0-9]+)*(?![0-9])/g;
const SEPARATOR = /[ \u00a0-]/;

/**
 * Luhn checksum over a string of digits.
 * @param {string} digits
 * @returns {boolean}
 */
export function luhnValid(digits) {
  if (!/^[0-9]+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * True when some contiguous sequence of the run's digit groups holds 13–19 digits passing
 * Luhn. Group-aligned, so "4111 1111 1111 1111 12" is still caught, while one ungrouped
 * 25-digit id is not a card.
 * @param {string[]} groups
 */
function holdsCard(groups) {
  for (let i = 0; i < groups.length; i++) {
    let digits = "";
    for (let j = i; j < groups.length; j++) {
      digits += groups[j];
      if (digits.length > 19) break;
      if (digits.length >= 13 && luhnValid(digits)) return true;
    }
  }
  return false;
}

/**
 * Replace every run of digit groups that holds a card-like number (13–19 digits passing Luhn)
 * with "[card]".
 * @param {string} text
 * @returns {string}
 */
export function maskCards(text) {
  if (typeof text !== "string") return "";
  return text.replace(RUN, (run) => (holdsCard(run.split(SEPARATOR)) ? "[card]" : run));
}
