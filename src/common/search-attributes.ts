/**
 * The search attributes of a session: what `temporal workflow list --query`, the Web UI's
 * filters and `durable-agent sessions --status/--agent` find sessions by. The package
 * registers them on every dev server it starts; a cluster's operator registers them once
 * ({@link searchAttributeCreateCommand}). Workflow-safe: no Node APIs.
 *
 * @module
 */
import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';

export type { SearchAttributePair, SearchAttributeUpdatePair } from '@temporalio/common';

/** The agent's `name` (Keyword). */
export const AGENT_NAME_KEY = defineSearchAttributeKey(
  'DurableAgentName',
  SearchAttributeType.KEYWORD,
);

/** The version the session runs (`version`, or the definition's fingerprint) (Keyword). */
export const AGENT_VERSION_KEY = defineSearchAttributeKey(
  'DurableAgentVersion',
  SearchAttributeType.KEYWORD,
);

/** The session's {@link SessionSearchStatus} (Keyword). */
export const STATUS_KEY = defineSearchAttributeKey(
  'DurableAgentStatus',
  SearchAttributeType.KEYWORD,
);

/** Permission requests waiting for a person's answer (Int). */
export const PENDING_APPROVALS_KEY = defineSearchAttributeKey(
  'DurableAgentPendingApprovals',
  SearchAttributeType.INT,
);

/**
 * The last decision: the outcome of the session's last hook dispatch (`continue`, `skip`,
 * `abort`, `timeout`, `error`, `cancelled`, `worker_lost`, `refused`), or a person's answer
 * to a permission request (`allow`, `deny`), whichever came later (Keyword).
 */
export const LAST_DECISION_KEY = defineSearchAttributeKey(
  'DurableAgentLastDecision',
  SearchAttributeType.KEYWORD,
);

/**
 * Tokens a session with a budget has spent (its ledger's `totalTokens`, its sub-agents'
 * included), upserted at the end of each prompt and with any other attribute that changes
 * (Int). Sessions without a budget never have it.
 */
export const SPENT_TOKENS_KEY = defineSearchAttributeKey(
  'DurableAgentSpentTokens',
  SearchAttributeType.INT,
);

/** US dollars a session with a budget has spent (its ledger's `costUsd`), as {@link SPENT_TOKENS_KEY} (Double). */
export const SPEND_USD_KEY = defineSearchAttributeKey(
  'DurableAgentSpendUsd',
  SearchAttributeType.DOUBLE,
);

/** Every session search attribute, in the order they are registered. */
export const SESSION_SEARCH_ATTRIBUTES = [
  AGENT_NAME_KEY,
  AGENT_VERSION_KEY,
  STATUS_KEY,
  PENDING_APPROVALS_KEY,
  LAST_DECISION_KEY,
  SPENT_TOKENS_KEY,
  SPEND_USD_KEY,
] as const;

/** The attributes only sessions with a budget have. */
export const SPEND_SEARCH_ATTRIBUTES = [SPENT_TOKENS_KEY, SPEND_USD_KEY] as const;

/**
 * A session's status as its search attribute holds it:
 * - `running`: open (by default, whether a prompt runs or not); with
 *   `advanced.temporal.turnStatus`, SessionStart or a prompt runs (model steps, hooks, tools);
 * - `awaiting_approval`: a tool call waits for a person's answer;
 * - `cleaning_up`: a callback outlived its dispatch and the session is fail-closed until it
 *   settles, or the session is closing (SessionEnd runs);
 * - `idle`: with `turnStatus` only: open, nothing running;
 * - `closed`: ended (closed, idle timeout, cancelled, or a failed start).
 */
export type SessionSearchStatus =
  'running' | 'awaiting_approval' | 'cleaning_up' | 'idle' | 'closed';

/** Every {@link SessionSearchStatus}, for validating a filter. */
export const SESSION_SEARCH_STATUSES: readonly SessionSearchStatus[] = [
  'running',
  'awaiting_approval',
  'cleaning_up',
  'idle',
  'closed',
];

/** `Keyword`, `Int`, `Double`: the type's name as the Temporal CLI's `--type` and `--search-attribute` take it. */
function cliTypeName(type: SearchAttributeType): string {
  switch (type) {
    case SearchAttributeType.INT:
      return 'Int';
    case SearchAttributeType.DOUBLE:
      return 'Double';
    default:
      return 'Keyword';
  }
}

/** `DurableAgentName=Keyword`, ...: the values of `temporal server start-dev --search-attribute`. */
export function searchAttributeFlags(): string[] {
  return SESSION_SEARCH_ATTRIBUTES.map((key) => `${key.name}=${cliTypeName(key.type)}`);
}

/**
 * The arguments of the `temporal` commands that register the session search attributes in
 * `namespace`, one command an attribute (Temporal CLI 1.x registers only the first `--name`
 * of a command): `operator search-attribute create --namespace <ns> --name DurableAgentName
 * --type Keyword`, and so on.
 */
export function searchAttributeCreateArgs(namespace: string): string[][] {
  return SESSION_SEARCH_ATTRIBUTES.map((key) => [
    'operator',
    'search-attribute',
    'create',
    '--namespace',
    namespace,
    '--name',
    key.name,
    '--type',
    cliTypeName(key.type),
  ]);
}

/**
 * What a cluster's operator runs once per namespace (with the connection flags of their
 * cluster): the commands of {@link searchAttributeCreateArgs}, joined with `&&`.
 */
export function searchAttributeCreateCommand(namespace: string): string {
  return searchAttributeCreateArgs(namespace)
    .map((args) => `temporal ${args.join(' ')}`)
    .join(' && ');
}
