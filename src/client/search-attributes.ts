/**
 * The session search attributes a client sets when it starts a session, and what it does on
 * a server that lacks them: it finds out at the first start refused for an unknown attribute,
 * logs one WARN line naming the command that registers them, and starts that session, the
 * starts sent at the same time, and every later one without them. Such sessions work as any other; they are
 * only not findable by status or agent.
 *
 * @module
 */
import { ServiceError } from '@temporalio/client';
import {
  AGENT_NAME_KEY,
  AGENT_VERSION_KEY,
  PENDING_APPROVALS_KEY,
  SESSION_SEARCH_ATTRIBUTES,
  SPEND_SEARCH_ATTRIBUTES,
  SPEND_USD_KEY,
  SPENT_TOKENS_KEY,
  STATUS_KEY,
  searchAttributeCreateCommand,
  type SearchAttributePair,
} from '../common/search-attributes.js';
import {
  formatEntry,
  shows,
  stderrLine,
  type AgentLogger,
  type AgentLogLevel,
} from '../temporal/logging.js';

/** gRPC's INVALID_ARGUMENT, what a server answers a start naming an unregistered attribute. */
const INVALID_ARGUMENT = 3;

/** One client's view of its namespace's session search attributes. */
export interface SessionSearchAttributes {
  /**
   * The attributes a new session starts with (with `budgeted`, its spend too, at 0);
   * `undefined` once the server is known to lack them.
   */
  initial(budgeted?: boolean): SearchAttributePair[] | undefined;
  /**
   * Whether `error`, the failure of a start with {@link initial}'s attributes, says the
   * server lacks them (then start again without them): true for every such refusal, those
   * of starts sent at once with the first included. The first time, logs the WARN line;
   * from then on {@link initial} is `undefined`.
   */
  refusedForMissing(error: unknown): boolean;
}

/** The search attributes of sessions started by one client. */
export function sessionSearchAttributes(options: {
  namespace: string;
  agentName: string;
  version: string;
  logger: AgentLogger | undefined;
  logLevel: AgentLogLevel;
}): SessionSearchAttributes {
  let missing = false;
  // A server registered before the spend attributes existed: budgeted sessions start without them.
  let spendMissing = false;
  return {
    initial: (budgeted) =>
      missing
        ? undefined
        : [
            { key: AGENT_NAME_KEY, value: options.agentName },
            { key: AGENT_VERSION_KEY, value: options.version },
            // SessionStart runs first; the workflow says `idle` once the session is open.
            { key: STATUS_KEY, value: 'running' },
            { key: PENDING_APPROVALS_KEY, value: 0 },
            // The workflow keeps them up to date only when it starts with them.
            ...(budgeted && !spendMissing
              ? [
                  { key: SPENT_TOKENS_KEY, value: 0 },
                  { key: SPEND_USD_KEY, value: 0 },
                ]
              : []),
          ],
    refusedForMissing(error) {
      if (!isMissingSearchAttribute(error)) return false;
      if (!spendMissing && namesSpendAttribute(error)) {
        spendMissing = true;
        warn(
          options,
          `Namespace '${options.namespace}' has no spend search attributes: sessions with a ` +
            `budget run without them. Register them once with: ` +
            searchAttributeCreateCommand(options.namespace),
        );
        return true;
      }
      // Starts sent at once all carried the attributes: each refusal starts again without
      // them, and only the first one warns.
      if (missing) return true;
      missing = true;
      const message =
        `Namespace '${options.namespace}' has no session search attributes: sessions run ` +
        `without them (not findable by status or agent). Register them once with: ` +
        searchAttributeCreateCommand(options.namespace);
      warn(options, message);
      return true;
    },
  };
}

/** Log `message` at WARN with the namespace, to the logger or stderr. */
function warn(
  options: { namespace: string; logger: AgentLogger | undefined; logLevel: AgentLogLevel },
  message: string,
): void {
  if (!shows('WARN', options.logLevel)) return;
  const meta = { namespace: options.namespace };
  if (options.logger) options.logger.warn(message, meta);
  else console.error(stderrLine('WARN', formatEntry(message, meta, options.logLevel)));
}

/** Whether a refusal names a spend attribute (and so may be about them alone). */
function namesSpendAttribute(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : error;
  const { details, message } = (cause ?? {}) as { details?: unknown; message?: unknown };
  const text = `${String(details ?? '')} ${String(message ?? '')}`;
  return SPEND_SEARCH_ATTRIBUTES.some((key) => text.includes(key.name));
}

/**
 * Whether `error` is a server's refusal of an unregistered session search attribute:
 * INVALID_ARGUMENT naming one of them (`Namespace default has no mapping defined for search
 * attribute DurableAgentStatus` on SQL visibility, `search attribute ... is not defined` on
 * Elasticsearch).
 */
export function isMissingSearchAttribute(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : error;
  const { code, details, message } = (cause ?? {}) as {
    code?: unknown;
    details?: unknown;
    message?: unknown;
  };
  if (code !== INVALID_ARGUMENT) return false;
  const text = `${String(details ?? '')} ${String(message ?? '')}`;
  return SESSION_SEARCH_ATTRIBUTES.some((key) => text.includes(key.name));
}
