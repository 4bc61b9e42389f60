// canonical_peer.mjs — the JavaScript half of fuzz/fuzz_canonical.py's differential check.
// Reads one JSON value per line on stdin (ASCII, so lone surrogates arrive as \u escapes) and
// writes one line per value: {"ok": <base64 of canonicalJson's UTF-8 bytes>} or {"refused": true}.
// It must never exit on a bad value: one process serves a whole fuzzing run.

import { createInterface } from "node:readline";
import { canonicalJson } from "../../extension/shared/canonical-json.js";

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let answer;
  try {
    const text = canonicalJson(JSON.parse(line));
    answer = { ok: Buffer.from(text, "utf8").toString("base64") };
  } catch {
    answer = { refused: true };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
