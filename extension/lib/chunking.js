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

/**
 * UTF-8 length of one UTF-16 unit at `i` of `s`, and how many units that code point spans.
 * A lone surrogate counts as U+FFFD (3 bytes), as TextEncoder encodes it.
 * @param {string} s
 * @param {number} i
 * @returns {[bytes: number, units: number]}
 */
function codePointAt(s, i) {
  const c = s.charCodeAt(i);
  if (c < 0x80) return [1, 1];
  if (c < 0x800) return [2, 1];
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return [4, 2];
  }
  return [3, 1];
}

/**
 * UTF-8 byte length of a string without allocating its encoding.
 * @param {string} s
 * @returns {number}
 */
export function utf8Length(s) {
  let bytes = 0;
  for (let i = 0; i < s.length; ) {
    const [b, u] = codePointAt(s, i);
    bytes += b;
    i += u;
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
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < jsonText.length; ) {
    const [b, u] = codePointAt(jsonText, i);
    if (bytes + b > limitBytes) {
      slices.push(jsonText.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += b;
    i += u;
  }
  if (start < jsonText.length || slices.length === 0) slices.push(jsonText.slice(start));
  const total = slices.length;
  return slices.map((data, seq) => ({ type: "chunk", id, seq, total, data }));
}
