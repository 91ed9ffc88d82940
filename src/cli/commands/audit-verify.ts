/**
 * `durable-agent audit-verify`: check an audit log's chain and signature with the signer's
 * public key (offline), and, given the server (`--session`) or a history file (`--history`),
 * that the log matches the recorded history entry for entry. Exit 0: it holds; 1: an entry
 * was changed, removed, added or moved, or the signature does not verify (the message names
 * the entry, its seq, kind and line); 2: bad input (no key, a wrong key type, a malformed line).
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import {
  AuditLogFormatError,
  compareWithHistory,
  entriesAfterLog,
  keyFingerprint,
  parseAuditLog,
  sessionAuditEntries,
  verifyAuditChain,
  type AuditEntryBody,
  type AuditLog,
} from '../../audit/index.js';
import { createPublicKey } from 'node:crypto';
import { readAuditKey, runsOfFile, runsOfSession, type SessionRuns } from '../audit-sources.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';

/** `audit-verify`: check the log. @returns the exit code. */
export async function auditVerify(args: CommandArgs, io: CliOutput): Promise<number> {
  const file = args.args[0]!;
  if (args.session !== undefined && args.history !== undefined) {
    throw new CliError('audit-verify: give --session or --history, not both', { usage: true });
  }
  const key = readAuditKey(args.pub, '--pub', 'audit-verify');
  const log = readLog(file);
  const problem = verifyAuditChain(log, key);
  if (problem) throw new CliError(`${file}: ${problem.message}`, { exitCode: 1 });
  const fingerprint = keyFingerprint(key.type === 'private' ? createPublicKey(key) : key);
  const count = log.entries.length;
  if (args.session === undefined && args.history === undefined) {
    io.out(`${file}: ok: ${count} entries, chain and signature hold (key ${fingerprint})`);
    return 0;
  }
  const sessions = await recordedSessions(args, log);
  const rebuilt = rebuild(sessions, log);
  const mismatch = compareWithHistory(log, rebuilt);
  const source = args.history ?? `session ${args.session}`;
  if (mismatch) {
    throw new CliError(`${file}: does not match the history (${source}): ${mismatch.message}`, {
      exitCode: 1,
    });
  }
  const after = entriesAfterLog(log, rebuilt);
  io.out(
    `${file}: ok: ${count} entries, chain and signature hold (key ${fingerprint}), and match ` +
      `the history (${source}) entry for entry` +
      (after > 0 ? `; the history has ${after} more, recorded after the export` : ''),
  );
  return 0;
}

/** The log in `file`. @throws {CliError} exit 2: no file, a malformed line (named). */
function readLog(file: string): AuditLog {
  if (!existsSync(file)) throw new CliError(`no such file: ${file}`, { exitCode: 2 });
  try {
    return parseAuditLog(readFileSync(file, 'utf8'));
  } catch (error) {
    if (error instanceof AuditLogFormatError) {
      throw new CliError(`${file}: ${error.message}`, { exitCode: 2, cause: error });
    }
    throw error;
  }
}

/** The sessions the log covers, as recorded: the history file, or each from the server. */
async function recordedSessions(args: CommandArgs, log: AuditLog): Promise<SessionRuns[]> {
  const covered = log.header.covers.sessions;
  if (args.history !== undefined) {
    if (covered.length > 1) {
      throw new CliError(
        `audit-verify: the log covers ${covered.length} sessions; a history file holds one: use --session`,
        { exitCode: 2 },
      );
    }
    return [await runsOfFile(args.history, args)];
  }
  const named = args.session!;
  const sessionOfLog = (id: string) => id === named || `session-${id}` === named;
  if (!covered.some(sessionOfLog)) {
    throw new CliError(
      `audit-verify: the log does not cover session ${named} (it covers ${covered.join(', ')})`,
      { exitCode: 2 },
    );
  }
  // A log of several sessions (--query) is compared whole: every session it covers, in order.
  return withClient(args, async (client) => {
    const sessions: SessionRuns[] = [];
    for (const id of covered) sessions.push(await runsOfSession(client, id, args));
    return sessions;
  });
}

/** The entries made again from the history, as the header says the log's were made. */
function rebuild(sessions: readonly SessionRuns[], log: AuditLog): AuditEntryBody[] {
  const { content, encrypted } = log.header.covers;
  const options = { content: content === true, encrypted: encrypted === true };
  try {
    return sessions.flatMap(
      (session) =>
        sessionAuditEntries(session.runs, session.workflowId || log.header.workflowId, options)
          .entries,
    );
  } catch (error) {
    throw new CliError(`audit-verify: the history: ${oneLine(error)}`, {
      exitCode: 2,
      cause: error,
    });
  }
}
