// dispatch.js — validates a host `request` and routes its action to a handler via a Map, turning
// the outcome into a `reply` message. Pure: no chrome, no I/O beyond the injected logger.
// It must never look actions up on a plain object (so "constructor"/"__proto__" stay unknown),
// and must never put a stack trace or an unexpected exception's text into a reply. A request that
// names a command (its `command` field) runs through the injected journal (worker/journal.js), so a
// retry of it never runs it twice. Every reply it makes, result and error alike, leaves through
// worker/mask.js's `maskOutcome` in this file's one exit (`reply`): no handler can opt out. An
// action the catalogue publishes a wire schema for (worker/catalogue.js ACTION_ARGS) has its `args`
// checked against it (shared/arg-schema.js) before its handler runs: a mismatch is bad_request
// naming the field, and the handler never runs. A policy_denied refusal because a switch is off
// leaves naming the key and how a person turns it on (shared/policy-words.js teach): one place.

import { argsMismatch } from "../shared/arg-schema.js";
import { BridgeError, MAX_ERROR_MESSAGE } from "../shared/bridge-error.js";
import { ACTION_ARGS } from "./catalogue.js";
import { CODE, errorReply } from "../shared/error-codes.js";
import { parseCommand } from "./journal.js";
import { maskOutcome } from "./mask.js";
import { teach } from "../shared/policy-words.js";
import { parsePolicy } from "./policy.js";
import { isPlainObject } from "../shared/wire.js";

/**
 * What the MCP server allows a call beyond the confirm timeout (mcp_server/tools.py
 * CONFIRM_SLACK_SECONDS; tests/extension/test_node_suite.py holds them equal).
 */
export const CALL_SLACK_MS = 15_000;
/** The extension's deadline sits this far before the server's, so its `timeout` names the step. */
export const CALL_MARGIN_MS = 2_000;

/**
 * How long the extension gives one call: the person's confirm timeout plus the server's slack,
 * less a margin (a call's every step must end by then — handlers/support.js `step`).
 * @param {import("./policy.js").Policy} policy
 */
export function callBudgetMs(policy) {
  return policy.confirmTimeoutMs + CALL_SLACK_MS - CALL_MARGIN_MS;
}

/**
 * Who is asking and under which policy (protocol.md "Page tools over hop 3"): set by the host
 * from the verified trust record on every request; `deadline` (ms since the epoch) is when the
 * call's every step must have ended (`callBudgetMs` from its arrival); `client` is the label the
 * person paired the asking MCP client under (null: none), for the person's eyes only; `policy` is
 * the request's policy, read once here (worker/policy.js): handlers ask it, never the raw JSON.
 * @typedef {{session: string, client?: string | null, policy: import("./policy.js").Policy, deadline: number}} Context
 */
/**
 * @typedef {(args: Record<string, unknown>, ctx: Context) => unknown | Promise<unknown>} Handler
 *   returns a plain object result (undefined means {}); throws BridgeError to pick a code
 */
/**
 * @typedef {{type: "request", id: string, action: string, args: Record<string, unknown>,
 *   session: string, client: string | null, policy: import("./policy.js").Policy,
 *   command: import("./journal.js").Command | null}} Request
 */
/**
 * @typedef {{type: "reply", id: string, ok: true, result: Record<string, unknown>}
 *   | import("../shared/error-codes.js").ErrorReply} Reply
 */
/** @typedef {{warn: (...a: unknown[]) => void}} Logger */

/**
 * @param {string} code
 * @param {string} message
 * @returns {import("./journal.js").Outcome}
 */
const failed = (code, message) => ({ ok: false, error: { code, message } });

/** Longest action name echoed back in an unknown_action message. */
const MAX_ECHO = 64;

/** Longest session name accepted (the host's are short opaque strings). */
const MAX_SESSION = 200;

/** A paired client's label (trust/: a-z, 0-9, _ and -; at most 32); anything else is dropped. */
const CLIENT_LABEL_RE = /^[a-z0-9_-]{1,32}$/;

/**
 * Check a message's shape. `id` is the id usable for an error reply (null when none).
 * @param {unknown} msg
 * @returns {{ok: true, request: Request} | {ok: false, id: string | null, message: string}}
 */
export function validateRequest(msg) {
  if (!isPlainObject(msg)) return { ok: false, id: null, message: "message is not an object" };
  const id = typeof msg.id === "string" && msg.id.length > 0 ? msg.id : null;
  if (id === null) return { ok: false, id: null, message: "id must be a non-empty string" };
  if (msg.type !== "request") return { ok: false, id, message: 'type must be "request"' };
  if (typeof msg.action !== "string" || msg.action.length === 0) {
    return { ok: false, id, message: "action must be a non-empty string" };
  }
  if (!isPlainObject(msg.args)) return { ok: false, id, message: "args must be an object" };
  if (typeof msg.session !== "string" || msg.session.length === 0 || msg.session.length > MAX_SESSION) {
    return { ok: false, id, message: "session must be a non-empty string" };
  }
  if (!isPlainObject(msg.policy)) return { ok: false, id, message: "policy must be an object" };
  const command = parseCommand(msg.command);
  if (!command.ok) return { ok: false, id, message: command.message };
  return {
    ok: true,
    request: {
      type: "request", id, action: msg.action, args: msg.args, session: msg.session,
      client: typeof msg.client === "string" && CLIENT_LABEL_RE.test(msg.client) ? msg.client : null, policy: parsePolicy(msg.policy),
      command: command.command,
    },
  };
}

/** Each catalogue action's wire schema (worker/catalogue.js, generated). */
const ARG_SCHEMAS = new Map(ACTION_ARGS);

/**
 * Why `args` are refused for `action` (bad_request's message, naming the field), or null: the
 * action's wire schema (none: nothing to check here) decides, before any handler runs.
 * @param {string} action
 * @param {Record<string, unknown>} args
 * @param {ReadonlyMap<string, unknown>} [argSchemas]
 * @returns {string | null}
 */
export function argsRefusal(action, args, argSchemas = ARG_SCHEMAS) {
  const schema = argSchemas.get(action);
  const wrong = schema === undefined ? null : argsMismatch(schema, args);
  return wrong === null ? null : `${action}: ${wrong}`;
}

/**
 * @typedef {object} Dispatcher
 * @property {(msg: unknown) => Promise<Reply | null>} dispatch answer one message; null = drop
 * @property {(action: string) => boolean} has
 */

/**
 * @param {Map<string, Handler> | Iterable<[string, Handler]>} handlers copied; later changes
 *   to the source do not affect the dispatcher
 * @param {{log?: Logger, now?: () => number, journal?: import("./journal.js").Journal,
 *   maskContext?: () => import("./mask.js").MaskContext | Promise<import("./mask.js").MaskContext>,
 *   argSchemas?: ReadonlyMap<string, unknown>}} [options]
 *   where unexpected handler failures are reported locally; the clock the call deadlines are
 *   taken from; the journal requests naming a command run through (none: each runs as it comes);
 *   what every reply is masked with beyond the fixed rules (learned URLs and names; none: the
 *   fixed rules alone; one that fails: every URL query value as well, never less); each action's
 *   `args` schema (default: the catalogue's; an action without one is given its args unchecked)
 * @returns {Dispatcher}
 */
export function createDispatcher(handlers, { log = console, now = () => Date.now(), journal, maskContext = () => ({}), argSchemas = ARG_SCHEMAS } = {}) {
  /** @type {Map<string, Handler>} */
  const routes = new Map(handlers);
  for (const [action, handler] of routes) {
    if (typeof action !== "string" || typeof handler !== "function") {
      throw new TypeError("dispatch: handlers must map action strings to functions");
    }
  }

  /**
   * The one way out: the outcome masked (worker/mask.js), then made a reply.
   * @param {string} id
   * @param {string} action
   * @param {import("./journal.js").Outcome} outcome
   * @returns {Promise<Reply>}
   */
  async function reply(id, action, outcome) {
    /** @type {import("./mask.js").MaskContext} */
    let context;
    try {
      context = await maskContext();
    } catch (err) {
      // What was learned is unknown: every URL's query values are masked instead (fail closed).
      log.warn("tabwarden: the learned masking rules are unavailable; every URL query value is masked", err);
      context = { everyQuery: true };
    }
    const out = maskOutcome(action, outcome, context);
    if (out.ok) return { type: "reply", id, ok: true, result: out.result };
    // The way out is the table's fixed words, added after the mask (which would take
    // `passwordFill=true` for a secret's assignment): nothing of the page is in them.
    return errorReply(id, out.error.code, teach(out.error.code, out.error.message, MAX_ERROR_MESSAGE));
  }

  return {
    has: (action) => routes.has(action),

    async dispatch(msg) {
      const checked = validateRequest(msg);
      if (!checked.ok) {
        return checked.id === null ? null : reply(checked.id, "", failed(CODE.BAD_REQUEST, checked.message));
      }
      const { id, action, args, session, client, policy, command } = checked.request;
      const handler = routes.get(action);
      if (handler === undefined) {
        return reply(id, action, failed(CODE.UNKNOWN_ACTION, `unknown action ${JSON.stringify(action.slice(0, MAX_ECHO))}`));
      }
      const refused = argsRefusal(action, args, argSchemas);
      if (refused !== null) return reply(id, action, failed(CODE.BAD_REQUEST, refused));
      /** @returns {Promise<import("./journal.js").Outcome>} */
      const run = async () => {
        try {
          const result = await handler(args, { session, client, policy, deadline: now() + callBudgetMs(policy) });
          if (result === undefined) return { ok: true, result: {} };
          if (!isPlainObject(result)) {
            log.warn(`tabwarden: handler for ${action} returned a non-object result`);
            return failed(CODE.INTERNAL_ERROR, `${action} produced an invalid result`);
          }
          return { ok: true, result };
        } catch (err) {
          if (err instanceof BridgeError) return failed(err.code, err.message.slice(0, MAX_ERROR_MESSAGE));
          log.warn(`tabwarden: handler for ${action} failed`, err);
          return failed(CODE.INTERNAL_ERROR, `${action} failed inside the extension`);
        }
      };
      const outcome = command !== null && journal !== undefined ? await journal.run(session, command, run) : await run();
      return reply(id, action, outcome);
    },
  };
}
