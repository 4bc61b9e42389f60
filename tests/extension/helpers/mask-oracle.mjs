// mask-oracle.mjs — lib/mask.js behind a JSON-lines pipe, for tests/extension/test_mask_properties.py:
// each input line {"text": string, "learn"?: string[]} answers one line {"out": string} with the
// text as a reply would carry it (maskOutcome over {text}, the learned URLs' rules applied).
import { createInterface } from "node:readline";
import { learnedUrlRule, maskOutcome } from "../../../extension/lib/mask.js";

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  const { text, learn = [] } = JSON.parse(line);
  const urls = learn.map(learnedUrlRule).filter((r) => r !== null);
  const out = maskOutcome("page_text", { ok: true, result: { text } }, { urls });
  process.stdout.write(`${JSON.stringify({ out: out.ok ? out.result.text : null })}\n`);
}
