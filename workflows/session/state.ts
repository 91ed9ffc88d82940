/**
 * The session workflow's state, shared by the workflow, its handlers and its rollover.
 * Workflow code.
 *
 * @module
 */
import { patched, type CancellationScope } from '@temporalio/workflow';
import {
  appendToContext,
  contextOf,
  tokensOfChars,
  type ContextWindow,
} from '../../src/common/context.js';
import type { ConversationMessage } from '../../src/common/conversation.js';
import { DEFAULTS } from '../../src/common/defaults.js';
import type { SerializedError } from '../../src/common/errors.js';
import type {
  AbortRecord,
  SendResult,
  SessionDescription,
  ToolCallRecord,
  UpgradeAnswer,
} from '../../src/common/messages.js';
import type { RecentSend, RunArchive, SessionWorkflowInput } from '../../src/common/workflow-io.js';
import type { SessionEndReason } from '../../src/common/types.js';
import type { PromptState } from '../prompt/run.js';
import { budgetStatusOf, newLedger } from '../../src/common/budgets.js';

/** Everything one run of a session keeps. */
export interface SessionState extends PromptState {
  /** This run's messages (earlier runs' are archived); `session.conversation()` reads them. */
  transcript: ConversationMessage[];
  /** What model steps read by query: the context, kept within `maxContextTokens`. */
  context: ContextWindow;
  /** Earlier runs, archived in the payload store. */
  archives: RunArchive[];
  /** Messages of earlier runs. */
  transcriptBase: number;
  /** Prompts handled in this run (continue-as-new counts from here). */
  promptsThisRun: number;
  /** Updates this run accepted (`update-count.ts`); absent until the first. */
  updatesThisRun?: number;
  /** Recent send() outcomes, so a send retried across a rollover runs once. */
  recentSends: RecentSend[];
  /** Characters of JSON this run's transcript holds: memory, not history, bounds a run too. */
  transcriptChars: number;
  /** The archive running for a rollover, so a close can stop it. */
  rolloverScope?: CancellationScope;
  /** The scope prompts run in, one at a time, until an abort cancels it (`handlers/send.ts`). */
  promptScope?: CancellationScope;
  /** Set while the run archives itself before continuing as new: new prompts wait. */
  rollingOver: boolean;
  /** After a failed archive, no rollover before this many prompts in the run. */
  rolloverNotBefore: number;
  status: SessionDescription['status'];
  startError?: SerializedError;
  readyAcked: boolean;
  /** Set once, before SessionEnd is scheduled; every later close reads it. */
  endMarker?: { reason: SessionEndReason; at: number };
  endReason?: SessionEndReason;
  /** FIFO of prompts: the ticket being served and the next ticket to hand out. */
  serving: number;
  nextTicket: number;
  promptsHandled: number;
  /** Bumped on every client interaction, for the idle timeout. */
  activitySeq: number;
  current?: PromptRun;
  /** Aborts that arrived for prompts still waiting in the queue, by request id. */
  queuedAborts: Map<string, AbortRecord>;
  closeInFlight?: CloseAttempt;
  /** A move to another version begun (`handlers/upgrade.ts`): it holds the session's turn. */
  upgrading?: {
    toVersion: string;
    by: string;
    ticket: number;
    /** The `finish` under way: a second `finish` or a `cancel` waits for it. */
    finishing?: Promise<UpgradeAnswer>;
  };
  /** Whether this run keeps the session's search attributes (`search-attributes.ts`). */
  searchAttributes?: boolean;
  /** Whether it keeps the spend attributes too (a budget, started with them). */
  spendAttributes?: boolean;
  /** `promptsHandled` when the spend attributes were last found changed (this run). */
  spendUpsertedAt?: number;
}

/** The prompt running now. */
export interface PromptRun {
  scope: CancellationScope;
  requestId: string;
  abort?: AbortRecord;
  settled: boolean;
  finalStatus?: SendResult['status'];
  /** The prompt's tool calls so far, each with its outcome: an aborted send reports them too. */
  toolCalls: ToolCallRecord[];
}

/** One close() in progress, whose outcome concurrent close() calls share. */
export interface CloseAttempt {
  done: boolean;
  /** What the attempt threw; present (even if falsy) only when it failed. */
  error?: unknown;
}

/** A run's state at its start: fresh for a new session, carried over for a later run. */
export function createSessionState(input: SessionWorkflowInput): SessionState {
  const carry = input.carry;
  const maxContextTokens = input.maxContextTokens ?? DEFAULTS.maxContextTokens;
  const state: SessionState = {
    input,
    // 0.2's hot path (workflows/patches.ts): decided first thing in the run, where no local
    // activity can have resolved.
    skipIdleStages: patched('hot-path-0.2.0'),
    taskQueue: carry?.taskQueue ?? input.taskQueue,
    timeline: [],
    timelineBase: carry?.timelineBase ?? 0,
    pendingCleanups: new Map(),
    pendingPermissions: new Map(),
    transcript: [],
    context: contextOf(carry?.context ?? [], carry?.compactedMessages ?? 0),
    archives: carry?.archives ?? [],
    transcriptBase: carry?.transcriptBase ?? 0,
    promptsThisRun: 0,
    recentSends: carry?.recentSends ?? [],
    rollingOver: false,
    transcriptChars: 0,
    rolloverNotBefore: 0,
    addMessage(message) {
      // Serialised once: it sizes both the run's transcript and the context estimate.
      const chars = JSON.stringify(message).length;
      state.transcript.push(message);
      state.transcriptChars += chars;
      appendToContext(state.context, message, maxContextTokens, tokensOfChars(chars));
    },
    modelSteps: carry?.modelSteps ?? 0,
    // A sub-agent's is its parent's (`input.mcpTools`).
    ...(carry?.mcpTools || input.mcpTools ? { mcpTools: carry?.mcpTools ?? input.mcpTools } : {}),
    // The ledger goes from run to run: spend is counted over the whole session.
    ...(input.budget ? { budget: carry?.budget ?? newLedger(input.budget) } : {}),
    status: 'starting',
    readyAcked: false,
    serving: 0,
    nextTicket: 0,
    promptsHandled: carry?.promptsHandled ?? 0,
    // A SessionEnd that failed in an earlier run recorded the marker: it never runs again.
    ...(carry?.endMarker ? { endMarker: carry.endMarker } : {}),
    activitySeq: 0,
    queuedAborts: new Map(),
  };
  return state;
}

/** What `session.describe()` answers. */
export function describeSession(state: SessionState): SessionDescription {
  return {
    sessionId: state.input.sessionId,
    status: state.status,
    taskQueue: state.taskQueue,
    ...(state.endMarker ? { sessionEndMarker: state.endMarker } : {}),
    pendingCleanups: state.pendingCleanups.size,
    promptsHandled: state.promptsHandled,
    busy: state.current !== undefined,
    ...(state.input.version !== undefined ? { version: state.input.version } : {}),
    ...(state.input.fingerprint !== undefined ? { fingerprint: state.input.fingerprint } : {}),
    ...(state.input.upgrades ? { upgrades: state.input.upgrades } : {}),
    ...(state.input.abandonedUpgrades ? { abandonedUpgrades: state.input.abandonedUpgrades } : {}),
    ...(state.budget ? { budget: budgetStatusOf(state.budget) } : {}),
  };
}

/** Whether the session is closing or closed: no new prompt, handoff or close starts. */
export function isClosing(state: SessionState): boolean {
  return state.status === 'closing' || state.status === 'closed';
}
