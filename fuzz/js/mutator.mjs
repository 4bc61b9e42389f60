// mutator.mjs — what the Node fuzz harnesses share: a seeded PRNG, a structure-aware mutator
// (valid seeds bent: fields dropped, retyped, renamed, swapped for edge values or donors), the
// replayable JSON form of an input, and the run loop with its flags:
//   node fuzz/js/<harness>.mjs --runs N --seed S [--seconds S] [--artifact FILE] [--replay FILE]
// A harness passes its targets ({name: {run(input), seeds}}) to `runTargets`, which prints
// "ok <n> runs" and exits 0, or prints the failing target and input (also written to --artifact)
// and exits 1. Dependency-free, so it runs wherever node does.

import { readFileSync, writeFileSync } from "node:fs";

// --- the PRNG ------------------------------------------------------------------

/** mulberry32: small, seeded, reproducible. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick(rand, items) {
  return items[Math.floor(rand() * items.length)];
}

export function clone(value) {
  if (Array.isArray(value)) return value.map(clone);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, { value: clone(v), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

export function bendString(rand, s) {
  const i = Math.floor(rand() * (s.length + 1));
  switch (Math.floor(rand() * 6)) {
    case 0: return s.slice(0, i);
    case 1: return s.slice(0, i) + pick(rand, ["?", "#", "/", "&id=", "\ud800", "%00", " ", "A"]) + s.slice(i);
    case 2: return s.toUpperCase();
    case 3: return s + s;
    case 4: return s.slice(0, i) + s.slice(i + 1);
    default: return s.slice(0, i) + String.fromCharCode((s.charCodeAt(i) || 65) + 1) + s.slice(i + 1);
  }
}

/**
 * A copy of `seed` with 1..4 edits: fields dropped, retyped, renamed (to one of `keys`), or set
 * to an `edges` value or a donor.
 */
export function mutate(rand, seed, donors, edges, keys) {
  let root = clone(seed);
  const edits = 1 + Math.floor(rand() * 4);
  for (let n = 0; n < edits; n += 1) {
    const holders = [];
    const walk = (v) => {
      if (v !== null && typeof v === "object" && (Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype)) {
        holders.push(v);
        for (const item of Object.values(v)) walk(item);
      }
    };
    walk(root);
    if (holders.length === 0 || rand() < 0.03) {
      root = clone(pick(rand, rand() < 0.5 ? edges : donors));
      continue;
    }
    const holder = pick(rand, holders);
    const keys = Object.keys(holder);
    const key = keys.length > 0 && rand() < 0.85 ? pick(rand, keys) : pick(rand, keys);
    const op = Math.floor(rand() * 6);
    const set = (v) => Object.defineProperty(holder, key, { value: v, enumerable: true, writable: true, configurable: true });
    if (op === 0) delete holder[key];
    else if (op === 1) set(clone(pick(rand, edges)));
    else if (op === 2) set(clone(pick(rand, donors)));
    else if (op === 3 && typeof holder[key] === "string") set(bendString(rand, holder[key]));
    else if (op === 4 && typeof holder[key] === "number") set(pick(rand, [holder[key] + 1, holder[key] - 1, 0, -holder[key]]));
    else set(clone(pick(rand, edges)));
  }
  return root;
}

// --- the models' shared predicates -------------------------------------------------------

/** A plain object (no class, no array), as the wire formats are. */
export const plain = (v) => v !== null && typeof v === "object" && !Array.isArray(v)
  && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
export const nonEmpty = (v) => typeof v === "string" && v.length > 0;

// --- the loop -----------------------------------------------------------------------------------

function parseArgs(argv) {
  const opts = { runs: 10000, seed: 1, seconds: null, artifact: null, replay: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === "--runs") opts.runs = Number(value);
    else if (flag === "--seed") opts.seed = Number(value);
    else if (flag === "--seconds") opts.seconds = Number(value);
    else if (flag === "--artifact") opts.artifact = value;
    else if (flag === "--replay") opts.replay = value;
    else throw new Error(`unknown flag ${flag}`);
  }
  return opts;
}

/** A JSON form of an input that replays exactly (undefined, NaN and Infinity tagged). */
function describe(target, input) {
  return JSON.stringify({ target, input }, (k, v) => (v === undefined ? { $: "undefined" } : typeof v === "number" && !Number.isFinite(v) ? { $: String(v) } : v));
}

function revive(text) {
  const tags = { undefined: undefined, NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };
  return JSON.parse(text, (k, v) => (plain(v) && Object.keys(v).length === 1 && typeof v.$ === "string" && v.$ in tags ? tags[v.$] : v));
}

/**
 * Run `targets` round-robin: each target's seeds first, then mutants of them.
 * @param {Record<string, {run: (input: unknown) => unknown, seeds: unknown[]}>} targets
 * @param {{edges: unknown[], keys: string[]}} vocabulary
 */
export async function runTargets(targets, { edges, keys }) {
  const NAMES = Object.keys(targets);
  const DONORS = NAMES.flatMap((n) => targets[n].seeds.flatMap((s) => [s, ...Object.values(s)]));
  const opts = parseArgs(process.argv.slice(2));
  if (opts.replay !== null) {
    for (const line of readFileSync(opts.replay, "utf8").split("\n").filter(Boolean)) {
      const { target, input } = revive(line);
      await targets[target].run(input);
    }
    process.stdout.write("ok replayed\n");
    return;
  }
  const rand = prng(opts.seed);
  const deadline = opts.seconds === null ? Infinity : Date.now() + opts.seconds * 1000;
  let done = 0;
  for (; done < opts.runs && Date.now() < deadline; done += 1) {
    const name = NAMES[done % NAMES.length];
    const { run, seeds } = targets[name];
    const input = done < NAMES.length * 6 ? seeds[Math.floor(done / NAMES.length) % seeds.length] : mutate(rand, pick(rand, seeds), DONORS, edges, keys);
    try {
      await run(input);
    } catch (err) {
      const line = describe(name, input);
      process.stderr.write(`${name}: ${err && err.stack ? err.stack : err}\nfailing input: ${line.slice(0, 2000)}\n`);
      if (opts.artifact) writeFileSync(opts.artifact, `${line}\n`);
      process.stdout.write(`FAILED after ${done} runs\n`);
      process.exitCode = 1;
      return;
    }
  }
  process.stdout.write(`ok ${done} runs\n`);
}

