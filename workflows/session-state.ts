/**
 * The session workflow's state, shared by the workflow and its rollover. Workflow code.
 *
 * @module
 */
import type { CancellationScope } from '@temporalio/workflow';
import type { ContextWindow } from '../src/common/context.js';
import type { ConversationMessage } from '../src/common/conversation.js';
import type { SerializedError } from '../src/common/errors.js';
import type {
  AbortRecord,
  RecentSend,
  RunArchive,
  SendResult,
  SessionDescription,
} from '../src/common/protocol.js';
import type { SessionEndReason } from '../src/common/types.js';
import type { PromptState } from './prompt-run.js';

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
  /** False once a replayed history from before the Update count showed it never rolled over by it. */
  rolloverByUpdates?: boolean;
  /** Recent send() outcomes, so a send retried across a rollover runs once. */
  recentSends: RecentSend[];
  /** Whether this run may continue as new (false when replaying a history from before it could). */
  rolloverAllowed: boolean;
  /** Characters of JSON this run's transcript holds: memory, not history, bounds a run too. */
  transcriptChars: number;
  /** The archive running for a rollover, so a close can stop it. */
  rolloverScope?: CancellationScope;
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
}

/** The prompt running now. */
export interface PromptRun {
  scope: CancellationScope;
  requestId: string;
  abort?: AbortRecord;
  settled: boolean;
  finalStatus?: SendResult['status'];
}

/** One close() in progress, whose outcome concurrent close() calls share. */
export interface CloseAttempt {
  done: boolean;
  /** What the attempt threw; present (even if falsy) only when it failed. */
  error?: unknown;
}
