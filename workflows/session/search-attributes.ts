/**
 * The session's search attributes kept up to date: status, pending approvals and the last
 * decision, upserted when one of them changes (one command for all that changed in the
 * same step), never on an unchanged value. Workflow code.
 *
 * Only a session whose client started it with the attributes (its server has them
 * registered, `src/client/search-attributes.ts`) upserts them: on a server without them an
 * upsert would fail the workflow task. Histories recorded before the attributes existed
 * started without them, so they replay without upserts and need no `patched()` guard.
 *
 * @module
 */
import {
  CancellationScope,
  condition,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  LAST_DECISION_KEY,
  PENDING_APPROVALS_KEY,
  SPEND_USD_KEY,
  SPENT_TOKENS_KEY,
  STATUS_KEY,
  type SearchAttributePair,
  type SearchAttributeUpdatePair,
  type SessionSearchStatus,
} from '../../src/common/search-attributes.js';
import type { SessionState } from './state.js';

/**
 * What the session's status attribute says now. Without `turnStatus` an open session reads
 * `running` between turns too: a send that asks nobody changes nothing.
 */
function sessionSearchStatus(state: SessionState): SessionSearchStatus {
  if (state.status === 'closed') return 'closed';
  if (state.status === 'closing' || state.pendingCleanups.size > 0) return 'cleaning_up';
  if (state.pendingPermissions.size > 0) return 'awaiting_approval';
  if (state.input.turnStatus === false) return 'running';
  if (state.status === 'starting' || state.current !== undefined) return 'running';
  return 'idle';
}

/** The attributes whose value differs from what the workflow holds now. */
function changedAttributes(state: SessionState): SearchAttributeUpdatePair[] {
  const held = workflowInfo().typedSearchAttributes;
  const changed: SearchAttributeUpdatePair[] = [];
  const status = sessionSearchStatus(state);
  if (held.get(STATUS_KEY) !== status) changed.push({ key: STATUS_KEY, value: status });
  const pending = state.pendingPermissions.size;
  if (held.get(PENDING_APPROVALS_KEY) !== pending) {
    changed.push({ key: PENDING_APPROVALS_KEY, value: pending });
  }
  // Undefined in a run that decided nothing yet: a later run keeps what the last one said.
  const decision = state.lastDecision;
  if (decision !== undefined && held.get(LAST_DECISION_KEY) !== decision) {
    changed.push({ key: LAST_DECISION_KEY, value: decision });
  }
  // A budgeted session's spend: with the others, or once no prompt runs and it is due (not
  // at each step, nor at each send: an upsert is a history event and a visibility write).
  if (
    state.spendAttributes &&
    (changed.length > 0 || (state.current === undefined && spendDue(state, held)))
  ) {
    changed.push(...changedSpend(state, held));
  }
  return changed;
}

/** Prompts after which an idle session's spend is upserted even if it moved little. */
const SPEND_EVERY_PROMPTS = 10;
/** The part of a cap the spend may move by before an idle session upserts it. */
const SPEND_STEP = 0.05;

/**
 * Whether an idle session's spend attributes are due: the session is ending, a cap stopped
 * its last prompt, the spend moved by {@link SPEND_STEP} of a token or cost cap since the
 * attributes last said it, or {@link SPEND_EVERY_PROMPTS} prompts went by.
 */
function spendDue(
  state: SessionState,
  held: ReturnType<typeof workflowInfo>['typedSearchAttributes'],
): boolean {
  const ledger = state.budget;
  if (!ledger) return false;
  if (state.status !== 'open' || ledger.exceeded !== undefined) return true;
  if (state.promptsHandled - (state.spendUpsertedAt ?? 0) >= SPEND_EVERY_PROMPTS) return true;
  const { totalTokens, costUsd } = ledger.caps;
  const moved = (cap: number | undefined, now: number, then: number | null | undefined) =>
    cap !== undefined && now - (then ?? 0) >= cap * SPEND_STEP;
  return (
    moved(totalTokens, ledger.spent.totalTokens, held.get(SPENT_TOKENS_KEY)) ||
    moved(costUsd, ledger.spent.costUsd, held.get(SPEND_USD_KEY))
  );
}

/** The spend attributes whose value differs from the ledger's. */
function changedSpend(
  state: SessionState,
  held: ReturnType<typeof workflowInfo>['typedSearchAttributes'],
): SearchAttributeUpdatePair[] {
  const spent = state.budget?.spent;
  if (!spent) return [];
  const changed: SearchAttributeUpdatePair[] = [];
  if (held.get(SPENT_TOKENS_KEY) !== spent.totalTokens) {
    changed.push({ key: SPENT_TOKENS_KEY, value: spent.totalTokens });
  }
  if (held.get(SPEND_USD_KEY) !== spent.costUsd) {
    changed.push({ key: SPEND_USD_KEY, value: spent.costUsd });
  }
  return changed;
}

/** Whether this run keeps the attributes (its client started it with them). */
function keepsSearchAttributes(): boolean {
  return workflowInfo().typedSearchAttributes.get(STATUS_KEY) !== undefined;
}

/** Upsert what changed, if anything; a no-op in a session started without the attributes. */
export function syncSearchAttributes(state: SessionState): void {
  if (!state.searchAttributes) return;
  const changed = changedAttributes(state);
  if (changed.length === 0) return;
  upsertSearchAttributes(changed);
  if (changed.some(({ key }) => key === SPENT_TOKENS_KEY || key === SPEND_USD_KEY)) {
    state.spendUpsertedAt = state.promptsHandled;
  }
}

/**
 * Keep the attributes up to date for the rest of the run: after every step of the workflow
 * that changed them, one upsert. Not cancellable: a cancel from outside ends the session
 * (SessionEnd, `closed`) and the attributes follow it there. The run's last change
 * (`closed`) is upserted by the workflow itself before it returns ({@link syncSearchAttributes}).
 */
export function watchSearchAttributes(state: SessionState): void {
  state.searchAttributes = keepsSearchAttributes();
  // Only sessions started with them (a budget, on a server that has them) keep the spend.
  state.spendAttributes =
    state.budget !== undefined &&
    workflowInfo().typedSearchAttributes.get(SPENT_TOKENS_KEY) !== undefined;
  if (!state.searchAttributes) return;
  void CancellationScope.nonCancellable(async () => {
    for (;;) {
      await condition(() => changedAttributes(state).length > 0);
      syncSearchAttributes(state);
    }
  });
}

/**
 * The search attributes a sub-agent starts with: its parent's as they are now (agent name,
 * version, and any other the parent holds), so a query that finds the parent's session finds
 * its sub-agents too; with status `running`, no pending approval and no last decision, as a
 * session starts. Undefined when the parent keeps none (started without them).
 */
export function childSearchAttributes(state: {
  searchAttributes?: boolean;
  spendAttributes?: boolean;
}): SearchAttributePair[] | undefined {
  if (!state.searchAttributes) return undefined;
  const ownKeys = new Set([
    STATUS_KEY.name,
    PENDING_APPROVALS_KEY.name,
    LAST_DECISION_KEY.name,
    SPENT_TOKENS_KEY.name,
    SPEND_USD_KEY.name,
  ]);
  const inherited = workflowInfo()
    .typedSearchAttributes.getAll()
    .filter((pair) => !ownKeys.has(pair.key.name));
  return [
    ...inherited,
    { key: STATUS_KEY, value: 'running' },
    { key: PENDING_APPROVALS_KEY, value: 0 },
    // A sub-agent of a budgeted session runs under a share of its budget: its own spend.
    ...(state.spendAttributes
      ? [
          { key: SPENT_TOKENS_KEY, value: 0 },
          { key: SPEND_USD_KEY, value: 0 },
        ]
      : []),
  ];
}
