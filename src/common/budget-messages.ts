/**
 * What crosses between a shared budget's workflow (`workflows/budget/budget-workflow.ts`) and
 * its callers: the lease Update a session's `leaseSharedBudget` activity sends, a person's
 * raise, the status query. Workflow-safe. The names are in recorded histories: never rename one.
 *
 * @module
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { BudgetCaps } from './budgets.js';
import type {
  BudgetWindow,
  LeaseAnswer,
  LeaseRequest,
  SharedBudgetState,
  SharedBudgetStatus,
} from './shared-budgets.js';

/** The workflow type of a shared budget, as clients start it and histories record it. */
export const SHARED_BUDGET_WORKFLOW = 'sharedBudgetWorkflow';

/** A shared budget workflow's input: its key and window, or the state a run carries over. */
export interface SharedBudgetWorkflowInput {
  key: string;
  window?: BudgetWindow;
  /** The ledger of the run before (continue-as-new). */
  carry?: SharedBudgetState;
}

/** The signature of the shared budget workflow. */
export type SharedBudgetWorkflow = (input: SharedBudgetWorkflowInput) => Promise<void>;

/** A person's raise of a shared budget. */
interface RaiseSharedBudgetRequest {
  /** The caps to set for every session of the budget (others stay as the agents give them). */
  caps: BudgetCaps;
  /** Who raised it: the client's identity. */
  identity?: string;
}

/** The shared budget workflow's Updates and Query. */
export const BudgetMessages = {
  /**
   * Requests of one worker process, in order: each gives back a lease and/or takes a new one,
   * answered once by its lease id (a request sent again gets the same answer).
   */
  leases: defineUpdate<LeaseAnswer[], [LeaseRequest[]]>('leases'),
  /** Set caps for every session of the budget, recording who did. */
  raise: defineUpdate<SharedBudgetStatus, [RaiseSharedBudgetRequest]>('raiseShared'),
  /** The budget now: spent and leased in the window, raises, the last windows. */
  status: defineQuery<SharedBudgetStatus>('sharedBudgetStatus'),
} as const;
