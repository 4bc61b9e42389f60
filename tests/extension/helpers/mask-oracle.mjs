// mask-oracle.mjs — worker/mask.js behind a JSON-lines pipe, for tests/extension/test_mask_properties.py:
// each input line {"text": string, "learn"?: string[], "names"?: string[], "everyQuery"?: boolean}
// answers one line {"out": string} with the text as a reply would carry it (maskOutcome over
// {text}, with the learned URLs' rules, the learned password field names, and failing closed).
import { createInterface } from "node:readline";
import { learnedUrlRule, maskOutcome } from "../../../extension/worker/mask.js";

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  const { text, learn = [], names = [], everyQuery = false } = JSON.parse(line);
  const urls = learn.map(learnedUrlRule).filter((r) => r !== null);
  const extraNames = new Set(names.map((n) => n.toLowerCase()));
  const out = maskOutcome("page_text", { ok: true, result: { text } }, { urls, extraNames, everyQuery });
  process.stdout.write(`${JSON.stringify({ out: out.ok ? out.result.text : null })}\n`);
}
