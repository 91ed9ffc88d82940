/**
 * `durable-agent audit-export`: a signed JSON Lines log of every decision of a session (or of
 * the sessions a visibility query lists), made from their histories: hook decisions with
 * reasons and diffs, permission answers, approvals with identity and timing, tool runs by
 * digest, model steps, versions. docs/audit.md describes the log.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import {
  keyFingerprint,
  writeAuditLog,
  type AuditEntryBody,
  type SessionAudit,
} from '../../audit/index.js';
import { createPublicKey } from 'node:crypto';
import {
  auditOfSource,
  fileSource,
  readAuditKey,
  sessionSource,
  workflowSource,
  type SessionSource,
} from '../audit-sources.js';
import { CliError } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';
import { isDeadline } from '../deadline.js';
import { serverError, serverTimeout } from '../failures.js';
import { isHistoryFile } from '../history-files.js';

/** `audit-export`: write the log. @returns the exit code. */
export async function auditExport(args: CommandArgs, io: CliOutput): Promise<number> {
  const target = args.args[0];
  if ((target === undefined) === (args.query === undefined)) {
    throw new CliError(
      'audit-export: give a session id or history file, or --query (not both); usage: durable-agent audit-export <sessionId | history.json> [--query Q] --key private.pem [--out file] [--content]',
      { usage: true },
    );
  }
  const key = readAuditKey(args.key, '--key', 'audit-export');
  const { audits, encrypted } = await auditsToExport(args, target);
  const first = audits[0]!;
  const entries: AuditEntryBody[] = audits.flatMap((audit) => audit.entries);
  const lines = writeAuditLog(
    entries,
    {
      sessionId: first.sessionId,
      workflowId: first.workflowId,
      runIds: audits.flatMap((audit) => audit.runIds),
      covers: {
        sessions: audits.map((audit) => audit.sessionId),
        ...(args.query !== undefined ? { query: args.query } : {}),
        content: args.content,
        encrypted,
      },
      exportedAt: new Date(),
    },
    key,
  );
  const text = `${lines.join('\n')}\n`;
  if (args.out !== undefined) {
    writeFileSync(args.out, text);
  } else {
    io.out(text.slice(0, -1));
  }
  const runs = audits.reduce((sum, audit) => sum + audit.runIds.length, 0);
  io.err(
    `audit-export: ${entries.length} entries of ${audits.length === 1 ? `session ${first.sessionId}` : `${audits.length} sessions`} ` +
      `(${runs} run${runs === 1 ? '' : 's'})${encrypted && !args.content ? ', content as digests (encrypted session)' : ''}, ` +
      `signed by ${keyFingerprint(createPublicKey(key))}${args.out !== undefined ? `, written to ${args.out}` : ''}`,
  );
  return 0;
}

/** The sessions' entries, and whether any session is encrypted (then every one is digested). */
async function auditsOf(
  sources: readonly SessionSource[],
  args: CommandArgs,
): Promise<{ audits: SessionAudit[]; encrypted: boolean }> {
  if (sources.length === 0) {
    throw new CliError(`audit-export: the query lists no session: ${args.query}`, { exitCode: 2 });
  }
  const encrypted = sources.some((source) => source.encrypted);
  const audits: SessionAudit[] = [];
  for (const source of sources) {
    audits.push(await auditOfSource(source, { content: args.content, encrypted }));
  }
  return { audits, encrypted };
}

/** The sessions to export: the one named, a history file, or those the query lists. */
async function auditsToExport(
  args: CommandArgs,
  target: string | undefined,
): Promise<{ audits: SessionAudit[]; encrypted: boolean }> {
  if (target !== undefined && isHistoryFile(target)) {
    return auditsOf([fileSource(target, args)], args);
  }
  return withClient(args, async (client) => {
    if (target !== undefined) return auditsOf([await sessionSource(client, target, args)], args);
    const sources: SessionSource[] = [];
    for (const workflowId of await listQuery(client, args.query!, args)) {
      sources.push(await workflowSource(client, workflowId, workflowId, args));
    }
    return auditsOf(sources, args);
  });
}

/** The workflow ids the query lists, each once, in the order listed. */
async function listQuery(client: Client, query: string, args: CommandArgs): Promise<string[]> {
  const ids = new Set<string>();
  try {
    for await (const execution of client.workflow.list({ query })) {
      if (execution.type === 'sessionWorkflow') ids.add(execution.workflowId);
    }
  } catch (error) {
    if (isDeadline(error, args)) throw serverTimeout(args, 'listing the query', error);
    throw serverError(error, args);
  }
  return [...ids];
}
