/**
 * Plain-text rendering for the CLI: aligned tables, times, durations, and the `inspect`
 * view of a {@link HistoryTimeline}. Pure.
 *
 * @module
 */
import type { HistoryDispatch, HistoryTimeline } from '../history/timeline.js';
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
  const out: string[] = [];
  const who = timeline.sessionId ? `session ${timeline.sessionId}` : 'workflow';
  const workflow = timeline.workflowId ? ` (workflow ${timeline.workflowId})` : '';
  out.push(`${who}${workflow}: ${timeline.eventCount} history events`);
  out.push(`started ${formatTime(timeline.startedAt)}`);
  out.push('');

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
    rows.push([
      String(dispatch.seq),
      dispatch.event,
      dispatch.toolName ?? '',
      String(dispatch.callbackCount),
      dispatch.decision,
      reasonOf(dispatch),
      formatDuration(dispatch.durationMs),
      ...(versioned ? [dispatch.version ?? ''] : []),
    ]);
  }
  if (markerRow && !markerPlaced) rows.push(markerRow);
  if (rows.length === 0) {
    out.push('no hook dispatches (no event with callbacks ran)');
  } else {
    out.push(
      formatTable(
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
      ),
    );
  }
  out.push('');
  out.push(statusLine(timeline));
  return out.join('\n');
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
