// handlers/emulate.js — page_emulate: what an owned tab's pages are told about the browser and
// the person (user agent, geolocation, colour scheme, locale, timezone), through CDP Emulation.*
// on the tab's own debugger attachment (worker/debugger.js), and what the page then reports.
// Thin glue: the debugger and the page read are injected. It must never touch the chrome global,
// never send an override to a tab the session does not own (the person's tab, another
// session's: `tab_not_owned` before anything is sent) or whose site is not approved, never grant
// a permission (a geolocation override answers only where the person already let the site ask),
// and never leave an override on once the session let the tab go (the manager is told before
// the first command: worker/debugger.js `release` ends them all).

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { isPlainObject } from "../shared/wire.js";
import { EMULATION_CLEARS } from "../worker/debugger.js";
import { gatedTab, sameOrigin, step } from "./support.js";

/**
 * @typedef {{userAgent?: string, geolocation?: {latitude: number, longitude: number, accuracy: number},
 *   colorScheme?: "light" | "dark", locale?: string, timezone?: string}} Overrides
 */

/** A geolocation's accuracy when none is given (metres; the MCP tool's default too). */
export const DEFAULT_ACCURACY = 50;

/**
 * Whether `zone` is a time zone this browser knows (Intl refuses an unknown one).
 * @param {string} zone
 */
export function knownTimezone(zone) {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone }).format(0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `locale` is a well-formed BCP 47 tag (Chrome then checks ICU has it).
 * @param {string} locale
 */
export function wellFormedLocale(locale) {
  try {
    return Intl.getCanonicalLocales(locale).length === 1;
  } catch {
    return false;
  }
}

/**
 * page_emulate's overrides from its arguments (none: a read, nothing changed), or null for
 * reset. Each field's type, shape and
 * range are the wire schema's (worker/dispatch.js checks it before any handler runs: the user
 * agent's printable ASCII, latitude -90–90, longitude -180–180, colorScheme's enum, the locale's
 * and zone's shapes); what is read here is which go together, and that the zone and the locale
 * are real ones.
 * @param {Record<string, unknown>} args
 * @returns {Overrides | null}
 */
export function emulateSettings(args) {
  const keys = ["userAgent", "geolocation", "colorScheme", "locale", "timezone"].filter((k) => args[k] !== undefined && args[k] !== null);
  if (args.reset === true) {
    if (keys.length > 0) throw new BridgeError(CODE.BAD_REQUEST, "reset takes no other setting");
    return null;
  }
  /** @type {Overrides} */
  const out = {};
  if (typeof args.userAgent === "string") out.userAgent = args.userAgent;
  if (isPlainObject(args.geolocation)) {
    const g = args.geolocation;
    out.geolocation = { latitude: Number(g.latitude), longitude: Number(g.longitude), accuracy: typeof g.accuracy === "number" ? g.accuracy : DEFAULT_ACCURACY };
  }
  if (args.colorScheme === "light" || args.colorScheme === "dark") out.colorScheme = args.colorScheme;
  if (typeof args.locale === "string") {
    if (!wellFormedLocale(args.locale)) throw new BridgeError(CODE.BAD_REQUEST, `locale ${JSON.stringify(args.locale)} is not a BCP 47 language tag; give one such as "de-DE" or "ja"`);
    out.locale = args.locale;
  }
  if (typeof args.timezone === "string") {
    if (!knownTimezone(args.timezone)) throw new BridgeError(CODE.BAD_REQUEST, `timezone ${JSON.stringify(args.timezone)} is not a time zone this browser knows; give an IANA id such as "Europe/Berlin" or "Asia/Tokyo"`);
    out.timezone = args.timezone;
  }
  return out;
}

// ---------------------------------------------------------------- page-side function

/** Runs in the page (isolated world): what the page is told, after the overrides. */
export async function readEmulation() {
  let permission = "unknown";
  try {
    permission = (await navigator.permissions.query({ name: "geolocation" })).state;
  } catch {
    // no Permissions API here: said as unknown
  }
  const intl = Intl.DateTimeFormat().resolvedOptions();
  return {
    href: String(location.href),
    userAgent: navigator.userAgent,
    locale: intl.locale,
    timezone: intl.timeZone,
    colorScheme: matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
    geolocationPermission: permission,
  };
}

// ---------------------------------------------------------------- handlers

/**
 * @param {import("./actions.js").ActionDeps} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function emulateHandlers(deps) {
  const { cdp, browser } = deps;

  /**
   * One override command; Chrome's refusal of a locale or zone it does not have is the caller's
   * mistake (bad_request naming it), any other failure the debugger's.
   * @param {import("./support.js").Ctx} ctx @param {number} tabId @param {string} method
   * @param {Record<string, unknown>} params @param {string} what @param {string | null} refusal
   */
  async function set(ctx, tabId, method, params, what, refusal = null) {
    try {
      await cdp.send(ctx, tabId, method, params, what);
    } catch (err) {
      if (refusal !== null && err instanceof BridgeError && err.code === CODE.INTERNAL_ERROR && /invalid|not supported|unknown/i.test(err.message)) {
        throw new BridgeError(CODE.BAD_REQUEST, refusal);
      }
      throw err;
    }
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageEmulate(args, ctx) {
    const want = emulateSettings(args);
    const { tabId, origin } = await gatedTab(deps, args, ctx, "page_emulate");
    // The user agent, locale and zone go into every page of the tab: typed text for the gate.
    if (want !== null && (want.userAgent !== undefined || want.locale !== undefined || want.timezone !== undefined)) {
      await deps.provenance?.check(args, ctx, "page_emulate", origin);
    }
    const read = want !== null && Object.keys(want).length === 0;
    if (!read) {
      await cdp.ensure(ctx, tabId);
      cdp.emulating(tabId); // before the first override: release ends them whatever happens next
    }
    // Nothing given (read): no command, only what the page is told now.
    if (want === null) {
      for (const [method, params] of EMULATION_CLEARS) await cdp.send(ctx, tabId, method, { ...params }, "end the emulation");
    } else if (!read) {
      if (want.userAgent !== undefined) await set(ctx, tabId, "Emulation.setUserAgentOverride", { userAgent: want.userAgent }, "override the user agent");
      if (want.geolocation !== undefined) await set(ctx, tabId, "Emulation.setGeolocationOverride", want.geolocation, "override the geolocation");
      if (want.colorScheme !== undefined) {
        await set(ctx, tabId, "Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: want.colorScheme }] }, "override the colour scheme");
      }
      if (want.locale !== undefined) {
        await set(ctx, tabId, "Emulation.setLocaleOverride", { locale: want.locale }, "override the locale",
          `locale ${JSON.stringify(want.locale)} is not one Chrome has; give one such as "de-DE" or "ja"`);
      }
      if (want.timezone !== undefined) {
        await set(ctx, tabId, "Emulation.setTimezoneOverride", { timezoneId: want.timezone }, "override the timezone",
          `timezone ${JSON.stringify(want.timezone)} is not one Chrome has; give an IANA id such as "Europe/Berlin"`);
      }
    }
    let seen;
    try {
      seen = (await step(ctx, "read what the page sees", browser.executeScriptArgs(tabId, readEmulation, [])))?.[0]?.result;
    } catch (err) {
      if (err instanceof BridgeError) throw err;
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not read what the page sees");
    }
    if (!isPlainObject(seen)) throw new BridgeError(CODE.INTERNAL_ERROR, "could not read what the page sees");
    sameOrigin(seen.href, origin);
    const str = (/** @type {unknown} */ v) => (typeof v === "string" ? v.slice(0, 1024) : "");
    return {
      emulating: read ? null : want,
      page: {
        userAgent: str(seen.userAgent),
        locale: str(seen.locale),
        timezone: str(seen.timezone),
        colorScheme: seen.colorScheme === "dark" ? "dark" : "light",
        geolocationPermission: str(seen.geolocationPermission),
      },
    };
  }

  return [["page_emulate", pageEmulate]];
}
