// page/redact.js — masks card-like numbers in text: the ONE copy of this rule, used in the page
// (page_snapshot names and values, page_get_state text) and in the service worker (page_text,
// page_markdown, page_scrape, through worker/redact.js). Pure: no chrome, no DOM, no I/O. It must
// never pass through a 13–19 digit run (spaces or dashes between digits allowed) that passes the
// Luhn check (alone or as whole groups of a longer grouped run), and should leave other numbers
// (dates, prices, long ungrouped ids) alone.
//
// How one file serves both sides (the same for every file in page/): it is a classic script with
// no import or export, so chrome.scripting.executeScript({files}) can inject it into a page's
// isolated world, and it is also a valid ES module, so the worker and Node can `import` it for
// its side effect. Either way it defines one frozen object on globalThis (`tabwardenRedact`)
// and nothing else; a second injection into the same world replaces it with an equal one.
// Everything else stays inside the function below, so re-injection never redeclares a binding.

var tabwardenRedact = (() => {
  const SEPARATOR = /[ \u00a0-]/;
  const isDigit = (/** @type {string} */ c) => c >= "0" && c <= "9";
  const isSeparator = (/** @type {string} */ c) => c === " " || c === "\u00a0" || c === "-";

  /**
   * Luhn checksum over a string of digits.
   * @param {string} digits
   * @returns {boolean}
   */
  function luhnValid(digits) {
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
   * with "[card]". Anything but a string becomes "".
   * @param {unknown} text
   * @returns {string}
   */
  function maskCards(text) {
    if (typeof text !== "string") return "";
    // Maximal runs of digit groups joined by single spaces, no-break spaces or dashes, found by
    // one forward scan: a regex would keep a backtrack entry per group and overflow its stack on
    // megabytes of "4 4 4 …".
    let out = "";
    let last = 0;
    let i = 0;
    const n = text.length;
    while (i < n) {
      if (!isDigit(text[i])) {
        i++;
        continue;
      }
      const start = i;
      let end = i;
      while (end < n && isDigit(text[end])) end++;
      while (end + 1 < n && isSeparator(text[end]) && isDigit(text[end + 1])) {
        end += 1;
        while (end < n && isDigit(text[end])) end++;
      }
      const run = text.slice(start, end);
      if (end - start >= 13 && holdsCard(run.split(SEPARATOR))) {
        out += `${text.slice(last, start)}[card]`;
        last = end;
      }
      i = end;
    }
    return last === 0 ? text : out + text.slice(last);
  }

  return Object.freeze({ luhnValid, maskCards });
})();
globalThis.tabwardenRedact = tabwardenRedact;
void 0; // the script's completion value, which executeScript returns: nothing to serialise
