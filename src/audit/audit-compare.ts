/**
 * A log's entries against the entries made again from the session's history: equal entry for
 * entry (seq and hashes aside), else the first that differs, is missing, is extra or moved.
 *
 * @module
 */
import { canonicalJson } from '../common/json.js';
import type { AuditProblem } from './audit-chain.js';
import type { AuditEntry, AuditEntryBody, AuditLog } from './audit-types.js';

/** An entry's content: what is compared (seq, prevHash and hash are the chain's). */
function bodyOf(entry: AuditEntry | AuditEntryBody): string {
  const { seq: _seq, prevHash: _prev, hash: _hash, ...body } = entry as AuditEntry;
  return canonicalJson(body);
}

/**
 * Compare `log`'s entries with `rebuilt` (the same entries made from the history). Returns the
 * first problem, or undefined when they match entry for entry. Entries the history has past
 * the log's last are no problem: the session went on after the export (see
 * {@link entriesAfterLog}).
 */
export function compareWithHistory(
  log: Pick<AuditLog, 'entries' | 'entryLines'>,
  rebuilt: readonly AuditEntryBody[],
): AuditProblem | undefined {
  const logged = log.entries.map(bodyOf);
  const recorded = rebuilt.map(bodyOf);
  const count = Math.max(logged.length, recorded.length);
  for (let index = 0; index < count; index++) {
    if (logged[index] === recorded[index]) continue;
    const entry = log.entries[index];
    const line = log.entryLines[index];
    const want = rebuilt[index];
    // The session went on after the export: the log is a prefix of what it records now.
    if (!entry) return undefined;
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
        message: `${where} was moved: the history has it as seq ${inHistory}`,
      };
    }
    if (inHistory >= 0) {
      return {
        problem: 'missing',
        seq: index,
        kind: want.kind,
        line,
        message: `the history's entry seq ${index} (${want.kind}) is not in the log, before ${where}`,
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
export function entriesAfterLog(
  log: Pick<AuditLog, 'entries'>,
  rebuilt: readonly AuditEntryBody[],
): number {
  return Math.max(0, rebuilt.length - log.entries.length);
}
