// chunking.js — splits an oversize reply's JSON text into hop-3 `chunk` messages (protocol.md,
// "Chunking"). Pure: no chrome. It must never split a surrogate pair (slices end on code-point
// boundaries), never emit a slice over the byte budget, and never reorder slices.

/** Replies whose UTF-8 JSON exceeds this many bytes are sent as chunks. */
export const CHUNK_BYTES = 1_000_000;

/** Largest reply (UTF-8 JSON bytes) the host reassembles from chunks. */
export const MAX_REASSEMBLED = 64 * 1024 * 1024;

/** Largest base64 payload (a screenshot, a PDF) one reply may carry: the reply then stays under
 * the bridge's 32 MiB frame from the host to the MCP server (docs/protocol.md), so a bigger
 * capture is refused with a code instead of a dropped connection. */
export const MAX_RETURNED_BASE64 = 24_000_000;

/** Any UTF-16 unit outside ASCII. A string without one has as many UTF-8 bytes as units, which
 * the regular expression engine finds far faster than a loop over the units: replies are mostly
 * ASCII (JSON, and the base64 of every screenshot and PDF). */
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * UTF-8 length of the code point at `i` of `s` (`s.charCodeAt(i)` is `c`), and the units it
 * spans, packed as `bytes * 4 + units` so the hot loops allocate nothing. A lone surrogate
 * counts as U+FFFD (3 bytes), as TextEncoder encodes it.
 * @param {string} s
 * @param {number} i
 * @param {number} c
 * @returns {number}
 */
function codePoint(s, i, c) {
  if (c < 0x80) return 5; // 1 byte, 1 unit
  if (c < 0x800) return 9;
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 18; // 4 bytes, 2 units
  }
  return 13;
}

/**
 * UTF-8 byte length of a string without allocating its encoding.
 * @param {string} s
 * @returns {number}
 */
export function utf8Length(s) {
  const first = s.search(NON_ASCII);
  if (first < 0) return s.length;
  let bytes = first;
  for (let i = first; i < s.length; ) {
    const packed = codePoint(s, i, s.charCodeAt(i));
    bytes += packed >> 2;
    i += packed & 3;
  }
  return bytes;
}

/**
 * Slice `jsonText` into `chunk` messages for reply `id`, each `data` at most `limitBytes` UTF-8
 * bytes, cut only between code points. Joining every `data` in `seq` order gives `jsonText`
 * back. A text that fits gives one message (total 1); session.js sends such replies whole.
 * @param {string} id the reply's id
 * @param {string} jsonText the reply serialised with JSON.stringify
 * @param {number} [limitBytes=CHUNK_BYTES] at least 4 (one code point always fits)
 * @returns {Array<{type: "chunk", id: string, seq: number, total: number, data: string}>}
 */
export function chunkReply(id, jsonText, limitBytes = CHUNK_BYTES) {
  if (typeof id !== "string" || typeof jsonText !== "string") throw new TypeError("chunkReply(id, jsonText)");
  if (!Number.isInteger(limitBytes) || limitBytes < 4) throw new RangeError("chunkReply: limitBytes must be an integer >= 4");
  /** @type {string[]} */
  const slices = [];
  const n = jsonText.length;
  for (let start = 0; start < n; ) {
    const ascii = jsonText.slice(start, start + limitBytes);
    if (!NON_ASCII.test(ascii)) {
      slices.push(ascii); // limitBytes units of ASCII are limitBytes bytes (or the rest)
      start += ascii.length;
      continue;
    }
    let i = start;
    for (let bytes = 0; i < n; ) {
      const packed = codePoint(jsonText, i, jsonText.charCodeAt(i));
      if (bytes + (packed >> 2) > limitBytes) break;
      bytes += packed >> 2;
      i += packed & 3;
    }
    slices.push(jsonText.slice(start, i));
    start = i;
  }
  if (slices.length === 0) slices.push("");
  const total = slices.length;
  return slices.map((data, seq) => ({ type: "chunk", id, seq, total, data }));
}
