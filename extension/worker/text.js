// text.js — paging long page text into bounded slices. Pure: no chrome. It must never split a
// surrogate pair at a slice boundary, and never return more than maxChars UTF-16 code units
// except one whole pair when maxChars is 1 (so paging always makes progress).

/**
 * One slice of `text` starting at `offset` (UTF-16 code units). When the cut would fall inside
 * a surrogate pair it moves one unit earlier, so the slice may be one shorter than maxChars
 * (or, with maxChars 1 at a pair, the pair itself).
 * @param {string} text
 * @param {number} [offset=0] clamped to [0, text.length]
 * @param {number} [maxChars=100000] at least 1
 * @returns {{text: string, nextOffset: number | null, totalChars: number}}
 */
export function truncate(text, offset = 0, maxChars = 100_000) {
  const s = typeof text === "string" ? text : "";
  const total = s.length;
  let start = Math.min(Math.max(0, Math.trunc(Number(offset) || 0)), total);
  // never start on the low half of a pair
  if (start > 0 && start < total && isLow(s.charCodeAt(start)) && isHigh(s.charCodeAt(start - 1))) start -= 1;
  const max = Math.max(1, Math.trunc(Number(maxChars) || 1));
  let end = Math.min(total, start + max);
  if (end < total && isHigh(s.charCodeAt(end - 1)) && isLow(s.charCodeAt(end))) {
    end += end - 1 > start ? -1 : 1; // step back before the pair, or take it whole if it is all there is
  }
  return { text: s.slice(start, end), nextOffset: end < total ? end : null, totalChars: total };
}

/** @param {number} c */
const isHigh = (c) => c >= 0xd800 && c <= 0xdbff;
/** @param {number} c */
const isLow = (c) => c >= 0xdc00 && c <= 0xdfff;
