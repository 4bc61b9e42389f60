// mask.js — every rule for what of a value may leave the extension, in one place: `maskValue`
// turns a credential (a cookie, a web-storage entry, a secret-named value) into a shape hint, and
// `maskOutcome` (run by worker/dispatch.js over every reply) masks credentials wherever they sit in
// text, and every link address (a field named in LINK_FIELDS) as a URL (`maskHref`). Pure: no
// chrome. A shape hint must never hold any character of the value itself: only its
// length and a coarse shape ("[masked: JWT]", "[masked: 32 chars, hex]"). Every cookie and
// storage value is masked, short or plain ones too. Card numbers: page/redact.js (the page needs
// that rule too), used from here.

import { maskCards } from "./redact.js";

/** A JWT: base64url header starting `{"` ("eyJ"), payload, optional signature. */
const JWT = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DIGITS = /^[0-9]+$/;
const HEX = /^[0-9a-f]+$/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** Shorter values than this are described by character classes, never called hex/base64. */
const MIN_TOKEN = 16;

/**
 * Describe `value` by shape only. `name` is accepted for the caller's convenience (the name is
 * shown next to the masked value, never inside it) and does not change the result.
 * @param {unknown} _name
 * @param {unknown} value
 * @returns {string}
 */
export function maskValue(_name, value) {
  const s = typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
  const n = [...s].length;
  if (n === 0) return "[masked: empty]";
  if (JWT.test(s)) return "[masked: JWT]";
  if (UUID.test(s)) return "[masked: UUID]";
  if (DIGITS.test(s)) return `[masked: ${plural(n, "digit")}]`;
  if (n >= MIN_TOKEN && HEX.test(s)) return `[masked: ${plural(n, "char")}, hex]`;
  if (n >= MIN_TOKEN && BASE64.test(s) && mixed(s)) return `[masked: ${plural(n, "char")}, base64]`;
  if (n >= MIN_TOKEN && BASE64URL.test(s) && mixed(s)) return `[masked: ${plural(n, "char")}, base64url]`;
  return `[masked: ${plural(n, "char")}, ${classes(s)}]`;
}

/**
 * The character classes present, in a fixed order: "letters+digits+symbols".
 * @param {string} s
 */
export function classes(s) {
  const out = [];
  if (/[A-Za-z]/.test(s)) out.push("letters");
  if (/[0-9]/.test(s)) out.push("digits");
  if (/\s/.test(s)) out.push("spaces");
  if (/[^A-Za-z0-9\s]/.test(s)) out.push("symbols");
  return out.join("+");
}

/** Token-like: letters and digits both present (so "aaaaaaaaaaaaaaaaaaaa" is not "base64"). */
const mixed = (/** @type {string} */ s) => /[A-Za-z]/.test(s) && /[0-9]/.test(s);

/**
 * @param {number} n
 * @param {string} word
 */
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// ---------------------------------------------------------------- what may leave the extension
//
// Every rule that decides what of a value may leave the extension lives below (card numbers in
// page/redact.js, which the page needs as well). worker/dispatch.js runs `maskOutcome` over every
// reply, ok result and error message alike, so no handler can skip it; handlers may mask earlier
// for reasons of their own (capture.js never keeps text unmasked), never with other rules.
// Every pattern here is linear: a name or token may start only where one cannot go on (the
// lookbehinds), every repetition that could fail is bounded, and a value is read by a scan that
// never goes back. A 10 MB page text is read a fixed number of times.

/** Name parts that mark a credential only as a whole part (`pin`, `apiKey`, not `spinner`, `monkey`). */
const SECRET_PARTS = new Set([
  "pwd", "pw", "pass", "pin", "key", "sid", "sig", "otp", "auth", "oauth", "jwt", "csrf", "xsrf", "bearer",
  "private", "mfa", "totp", "hmac", "cvv", "cvc", "ssn", "sessid",
]);
/** Words that mark a credential wherever they occur in a name (its letters and digits, lowercased). */
const SECRET_WORDS = ["password", "passwd", "passphrase", "passcode", "secret", "token", "apikey", "credential", "cookie", "signature", "session", "sessid", "authorization"];
/** In a URL's query only: an OAuth authorization code (`code=`), short-lived but a credential. */
const URL_ONLY_PARTS = new Set(["code"]);
/** Names longer than this are not names (and are not scanned further). */
const MAX_NAME = 64;
/** A name's parts: camelCase humps, runs of capitals, digit runs; `_ - . [ ]` and the rest split. */
const NAME_PART = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

/**
 * True when `name` says its value is a credential: a whole part is one of SECRET_PARTS, or its
 * letters hold one of SECRET_WORDS, or it is (case-insensitively) one of `extra` (the names the
 * caller learned, lowercased).
 * @param {unknown} name
 * @param {{extraNames?: ReadonlySet<string>, url?: boolean}} [opts] `url`: a URL query name
 */
export function isSecretName(name, { extraNames, url = false } = {}) {
  if (typeof name !== "string" || name === "" || name.length > MAX_NAME) return false;
  if (extraNames !== undefined && extraNames.has(name.toLowerCase())) return true;
  const parts = (name.match(NAME_PART) ?? []).map((p) => p.toLowerCase());
  if (parts.some((p) => SECRET_PARTS.has(p) || (url && URL_ONLY_PARTS.has(p)))) return true;
  const joined = parts.join("");
  return SECRET_WORDS.some((w) => joined.includes(w));
}

/** A header line whose whole value is a credential (a request echoed back, a log of one). */
const HEADER_LINE = /^([ \t]{0,16}(?:set-)?cookie2?|[ \t]{0,16}(?:proxy-)?authorization)([ \t]{0,16}:[ \t]*)([^\r\n]+)/gim;
/** Where an auth scheme's credential begins (read on by `runEnd`, never by backtracking). */
const SCHEME_START = /(?<![A-Za-z0-9])(?:Bearer|Basic|Token)[ \t]{1,16}(?=[A-Za-z0-9._~+/=-]{8})/gi;
/** Whether SCHEME_START can match at all (a cheap test first). */
const SCHEME_WORD = /bearer|basic|token/i;
const ANY_DIGIT = /[0-9]/;
/** Where a JWT begins (header `{"` → "eyJ"): only where a token cannot go on. */
const JWT_START = /(?<![A-Za-z0-9_-])eyJ/g;
/** The characters of an auth scheme's credential, and of a JWT's parts. */
const TOKEN_CHAR = /[A-Za-z0-9._~+/=-]/;
const JWT_CHAR = /[A-Za-z0-9_-]/;

/**
 * The end of the run of `chars` from `i`. A loop, not a regex: irregexp keeps a backtrack entry
 * per character of a greedy run it may have to give back, and a 10 MB run overflows its stack.
 * @param {string} s @param {number} i @param {RegExp} chars one character class
 */
function runEnd(s, i, chars) {
  let j = i;
  while (j < s.length && chars.test(s[j])) j++;
  return j;
}

/**
 * Replace what `scan` finds at each match of `start` (a bounded pattern) with its replacement.
 * @param {string} s
 * @param {RegExp} start global
 * @param {(s: string, from: number, to: number) => {to: number, text: string} | null} scan the
 *   match is s[from, to); returns how far the replaced text reaches and what replaces it
 */
function replaceScanned(s, start, scan) {
  const re = start; // module-level and global: reset here, used synchronously to the end
  re.lastIndex = 0;
  let out = "";
  let last = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    const hit = scan(s, m.index, m.index + m[0].length);
    if (hit === null) continue;
    out += s.slice(last, m.index) + hit.text;
    last = hit.to;
    re.lastIndex = Math.max(hit.to, m.index + 1);
  }
  return last === 0 ? s : out + s.slice(last);
}

/**
 * What follows a scheme word and is a word, not a credential: 8–20 lowercase ASCII letters (a
 * sentence's full stop after them allowed): "Basic customization", "Token validation". The
 * credentials the rule is for carry a digit, a capital or one of `+/=_-~.`: JWTs ("eyJ"),
 * prefixed keys (`ghp_`, `xoxb-`, `sk_live_`, `glpat-`), UUIDs; a random one lacks all three
 * only by chance: hex (6/16)^n (4e-4 at 8 characters, 1e-17 at 40), base64/base64url/base64 of
 * `user:pass` (26/64)^n (7e-4 at 8, 1e-8 at 20). Runs over 20 letters stay masked whatever
 * their case, and an `Authorization:` line is masked whole whatever it holds.
 */
const SCHEME_WORD_AFTER = /^[a-z]{8,20}\.?$/;

/** @type {(s: string, from: number, to: number) => {to: number, text: string} | null} */
const schemeCredential = (s, from, to) => {
  const end = runEnd(s, to, TOKEN_CHAR);
  if (SCHEME_WORD_AFTER.test(s.slice(to, end))) return null;
  return { to: end, text: `${s.slice(from, to)}${maskValue("", s.slice(to, end))}` };
};

/** @type {(s: string, from: number, to: number) => {to: number, text: string} | null} */
const jwt = (s, from, to) => {
  const a = runEnd(s, to, JWT_CHAR);
  if (a - to < 4 || s[a] !== ".") return null;
  const b = runEnd(s, a + 1, JWT_CHAR);
  if (b - (a + 1) < 4 || s[b] !== ".") return null;
  return { to: runEnd(s, b + 1, JWT_CHAR), text: "[masked: JWT]" };
};

/**
 * A name and its separator: `name=`, `name: `, `"name": `, `'name'=`, `user[password]=`. The name
 * starts only where a name cannot go on and is bounded, so a long run is tried once. Whether the
 * name is secret is decided in code (isSecretName), and only then is the value read.
 */
const NAME_SEPARATOR = /(?<![A-Za-z0-9_.-])(["']?)([A-Za-z_][A-Za-z0-9_.-]{0,63})\]?\1[ \t]{0,8}([:=])[ \t]{0,8}/g;
/** Where a value masked earlier begins: it is skipped, never masked again. */
const ALREADY = ["[masked", "[card]"];

/**
 * Where the value starting at `i` ends, and which part of it is masked: a quoted value to its
 * closing quote (backslash escapes honoured; an unclosed one to the end of the line); a JSON
 * value after `"name":` to `,` `}` `]` or the end of the line; any other value to the next `&`,
 * the end of the line, or a `"` that closes the string around it.
 * @param {string} s
 * @param {number} i
 * @param {boolean} json
 * @returns {{from: number, to: number, next: number}} mask s[from, to); go on at `next`
 */
function valueAt(s, i, json) {
  const n = s.length;
  const q = s[i];
  if (q === '"' || q === "'") {
    let j = i + 1;
    while (j < n && s[j] !== q && s[j] !== "\n" && s[j] !== "\r") j += s[j] === "\\" ? 2 : 1;
    if (j > n) j = n;
    return { from: i + 1, to: j, next: j < n && s[j] === q ? j + 1 : j };
  }
  let j = i;
  if (json) {
    while (j < n && s[j] !== "," && s[j] !== "}" && s[j] !== "]" && s[j] !== "\n" && s[j] !== "\r") j++;
  } else {
    while (j < n && s[j] !== "&" && s[j] !== "\n" && s[j] !== "\r" && !(s[j] === '"' && closesString(s, j + 1))) j++;
  }
  return { from: i, to: j, next: j };
}

/** After a `"` at j-1: the end, or what ends a string in JSON, HTML or code. @param {string} s @param {number} j */
const closesString = (s, j) => j >= s.length || /[,}\]>);\s]/.test(s[j]);

/** isSecretName's answers for the fixed rules (texts and results repeat their names), bounded. */
const knownNames = new Map();
const MAX_KNOWN_NAMES = 4096;

/**
 * Mask the values of secret-named pairs, each whole.
 * @param {string} s
 * @param {ReadonlySet<string> | undefined} extraNames
 */
function maskNamedValues(s, extraNames) {
  const re = NAME_SEPARATOR; // global: reset here, used synchronously to the end
  re.lastIndex = 0;
  const learned = extraNames !== undefined && extraNames.size > 0 ? extraNames : undefined;
  let out = "";
  let last = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    let named = knownNames.get(m[2]);
    if (named === undefined) {
      named = isSecretName(m[2]);
      if (knownNames.size >= MAX_KNOWN_NAMES) knownNames.clear();
      knownNames.set(m[2], named);
    }
    if (!named && (learned === undefined || !learned.has(m[2].toLowerCase()))) continue;
    const at = m.index + m[0].length;
    const inside = s[at] === '"' || s[at] === "'" ? at + 1 : at;
    const done = ALREADY.find((a) => s.startsWith(a, inside));
    if (done !== undefined) {
      const close = s.indexOf("]", at);
      re.lastIndex = close < 0 ? s.length : close + 1;
      continue;
    }
    const v = valueAt(s, at, m[1] === '"' && m[3] === ":");
    re.lastIndex = Math.max(v.next, at + 1);
    if (v.to <= v.from) continue;
    out += s.slice(last, v.from) + maskValue(m[2], s.slice(v.from, v.to));
    last = v.to;
  }
  return last === 0 ? s : out + s.slice(last);
}

/**
 * A URL learned to carry what a person typed (a GET form's submission), as the text to find and
 * what replaces it: host, path and query with every query value masked. The scheme is left out
 * so a title Chrome made of the URL ("host/path?…") is caught too. Null for a URL with no query.
 * @param {unknown} url
 * @returns {{find: string, replace: string} | null}
 */
export function learnedUrlRule(url) {
  let u;
  try {
    u = new URL(String(url));
  } catch {
    return null;
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.search.length < 2) return null;
  const find = `${u.host}${u.pathname}${u.search}`;
  const parts = u.search.slice(1).split("&").map((pair) => {
    const eq = pair.indexOf("=");
    if (eq < 0) return pair;
    let value = pair.slice(eq + 1);
    try {
      value = decodeURIComponent(value.replace(/\+/g, " "));
    } catch {
      // kept as sent: masked by shape all the same
    }
    return `${pair.slice(0, eq)}=${maskValue("", value)}`;
  });
  return { find, replace: `${u.host}${u.pathname}?${parts.join("&")}` };
}

/** What a query value runs over (it ends at `&`, at a space or quote, at `<`, `>` or `#`). */
const QUERY_CHAR = /[^\s"'`<>#&]/;

/**
 * Every query value of every URL in `s` masked (each `?` starts a query; each `name=value` pair
 * up to `&` or a character a URL cannot hold): what a reply is masked with when the learned rules
 * could not be restored, so it fails closed. A value masked before is stepped over.
 * @param {string} s
 */
function maskEveryQuery(s) {
  const n = s.length;
  let out = "";
  let last = 0;
  let q = s.indexOf("?");
  while (q >= 0) {
    let i = q + 1;
    while (i < n) {
      let eq = i;
      while (eq < n && s[eq] !== "=" && QUERY_CHAR.test(s[eq])) eq++;
      if (eq < n && s[eq] === "=") {
        const from = eq + 1;
        let to = from;
        if (ALREADY.some((a) => s.startsWith(a, from))) {
          const close = s.indexOf("]", from);
          to = close < 0 ? n : close + 1;
        } else {
          while (to < n && QUERY_CHAR.test(s[to])) to++;
          if (to > from) {
            out += s.slice(last, from) + maskValue("", s.slice(from, to));
            last = to;
          }
        }
        eq = to;
      }
      if (eq < n && s[eq] === "&") i = eq + 1;
      else {
        i = eq;
        break;
      }
    }
    q = s.indexOf("?", Math.max(i, q + 1));
  }
  return last === 0 ? s : out + s.slice(last);
}

/**
 * What a reply is masked with beyond the fixed rules: the URLs learned to carry typed values
 * (`learnedUrlRule`), the names password fields had (lowercased, worker/secret-fields.js), and
 * `everyQuery` when a learned rule may be missing (storage failed): every URL query value.
 * @typedef {{urls?: ReadonlyArray<{find: string, replace: string}>, extraNames?: ReadonlySet<string>,
 *   everyQuery?: boolean}} MaskContext
 */

/**
 * Text as it may leave the extension: learned URLs' query values (every URL's with `everyQuery`);
 * the values of names password fields had (`extraNames`); `Cookie:`/`Set-Cookie:`/
 * `Authorization:` lines whole; `Bearer`/`Basic`/`Token` credentials; JWTs; the values of
 * secret-named pairs whole (quoted, JSON, form-encoded, multi-word); card-like numbers.
 * Idempotent: a value masked before is left as it is.
 * @param {unknown} text
 * @param {MaskContext} [ctx]
 * @returns {string}
 */
export function maskText(text, ctx = {}) {
  let s = typeof text === "string" ? text : "";
  for (const rule of ctx.urls ?? []) if (s.includes(rule.find)) s = s.replaceAll(rule.find, () => rule.replace);
  if (ctx.everyQuery === true && s.includes("?")) s = maskEveryQuery(s);
  // Each rule runs only where what it needs is present: most strings of a result (names, refs,
  // short labels) hold none of it, and a snapshot has tens of thousands of them.
  const colon = s.includes(":");
  if (colon) s = s.replace(HEADER_LINE, (all, name, sep, value) => (ALREADY.some((a) => value.startsWith(a)) ? all : `${name}${sep}${maskValue(name, value)}`));
  if (SCHEME_WORD.test(s)) s = replaceScanned(s, SCHEME_START, schemeCredential);
  if (s.includes("eyJ")) s = replaceScanned(s, JWT_START, jwt);
  if (colon || s.includes("=")) s = maskNamedValues(s, ctx.extraNames);
  return ANY_DIGIT.test(s) ? maskCards(s) : s;
}

/** A query value that looks like a token whatever its name. @param {string} v */
const tokenLike = (v) => /^eyJ/.test(v) || (v.length >= 20 && /[A-Za-z]/.test(v) && /[0-9]/.test(v) && /^[A-Za-z0-9._~+/=-]+$/.test(v));

/**
 * One part of a query as URLSearchParams reads it (`plus`: "+" is a space), or as written when it
 * is not valid percent-encoding.
 * @param {string} s @param {boolean} plus
 */
function decodeQuery(s, plus) {
  try {
    return decodeURIComponent(plus ? s.replace(/\+/g, " ") : s);
  } catch {
    return s;
  }
}

/**
 * A request URL as a network log may keep it: no userinfo, no fragment, each query value whose
 * name is secret-like (`code` included) or that looks like a token masked by shape, cards in the
 * path and the other values masked; capped at `max`. Anything that is not an http(s) URL becomes
 * its scheme alone ("data:", "blob:").
 * @param {unknown} url
 * @param {number} [max]
 * @returns {string}
 */
export function maskUrl(url, max = 2048) {
  if (typeof url !== "string") return "";
  let u;
  try {
    u = new URL(url);
  } catch {
    return "";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return u.protocol;
  u.username = "";
  u.password = "";
  u.hash = "";
  const parts = [];
  for (const pair of u.search.slice(1).split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const raw = eq < 0 ? "" : pair.slice(eq + 1);
    const name = decodeQuery(eq < 0 ? pair : pair.slice(0, eq), true);
    const kept = decodeQuery(raw, false);
    if (ALREADY.some((a) => kept.startsWith(a))) {
      parts.push(`${encodeURIComponent(name)}=${kept}`); // masked before: kept as it reads (idempotent)
      continue;
    }
    const value = decodeQuery(raw, true);
    const masked = isSecretName(name, { url: true }) || tokenLike(value) ? maskValue(name, value) : maskCards(value);
    parts.push(`${encodeURIComponent(name)}=${masked === value ? encodeURIComponent(value) : masked}`);
  }
  const base = `${u.origin}${maskCards(u.pathname)}`;
  const out = parts.length > 0 ? `${base}?${parts.join("&")}` : base;
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/**
 * The replies whose top-level `data` is binary (base64 image, PDF, a page_fetch saved to a file),
 * left unmasked when, and only when, it is base64 through and through: masking digits inside it
 * would corrupt the file, and base64 cannot hold `name=value`, a header line or a spaced card.
 */
export const BINARY_DATA_ACTIONS = Object.freeze(["page_screenshot", "page_pdf", "page_fetch"]);
const BASE64_ONLY = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The fields of a reply, at any depth, whose string value is an address a page links to (a
 * snapshot row's resolved `a.href`, a scraped `href` attribute): `maskHref` runs on them before
 * the text rules, by key, so no tool that answers a link's address can leave it unmasked.
 */
export const LINK_FIELDS = Object.freeze(["href"]);

/**
 * A link's address as it may leave the extension: an absolute http(s) URL as `maskUrl` keeps it
 * (no userinfo; each secret-named or token-like query value masked by shape; cards masked) with
 * its fragment through the text rules (`#access_token=…` masked); anything else (a relative or
 * `mailto:` address) through the text rules alone (`maskTree` runs them after this, too).
 * @param {string} href
 * @returns {string}
 */
export function maskHref(href) {
  let u;
  try {
    u = new URL(href);
  } catch {
    return href;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return href;
  const hash = href.indexOf("#");
  return `${maskUrl(href, 8192)}${hash >= 0 && hash < href.length - 1 ? maskText(href.slice(hash)) : ""}`;
}

/**
 * @param {unknown} value
 * @param {MaskContext} ctx
 * @returns {unknown}
 */
function maskTree(value, ctx) {
  if (typeof value === "string") return maskText(value, ctx);
  if (Array.isArray(value)) return value.map((v) => maskTree(v, ctx));
  if (value !== null && typeof value === "object") {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      out[maskText(k, ctx)] = maskTree(LINK_FIELDS.includes(k) && typeof v === "string" ? maskHref(v) : v, ctx);
    }
    return out;
  }
  return value;
}

/**
 * A handler's outcome as it may leave the extension: every string of the result (keys too, at
 * any depth) and the error's message through `maskText`. The one exemption: the top-level `data`
 * of a BINARY_DATA_ACTIONS reply that is base64 only.
 * @template {{ok: true, result: Record<string, unknown>} | {ok: false, error: {code: string, message: string}}} O
 * @param {string} action
 * @param {O} outcome
 * @param {MaskContext} [ctx]
 * @returns {O}
 */
export function maskOutcome(action, outcome, ctx = {}) {
  if (!outcome.ok) return { ...outcome, error: { ...outcome.error, message: maskText(outcome.error.message, ctx) } };
  const { data, ...rest } = outcome.result;
  const binary = BINARY_DATA_ACTIONS.includes(action) && typeof data === "string" && BASE64_ONLY.test(data);
  const masked = /** @type {Record<string, unknown>} */ (maskTree(rest, ctx));
  if (data !== undefined) masked.data = binary ? data : maskTree(data, ctx);
  return { ...outcome, result: masked };
}
