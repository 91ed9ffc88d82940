/**
 * Plain-text rendering for the CLI: aligned tables, times, durations, and the `inspect`
 * view of a {@link HistoryTimeline}. Pure.
 *
 * @module
 */
import { shortDigest } from '../common/approval-digest.js';
import { mcpToolsLine } from '../history/timeline-mcp.js';
import { budgetLine } from '../history/timeline-budget.js';
import type {
  HistoryCallback,
  HistoryDispatch,
  HistoryTimeline,
  HistoryToolCall,
  LineChange,
  ValueDiff,
} from '../history/timeline-types.js';
import { formatDuration } from './workers.js';

/**
 * An aligned table: columns padded to their widest cell, two spaces apart, no trailing
 * blanks.
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = headers.map((header, column) =>
    Math.max(displayWidth(header), ...rows.map((row) => displayWidth(row[column] ?? ''))),
  );
  const pad = (cell: string, width: number) => cell + ' '.repeat(width - displayWidth(cell));
  const line = (cells: readonly string[]) =>
    widths
      .map((width, column) => pad(cells[column] ?? '', width))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** Columns `text` takes in a terminal: wide (CJK, emoji) characters take two. */
function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += WIDE.test(char) ? 2 : 1;
  return width;
}

const WIDE =
  /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1faff}\u{20000}-\u{3fffd}]/u;

/** A time as ISO 8601 UTC to the second (`2026-11-29T20:16:16Z`), or `-`. */
export function formatTime(time: Date | number | undefined): string {
  if (time === undefined) return '-';
  const date = typeof time === 'number' ? new Date(time) : time;
  if (Number.isNaN(date.getTime())) return '-';
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `text` cut to `max` characters with an ellipsis, on one line. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text.replace(/\s*\n\s*/g, ' '));
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * The reason cell of a dispatch: its reason (after the error's code, for a callback that
 * failed), and what became of a lingering callback.
 */
function reasonOf(dispatch: HistoryDispatch): string {
  const parts: string[] = [];
  const code = dispatch.decision === 'error' ? dispatch.error?.code : undefined;
  if (dispatch.reason) parts.push(code ? `${code}: ${dispatch.reason}` : dispatch.reason);
  if (dispatch.decidedBy !== undefined && dispatch.callbackCount > 1) {
    parts.push(`by callback #${dispatch.decidedBy + 1}`);
  }
  if (dispatch.cleanup) parts.push(`callback cleanup ${dispatch.cleanup}`);
  return truncate(parts.join('; '), 72);
}

/**
 * The `inspect` view: a header, one row per dispatch (with the SessionEnd marker's line
 * where it was recorded) and the session's final status.
 */
export function renderTimeline(timeline: HistoryTimeline): string {
  const out: string[] = [...timelineHeader(timeline), ''];
  out.push(dispatchTable(timeline));
  const decisions = timeline.dispatches.filter((d) => d.callbacks && d.callbacks.length > 0);
  if (decisions.length > 0) {
    out.push('');
    out.push(
      'hook decisions (callback #n: decision, reason, time; edits against what it was given)',
    );
    for (const dispatch of decisions) out.push(...dispatchDetail(dispatch));
  }
  if (timeline.toolCalls.length > 0) {
    out.push('');
    out.push('tool calls');
    out.push(toolCallTable(timeline));
    const details = timeline.toolCalls.flatMap((call) => toolCallDetail(call));
    if (details.length > 0) out.push(...details);
  }
  out.push('');
  out.push(statusLine(timeline));
  return out.join('\n');
}

/** The `inspect` header: who, the agent, when it started, and its version moves. */
function timelineHeader(timeline: HistoryTimeline): string[] {
  const out: string[] = [];
  const who = timeline.sessionId ? `session ${timeline.sessionId}` : 'workflow';
  const workflow = timeline.workflowId ? ` (workflow ${timeline.workflowId})` : '';
  out.push(`${who}${workflow}: ${timeline.eventCount} history events`);
  const sub = timeline.subagent;
  if (sub) out.push(`sub-agent ${sub.agentPath} of session ${sub.parentSessionId}`);
  const agent = agentLine(timeline);
  if (agent) out.push(agent);
  if (timeline.mcpTools) out.push(mcpToolsLine(timeline.mcpTools));
  if (timeline.budget) out.push(budgetLine(timeline.budget));
  out.push(`started ${formatTime(timeline.startedAt)}`);
  for (const move of timeline.upgrades ?? []) {
    out.push(
      `moved from version ${move.fromVersion} (fingerprint ${move.fromFingerprint}) to ` +
        `${move.toVersion} (fingerprint ${move.toFingerprint}) ${formatTime(move.at)} by ` +
        `${move.by}, after ${move.afterPrompts} prompt(s)`,
    );
  }
  for (const move of timeline.abandonedUpgrades ?? []) {
    out.push(
      `move to version ${move.toVersion} by ${move.by} abandoned ${formatTime(move.at)}: no ` +
        `finish or cancel within ${move.heldMs} ms, stayed on ${move.version}`,
    );
  }
  return out;
}

/**
 * The dispatch table, one row per dispatch with the SessionEnd marker's row where it was
 * recorded; a sentence when there is no row.
 */
function dispatchTable(timeline: HistoryTimeline): string {
  const marker = timeline.sessionEndMarker;
  const markerRow = marker
    ? [
        '--',
        'SessionEnd marker',
        '',
        '',
        `reason=${marker.reason}`,
        `recorded ${formatTime(marker.at)} (event ${marker.eventId})`,
        '',
      ]
    : undefined;
  const rows: string[][] = [];
  // Sessions from before versions have none: their table keeps its columns.
  const versioned = timeline.dispatches.some((d) => d.version !== undefined);
  let markerPlaced = false;
  for (const dispatch of timeline.dispatches) {
    if (markerRow && !markerPlaced && dispatch.scheduledEventId > marker!.eventId) {
      rows.push(markerRow);
      markerPlaced = true;
    }
    rows.push(dispatchRow(dispatch, versioned));
  }
  if (markerRow && !markerPlaced) rows.push(markerRow);
  if (rows.length === 0) return 'no hook dispatches (no event with callbacks ran)';
  return formatTable(
    [
      'SEQ',
      'EVENT',
      'TOOL',
      'CALLBACKS',
      'DECISION',
      'REASON',
      'DURATION',
      ...(versioned ? ['VERSION'] : []),
    ],
    rows,
  );
}

/** One dispatch's row of the dispatch table. */
function dispatchRow(dispatch: HistoryDispatch, versioned: boolean): string[] {
  return [
    String(dispatch.seq),
    dispatch.local
      ? `${dispatch.event} (local)`
      : dispatch.inline
        ? `${dispatch.event} (inline)`
        : dispatch.event,
    dispatch.toolName ?? '',
    String(dispatch.callbackCount),
    dispatch.decision,
    reasonOf(dispatch),
    formatDuration(dispatch.durationMs),
    ...(versioned ? [dispatch.version ?? ''] : []),
  ];
}

/** `agent demo, version 1.4.0, fingerprint 0123456789abcdef`, when the input names the agent. */
function agentLine(timeline: HistoryTimeline): string | undefined {
  const parts: string[] = [];
  if (timeline.agentName !== undefined) parts.push(`agent ${timeline.agentName}`);
  if (timeline.version !== undefined) parts.push(`version ${timeline.version}`);
  if (timeline.fingerprint !== undefined) parts.push(`fingerprint ${timeline.fingerprint}`);
  const others = [
    ...new Set(
      timeline.dispatches
        .map((d) => d.version)
        .filter((v): v is string => v !== undefined && v !== timeline.version),
    ),
  ];
  if (others.length > 0) parts.push(`dispatches also ran on version ${others.join(', ')}`);
  return parts.length > 0 ? parts.join(', ') : undefined;
}

/** Most diff lines shown per edit; the rest are counted. */
const MAX_DIFF_LINES = 20;

/**
 * One dispatch's callbacks: on one line when none did more than continue, else a line each
 * with its reason, and its edits as diffs.
 */
function dispatchDetail(dispatch: HistoryDispatch): string[] {
  const callbacks = dispatch.callbacks!;
  const tool = dispatch.toolName ? ` ${dispatch.toolName}` : '';
  const call = dispatch.toolUseId ? ` (call ${dispatch.toolUseId})` : '';
  const by =
    dispatch.decidedBy !== undefined && dispatch.decision !== 'continue'
      ? ` by callback #${dispatch.decidedBy + 1}`
      : '';
  const local = dispatch.local ? ' (local)' : dispatch.inline ? ' (inline)' : '';
  const head = `  ${dispatch.seq} ${dispatch.event}${local}${tool}${call}: ${dispatch.decision}${by}, ${formatDuration(dispatch.durationMs)}`;
  const plain = callbacks.every(
    (c) =>
      c.action === 'continue' && !c.reason && !c.modifiedInput && c.modifiedOutput === undefined,
  );
  if (plain) return [`${head} · ${callbacks.map(callbackHead).join(' · ')}`];
  const lines = [head];
  for (const callback of callbacks) {
    lines.push(`    ${callbackHead(callback)}`);
    if (callback.modifiedInput) {
      lines.push(...editLines('input', callback.inputDiff, '      '));
    }
    if (callback.modifiedOutput !== undefined) {
      lines.push(...editLines('output', callback.outputDiff, '      '));
    }
  }
  return lines;
}

/** `#2 abort: too risky (decided), 1.2 ms`. */
function callbackHead(callback: HistoryCallback): string {
  const reason = callback.reason ? `: ${truncate(callback.reason, 100)}` : '';
  const decided = callback.decided ? ' (decided)' : '';
  const time = callback.durationMs !== undefined ? `, ${formatDuration(callback.durationMs)}` : '';
  return `#${callback.index + 1} ${callback.action}${reason}${decided}${time}`;
}

/** `input:` and its diff (`unchanged` when the edit changed nothing), indented. */
function editLines(what: string, diff: ValueDiff | undefined, indent: string): string[] {
  if (!diff) return [`${indent}${what}: unchanged`];
  const lines = formatDiff(diff);
  if (lines.length === 1) return [`${indent}${what}: ${lines[0]!.trimStart()}`];
  return [`${indent}${what}:`, ...lines.map((line) => `${indent}  ${line}`)];
}

/**
 * A diff as text lines: for objects, `key: before → after` (`key: + value` added, `key: -
 * value` removed; a text of several lines as its changed lines under the key); for texts,
 * the changed lines as `- line` / `+ line`; otherwise `before → after`. Values are JSON, cut
 * to 80 characters; at most 20 changed lines per text.
 */
function formatDiff(diff: ValueDiff): string[] {
  switch (diff.kind) {
    case 'text':
      return lineChanges(diff.changes);
    case 'value':
      return [`${valueText(diff.before)} → ${valueText(diff.after)}`];
    case 'object':
      return diff.changes.flatMap((change) => {
        if (change.change === 'added') return [`${change.key}: + ${valueText(change.after)}`];
        if (change.change === 'removed') return [`${change.key}: - ${valueText(change.before)}`];
        if (change.lines)
          return [`${change.key}:`, ...lineChanges(change.lines).map((l) => `  ${l}`)];
        return [`${change.key}: ${valueText(change.before)} → ${valueText(change.after)}`];
      });
  }
}

function lineChanges(changes: readonly LineChange[]): string[] {
  const shown = changes.slice(0, MAX_DIFF_LINES).map((c) => `${c.op} ${truncate(c.text, 100)}`);
  if (changes.length > MAX_DIFF_LINES) {
    shown.push(`… ${changes.length - MAX_DIFF_LINES} more changed lines`);
  }
  return shown;
}

function valueText(value: unknown): string {
  return value === undefined ? '(none)' : truncate(JSON.stringify(value), 80);
}

/** The tool calls' table: permission, who decided, the wait, the result. */
function toolCallTable(timeline: HistoryTimeline): string {
  const rows = timeline.toolCalls.map((call) => {
    const permission = call.permission;
    const ask = permission?.ask;
    let permissionCell = '-';
    let by = '-';
    if (permission) {
      const policy = `${permission.answer ?? '?'} (${permission.policy}${
        permission.durationMs !== undefined ? `, ${formatDuration(permission.durationMs)}` : ''
      })`;
      permissionCell = ask ? `${policy} → ${askOutcome(ask.outcome)}` : policy;
      by = ask ? askedBy(ask) : 'policy';
    }
    return [
      call.toolUseId,
      call.toolName,
      permissionCell,
      by,
      ask ? formatDuration(ask.waitedMs) : '-',
      resultCell(call, timeline),
      call.result?.sizeBytes !== undefined ? `${call.result.sizeBytes} B` : '-',
      formatDuration(call.result?.durationMs),
    ];
  });
  return formatTable(
    ['CALL', 'TOOL', 'PERMISSION', 'DECIDED BY', 'WAITED', 'RESULT', 'SIZE', 'DURATION'],
    rows,
  );
}

function askOutcome(
  outcome: NonNullable<NonNullable<HistoryToolCall['permission']>['ask']>['outcome'],
): string {
  return outcome === 'expired' ? 'denied at the deadline' : outcome;
}

function askedBy(ask: NonNullable<NonNullable<HistoryToolCall['permission']>['ask']>): string {
  if (ask.outcome === 'approved' || ask.outcome === 'denied') {
    return ask.by ? `person ${ask.by}` : 'person';
  }
  if (ask.outcome === 'expired') return 'deadline';
  return '-';
}

/** `success`, `error`, `not run: PreToolUse abort`, ... with `truncated` / `offloaded`. */
function resultCell(call: HistoryToolCall, timeline: HistoryTimeline): string {
  const result = call.result;
  if (!result) {
    const ended = call.dispatches
      .map((seq) => timeline.dispatches.find((d) => d.seq === seq))
      .find((d) => d && d.decision !== 'continue' && d.decision !== 'running');
    if (ended) return `not run: ${ended.event} ${ended.decision}`;
    const permission = call.permission;
    if (permission?.ask && permission.ask.outcome !== 'approved') return 'not run';
    if (permission?.answer === 'deny') return 'not run: denied';
    return 'not run';
  }
  const marks = [result.truncated ? 'truncated' : '', result.offloaded ? 'offloaded' : ''];
  const extra = marks.filter((m) => m !== '');
  return extra.length > 0 ? `${result.status} (${extra.join(', ')})` : result.status;
}

/** Under the table, per call: messages, the deadline, edits of its input, its error. */
function toolCallDetail(call: HistoryToolCall): string[] {
  const lines: string[] = [];
  const permission = call.permission;
  const ask = permission?.ask;
  if (permission?.message) lines.push(`    policy: ${truncate(permission.message, 120)}`);
  if (permission?.inputDiff)
    lines.push(...editLines('policy edited the input', permission.inputDiff, '    '));
  if (ask) {
    // The stages of `advanced.approvals` reached, between the ask and the deadline.
    const stages = (ask.stages ?? [])
      .map(
        (s) =>
          `, ${s.stage}${s.escalateTo !== undefined ? ` to ${s.escalateTo}` : ''} ${formatTime(s.at)}`,
      )
      .join('');
    const asked = `asked ${formatTime(ask.askedAt)}${stages}, deadline ${formatTime(ask.deadline)}`;
    // A bound answer's digest (an unbound one's event has the call's digest too: not shown).
    const digest =
      ask.digest !== undefined && ask.bound !== false ? `, digest ${shortDigest(ask.digest)}` : '';
    const requestId = ask.requestId ? ` (request ${ask.requestId}${digest})` : '';
    switch (ask.outcome) {
      case 'approved':
        lines.push(
          `    ${asked}: approved by ${ask.by ?? 'a person'} after ${formatDuration(ask.waitedMs)}${requestId}`,
        );
        if (ask.updatedInput) {
          const ran =
            ask.updatedInputDigest && ask.bound !== false
              ? ` (digest ${shortDigest(ask.updatedInputDigest)})`
              : '';
          lines.push(...editLines(`with edited input${ran}`, ask.inputDiff, '    '));
        }
        break;
      case 'denied':
        lines.push(
          `    ${asked}: denied by ${ask.by ?? 'a person'} after ${formatDuration(ask.waitedMs)}${requestId}` +
            `${ask.message ? `: ${truncate(ask.message, 100)}` : ''}${ask.interrupt ? ' (interrupt)' : ''}`,
        );
        break;
      case 'expired':
        lines.push(`    ${asked}: no answer by the deadline: denied`);
        break;
      case 'cancelled':
        lines.push(
          `    ${asked}: the wait was cancelled after ${formatDuration(ask.waitedMs)} (abort or close)`,
        );
        break;
      case 'waiting':
        lines.push(`    ${asked}: waiting for a person`);
        break;
    }
  }
  if (call.inputDiff) lines.push(...editLines('ran with input', call.inputDiff, '    '));
  const child = call.child;
  if (child) {
    const calls = child.toolCalls !== undefined ? `, ${child.toolCalls} tool call(s)` : '';
    lines.push(
      `    sub-agent ${child.agentPath}: session ${child.sessionId}, ${child.status}${calls}`,
    );
  }
  const result = call.result;
  if (result?.error)
    lines.push(`    error: ${result.error.type}: ${truncate(result.error.message, 120)}`);
  if (result?.outputRef)
    lines.push(`    the model got a cut output; the whole is ${result.outputRef}`);
  if (lines.length === 0) return [];
  return [`  ${call.toolUseId} ${call.toolName}`, ...lines];
}

/** `status: COMPLETED at ... (end reason other, 2 prompts)`. */
function statusLine(timeline: HistoryTimeline): string {
  const details: string[] = [];
  if (timeline.endReason) details.push(`end reason ${timeline.endReason}`);
  if (timeline.promptsHandled !== undefined) {
    details.push(`${timeline.promptsHandled} prompt${timeline.promptsHandled === 1 ? '' : 's'}`);
  }
  if (timeline.startError) details.push(`never opened: ${truncate(timeline.startError, 100)}`);
  if (timeline.closeReason) details.push(truncate(timeline.closeReason, 100));
  const at = timeline.closedAt !== undefined ? ` at ${formatTime(timeline.closedAt)}` : '';
  const tail = details.length > 0 ? ` (${details.join(', ')})` : '';
  return `status: ${timeline.status}${at}${tail}`;
}
