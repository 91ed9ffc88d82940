/**
 * A log's entries against the entries made again from the session's history: equal entry for
 * entry (seq and hashes aside), else the first that differs, is missing, is extra or moved.
 *
 * @module
 */
import { canonicalJson } from '../common/json.js';
import type { AuditProblem } from './audit-chain.js';
import type { AuditEntry, AuditEntryBody, AuditHeader, AuditLog } from './audit-types.js';

/** An entry's content: what is compared (seq, prevHash and hash are the chain's). */
function bodyOf(entry: AuditEntry | AuditEntryBody): string {
  const { seq: _seq, prevHash: _prev, hash: _hash, ...body } = entry as AuditEntry;
  return canonicalJson(body);
}

/**
 * Compare `log`'s entries with `rebuilt` (the same entries made from the history). Returns the
 * first problem, or undefined when they match entry for entry. Entries the history has past
 * the log's last are no problem when the session went on after the export (see
 * {@link entriesAfterLog}); they are `missing` when among them is the end of a session that
 * closed before the log's `exportedAt` (a log cut short after the fact).
 */
export function compareWithHistory(
  log: Pick<AuditLog, 'entries' | 'entryLines'> & { header?: Pick<AuditHeader, 'exportedAt'> },
  rebuilt: readonly AuditEntryBody[],
  offset = 0,
): AuditProblem | undefined {
  const logged = log.entries.map(bodyOf);
  const recorded = rebuilt.map(bodyOf);
  const count = Math.max(logged.length, recorded.length);
  for (let index = 0; index < count; index++) {
    if (logged[index] === recorded[index]) continue;
    const entry = log.entries[index];
    const line = log.entryLines[index];
    const want = rebuilt[index];
    // The log is a prefix of what the history records now: the session went on after the
    // export, unless it had closed before.
    if (!entry) return cutShort(log, rebuilt, index, offset);
    const where = `entry seq ${entry.seq} (${entry.kind}, line ${line})`;
    if (!want) {
      return {
        problem: 'extra',
        seq: entry.seq,
        kind: entry.kind,
        line,
        message: `${where} is not in the history: the history has ${recorded.length} entries, the log ${logged.length}`,
      };
    }
    const inHistory = recorded.indexOf(logged[index]!, index + 1);
    const inLog = logged.indexOf(recorded[index]!, index + 1);
    if (inHistory >= 0 && inLog >= 0) {
      return {
        problem: 'moved',
        seq: entry.seq,
        kind: entry.kind,
        line,
        message: `${where} was moved: the history has it as seq ${inHistory + offset}`,
      };
    }
    if (inHistory >= 0) {
      return {
        problem: 'missing',
        seq: index + offset,
        kind: want.kind,
        line,
        message: `the history's entry seq ${index + offset} (${want.kind}) is not in the log, before ${where}`,
      };
    }
    if (inLog >= 0) {
      return {
        problem: 'extra',
        seq: entry.seq,
        kind: entry.kind,
        line,
        message: `${where} is not in the history`,
      };
    }
    return {
      problem: 'changed',
      seq: entry.seq,
      kind: entry.kind,
      line,
      message: `${where} differs from the history's${fieldsDiffering(entry, want)}`,
    };
  }
  return undefined;
}

/** `: fields a, b` naming the top-level fields that differ. */
function fieldsDiffering(entry: AuditEntry, want: AuditEntryBody): string {
  const { seq: _s, prevHash: _p, hash: _h, ...have } = entry;
  const keys = new Set([...Object.keys(have), ...Object.keys(want)]);
  const differ = [...keys].filter(
    (key) =>
      canonicalJson((have as Record<string, unknown>)[key]) !==
      canonicalJson((want as Record<string, unknown>)[key]),
  );
  return differ.length > 0 ? `: ${differ.join(', ')}` : '';
}

/** How many entries the history has past the log's last (recorded after the export). */
function entriesAfterLog(
  log: Pick<AuditLog, 'entries'>,
  rebuilt: readonly AuditEntryBody[],
): number {
  return Math.max(0, rebuilt.length - log.entries.length);
}

/**
 * The entries past a log's last (from `index`) hold the end of a session that closed before
 * the export: the log should have them, so the first of them is `missing`.
 */
function cutShort(
  log: { header?: Pick<AuditHeader, 'exportedAt'> },
  rebuilt: readonly AuditEntryBody[],
  index: number,
  offset: number,
): AuditProblem | undefined {
  const exportedAt = log.header ? Date.parse(log.header.exportedAt) : NaN;
  if (Number.isNaN(exportedAt)) return undefined;
  const closedAt = rebuilt
    .slice(index)
    .map((entry) =>
      entry.kind === 'session-end' ? (entry as { closedAt?: unknown }).closedAt : undefined,
    )
    .find((at): at is number => typeof at === 'number' && at <= exportedAt);
  if (closedAt === undefined) return undefined;
  return {
    problem: 'missing',
    seq: index + offset,
    kind: rebuilt[index]!.kind,
    message:
      `the log ends before the history's entry seq ${index + offset} (${rebuilt[index]!.kind}), but the ` +
      `session closed at ${new Date(closedAt).toISOString()}, before the export (${log.header!.exportedAt}): its last ` +
      `${rebuilt.length - index} entries were left out`,
  };
}

/**
 * Compare a log of several sessions (`audit-export --query`) with each session's entries made
 * from its history (`rebuilt`, in the order the header's `covers.sessions` lists them),
 * session by session: each session's entries in the log (from its `session` entry to the
 * next) must be its history's, or a prefix of them when it went on after the export (a
 * session that closed before the export must be whole). Seqs in a problem are the log's.
 * A log whose `session` entries do not match the sessions it covers is compared whole.
 */
export function compareSessionsWithHistory(
  log: Pick<AuditLog, 'entries' | 'entryLines'> & { header?: Pick<AuditHeader, 'exportedAt'> },
  rebuilt: readonly (readonly AuditEntryBody[])[],
): AuditProblem | undefined {
  const starts = log.entries.flatMap((entry, index) => (entry.kind === 'session' ? [index] : []));
  if (starts.length !== rebuilt.length || (starts.length > 0 && starts[0] !== 0)) {
    return compareWithHistory(log, rebuilt.flat());
  }
  for (const [session, recorded] of rebuilt.entries()) {
    const from = starts[session]!;
    const to = starts[session + 1] ?? log.entries.length;
    const part = {
      entries: log.entries.slice(from, to),
      entryLines: log.entryLines.slice(from, to),
      ...(log.header ? { header: log.header } : {}),
    };
    const problem = compareWithHistory(part, recorded, from);
    if (problem) return problem;
  }
  return undefined;
}

/** How many entries the histories have past each session's last in the log (all sessions). */
export function sessionEntriesAfterLog(
  log: Pick<AuditLog, 'entries'>,
  rebuilt: readonly (readonly AuditEntryBody[])[],
): number {
  const starts = log.entries.flatMap((entry, index) => (entry.kind === 'session' ? [index] : []));
  if (starts.length !== rebuilt.length) return entriesAfterLog(log, rebuilt.flat());
  return rebuilt.reduce((sum, recorded, session) => {
    const logged = (starts[session + 1] ?? log.entries.length) - starts[session]!;
    return sum + Math.max(0, recorded.length - logged);
  }, 0);
}
