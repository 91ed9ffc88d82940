/**
 * What the deploy gate reports ({@link GateReport}: per session, the flips and what was not
 * compared) and the report as text ({@link formatGateReport}).
 *
 * @module
 */
import { mcpToolsLine } from '../history/timeline-mcp.js';
import type { HistoryMcpTools } from '../history/timeline-types.js';
import { type HookEvent } from '../common/hook-events.js';
import type { CheckPermissionInput } from '../common/activity-io.js';
import { type PermissionResult } from '../common/permission.js';
import { formatGoldenChanges, type GoldenChange } from './golden.js';

/** A recorded dispatch that was not replayed, and why. */
export interface GateUncompared {
  /** The dispatch's position in the session (as `inspect` counts, across runs). */
  seq: number;
  /** The hook event dispatched. */
  event: HookEvent;
  /** The tool's name, for tool events. */
  toolName?: string;
  /** A sub-agent's dispatch only: its path (`main/researcher`). */
  agentPath?: string;
  /** A sub-agent's dispatch only: its session id. */
  sessionId?: string;
  /** Why it was not replayed. */
  why: string;
}

/** A permission answer as the gate compares it: the policy's result, or how it failed. */
export type GatePermissionAnswer = PermissionResult | { behavior: 'error'; message: string };

/** A permission check recorded by a session (a permission function's `checkPermission`). */
export interface GatePermissionCheck {
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** What the policy was given. */
  request: Pick<CheckPermissionInput, 'toolName' | 'input' | 'kind' | 'affectedPaths'>;
  /** The answer recorded. */
  answer: GatePermissionAnswer;
  /** The check was the session's own permission function (`permissionHandler`): not compared. */
  sessionHandler?: true;
  /** The session's version when the check ran. */
  version?: string;
  /** A sub-agent's check only: the sub-agent's name, which picks its policy. */
  subagent?: string;
  /** A sub-agent's check only: its path (`main/researcher`). */
  agentPath?: string;
}

/** A permission answer that flips. */
export interface GatePermissionFlip {
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** The recorded answer. */
  before: GatePermissionAnswer;
  /** The new definition's answer to the same request. */
  after: GatePermissionAnswer;
  /** A sub-agent's check only: its path (`main/researcher`). */
  agentPath?: string;
}

/** One top session, checked, with its sub-agents (their dispatches are listed in it by path). */
export interface GateSessionReport {
  /** The session's id. */
  sessionId: string;
  /** The session's workflow id. */
  workflowId: string;
  /** The version the session started with. */
  version?: string;
  /** Workflow status as the server lists it (`RUNNING`, `COMPLETED`, ...). */
  status: string;
  /** When the session's workflow started. */
  startTime: Date;
  /** Dispatches replayed and compared. */
  checked: number;
  /** Every decision that flips, in order: before (recorded) and after (the new definition). */
  flips: GoldenChange[];
  /** Recorded dispatches not compared, with why. */
  uncompared: GateUncompared[];
  /** Recorded permission checks judged again. */
  permissionsChecked: number;
  /** Every permission answer that flips, in order. */
  permissionFlips: GatePermissionFlip[];
  /**
   * The session's permission policy (its manifest's `preset:<name>` or `function:<hash>`)
   * when the new definition's differs; presets record no check to replay.
   */
  policyChange?: { before: string; after: string };
  /**
   * The MCP tools the session started with (`mcpServers`), from its history: the new
   * definition's calls will be checked against this list. Absent without MCP servers.
   */
  mcpTools?: HistoryMcpTools;
}

/** What {@link gateDeploy} found. */
export interface GateReport {
  /** The agent's name (its `name` option). */
  agentName: string;
  /** The running version whose sessions were replayed. */
  version: string;
  /** The new definition's version (its `version`, else its fingerprint) and fingerprint. */
  newVersion: string;
  /** The new definition's fingerprint. */
  newFingerprint: string;
  /** The sessions checked, most recent first (as the server lists them). */
  sessions: GateSessionReport[];
  /** Dispatches compared, in all. */
  checked: number;
  /** Permission checks judged again, in all. */
  permissionsChecked: number;
  /** Flips, in all: hook decisions and permission answers (0: the gate passes). */
  flipped: number;
  /** Dispatches not compared, in all. */
  uncompared: number;
  /**
   * Events the new definition has callbacks for that no checked session dispatched: their
   * decisions have no recorded input to be judged on.
   */
  unrecordedEvents: HookEvent[];
  /** Sessions of the namespace whose memo could not be read (another key ring?): not checked. */
  unreadable: Array<{ workflowId: string; why: string }>;
}

/**
 * The report as text: per session with flips or dispatches not compared, a line and the
 * flips' table (dispatch, event, tool, before, after), then one summary line.
 */
export function formatGateReport(report: GateReport): string {
  const lines: string[] = [];
  for (const session of report.sessions) {
    const checked =
      `${plural(session.checked, 'dispatch', 'dispatches')}` +
      (session.permissionsChecked > 0
        ? `, ${plural(session.permissionsChecked, 'permission check')}`
        : '');
    const head = `session ${session.sessionId} (${session.status}, ${checked} checked)`;
    const flips = session.flips.length + session.permissionFlips.length;
    const mcp = session.mcpTools ? [`  ${mcpToolsLine(session.mcpTools)}`] : [];
    if (flips === 0 && session.uncompared.length === 0 && !session.policyChange) {
      lines.push(`${head}: no flips`, ...mcp);
      continue;
    }
    lines.push(`${head}: ${plural(flips, 'flip')}`, ...mcp);
    if (session.flips.length > 0) {
      lines.push(
        ...formatGoldenChanges(session.flips)
          .split('\n')
          .map((l) => `  ${l}`),
      );
    }
    for (const p of session.permissionFlips) {
      lines.push(
        `  permission ${p.agentPath ? `${p.agentPath} ` : ''}${p.toolName} (${p.toolUseId}): ` +
          `${showAnswer(p.before)} -> ${showAnswer(p.after)}`,
      );
    }
    if (session.policyChange) {
      lines.push(
        `  permission policy: ${session.policyChange.before} -> ${session.policyChange.after}` +
          (session.policyChange.before.startsWith('preset:')
            ? ' (a preset records no check: its answers are not replayed)'
            : ''),
      );
    }
    for (const u of session.uncompared) {
      lines.push(
        `  not compared: #${u.seq}${u.agentPath ? ` ${u.agentPath}` : ''} ${u.event}${u.toolName ? ` ${u.toolName}` : ''}: ${u.why}`,
      );
    }
  }
  const flippedSessions = report.sessions.filter(
    (s) => s.flips.length + s.permissionFlips.length > 0,
  ).length;
  const permissions =
    report.permissionsChecked > 0
      ? `, ${plural(report.permissionsChecked, 'permission check')}`
      : '';
  lines.push(
    `gate: agent '${report.agentName}' version '${report.version}' -> '${report.newVersion}': ` +
      `${plural(report.sessions.length, 'session')}, ${plural(report.checked, 'dispatch', 'dispatches')}${permissions} checked, ` +
      (report.flipped === 0
        ? 'no decision flips'
        : `${plural(report.flipped, 'decision')} ${report.flipped === 1 ? 'flips' : 'flip'} in ${plural(flippedSessions, 'session')}`) +
      (report.uncompared > 0 ? `; ${report.uncompared} not compared` : ''),
  );
  if (report.unrecordedEvents.length > 0) {
    lines.push(
      `note: no recorded input for ${report.unrecordedEvents.join(', ')} (the new definition has callbacks ` +
        'for them, but no checked session dispatched them): those decisions are not checked',
    );
  }
  if (report.unreadable.length > 0) {
    lines.push(
      `note: ${plural(report.unreadable.length, 'session')} of the namespace could not be read and were not checked ` +
        `(${distinctReasons(report.unreadable)})`,
    );
  }
  return lines.join('\n');
}

function showAnswer(answer: GatePermissionAnswer): string {
  const message = 'message' in answer && answer.message !== undefined ? `: ${answer.message}` : '';
  const input =
    'updatedInput' in answer && answer.updatedInput !== undefined
      ? ` input=${JSON.stringify(answer.updatedInput)}`
      : '';
  const interrupt = 'interrupt' in answer && answer.interrupt ? ' (interrupt)' : '';
  return `${answer.behavior}${message}${input}${interrupt}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Why sessions could not be read, each reason once (a key id per reason), the first ten. */
export function distinctReasons(unreadable: GateReport['unreadable']): string {
  const reasons = [...new Set(unreadable.map((u) => u.why))];
  const more = reasons.length > 10 ? `; and ${reasons.length - 10} more` : '';
  return reasons.slice(0, 10).join('; ') + more;
}
