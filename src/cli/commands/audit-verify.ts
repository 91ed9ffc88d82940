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
  compareSessionsWithHistory,
  keyFingerprint,
  sessionEntriesAfterLog,
  parseAuditLog,
  verifyAuditChain,
  type AuditEntryBody,
  type AuditLog,
} from '../../audit/index.js';
import { createPublicKey } from 'node:crypto';
import {
  auditOfSource,
  fileSource,
  readAuditKey,
  sessionSource,
  type SessionSource,
} from '../audit-sources.js';
import { CliError } from '../cli-error.js';
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
  const rebuilt = await recordedEntries(args, log);
  const mismatch = compareSessionsWithHistory(log, rebuilt);
  const source = args.history ?? `session ${args.session}`;
  if (mismatch) {
    throw new CliError(`${file}: does not match the history (${source}): ${mismatch.message}`, {
      exitCode: 1,
    });
  }
  const after = sessionEntriesAfterLog(log, rebuilt);
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

/**
 * The entries made again from the recorded history of each session the log covers (the
 * history file, or each from the server), as the header says the log's were made: one list
 * a session, in the header's order.
 */
async function recordedEntries(args: CommandArgs, log: AuditLog): Promise<AuditEntryBody[][]> {
  const covered = log.header.covers.sessions;
  const { content, encrypted } = log.header.covers;
  const options = { content: content === true, encrypted: encrypted === true };
  const entriesOf = async (sources: readonly SessionSource[]) => {
    const entries: AuditEntryBody[][] = [];
    for (const source of sources) {
      if (!source.workflowId) source.workflowId = log.header.workflowId;
      entries.push((await auditOfSource(source, options)).entries);
    }
    return entries;
  };
  if (args.history !== undefined) {
    if (covered.length > 1) {
      throw new CliError(
        `audit-verify: the log covers ${covered.length} sessions; a history file holds one: use --session`,
        { exitCode: 2 },
      );
    }
    return entriesOf([fileSource(args.history, args)]);
  }
  const named = args.session!;
  if (!covered.some((id) => id === named || `session-${id}` === named)) {
    throw new CliError(
      `audit-verify: the log does not cover session ${named} (it covers ${covered.join(', ')})`,
      { exitCode: 2 },
    );
  }
  // A log of several sessions (--query) is compared session by session: each session's
  // entries in the log against its own history (a prefix when it went on after the export).
  return withClient(args, async (client) => {
    const sources: SessionSource[] = [];
    for (const id of covered) sources.push(await sessionSource(client, id, args));
    return entriesOf(sources);
  });
}
