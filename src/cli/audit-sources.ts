/**
 * What `audit-export` and `audit-verify` read: the signing and checking keys (PEM files), and
 * a session's runs (from the server, every run oldest first, or a history file), their
 * payloads decoded as `inspect` reads them.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { ENCRYPTED_ENCODING } from '../payloads/encryption.js';
import type { AuditRun } from '../audit/index.js';
import { storedPayloadEventIds } from '../history/decode.js';
import { fetchRunHistories } from '../history/files.js';
import { CliError, oneLine } from './cli-error.js';
import type { CommandArgs } from './command-args.js';
import { isDeadline } from './deadline.js';
import { serverError, serverTimeout } from './failures.js';
import { decodedHistory } from './history-codecs.js';
import { loadHistoryFile } from './history-files.js';
import { sessionOf } from './session-lookup.js';

/** How to make an Ed25519 key pair, for the errors about keys. */
const KEYGEN_HINT =
  'make one with: openssl genpkey -algorithm ed25519 -out audit-key.pem && openssl pkey -in audit-key.pem -pubout -out audit-key.pub.pem';

/**
 * The Ed25519 key of PEM file `path` (`--key`: private, `--pub`: public; a private key is
 * accepted for `--pub` too, its public half is used).
 * @throws {CliError} exit 2: no option, no file, not a PEM key, not Ed25519.
 */
export function readAuditKey(
  path: string | undefined,
  option: '--key' | '--pub',
  command: string,
): KeyObject {
  const what = option === '--key' ? 'private key to sign with' : 'public key to check with';
  if (path === undefined) {
    throw new CliError(
      `${command}: ${option} is required: the Ed25519 ${what} (PEM); ${KEYGEN_HINT}`,
      {
        usage: true,
      },
    );
  }
  if (!existsSync(path)) throw new CliError(`${option} ${path}: no such file`, { exitCode: 2 });
  const pem = readFileSync(path);
  let key: KeyObject;
  try {
    key = option === '--key' ? createPrivateKey(pem) : publicKeyOf(pem);
  } catch (error) {
    throw new CliError(
      `${option} ${path}: not a PEM ${option === '--key' ? 'private' : 'public'} key (${oneLine(error)}); ${KEYGEN_HINT}`,
      { exitCode: 2, cause: error },
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new CliError(
      `${option} ${path}: an ${key.asymmetricKeyType ?? key.type} key; audit logs are signed with Ed25519: ${KEYGEN_HINT}`,
      { exitCode: 2 },
    );
  }
  return key;
}

/** The public key of a PEM that holds a public key, or a private one. */
function publicKeyOf(pem: Buffer): KeyObject {
  try {
    return createPublicKey(pem);
  } catch (error) {
    try {
      return createPublicKey(createPrivateKey(pem));
    } catch {
      throw error;
    }
  }
}

/** A session's runs, ready for `sessionAuditEntries`, and whether its payloads are encrypted. */
export interface SessionRuns {
  sessionId: string;
  workflowId: string;
  runs: AuditRun[];
  encrypted: boolean;
}

/** The run of history file `path`. @throws {CliError} as `inspect` does. */
export async function runsOfFile(path: string, args: CommandArgs): Promise<SessionRuns> {
  const recorded = loadHistoryFile(path);
  const run = await auditRun(recorded, args, path);
  const started = recorded.events?.[0]?.workflowExecutionStartedEventAttributes;
  const workflowId = started?.workflowId ?? '';
  return { sessionId: '', workflowId, runs: [run], encrypted: isEncrypted(recorded) };
}

/**
 * Every run of the session `target` (a session id or `session-<id>`), oldest first.
 * @throws {CliError} no such session, the server, payloads that do not open.
 */
export async function runsOfSession(
  client: Client,
  target: string,
  args: CommandArgs,
): Promise<SessionRuns> {
  const found = await sessionOf(client, args, target);
  return runsOfWorkflow(client, found.workflowId, found.sessionId, args);
}

/** Every run of workflow `workflowId`, oldest first. */
export async function runsOfWorkflow(
  client: Client,
  workflowId: string,
  sessionId: string,
  args: CommandArgs,
): Promise<SessionRuns> {
  let histories: History[];
  try {
    histories = await fetchRunHistories(client, workflowId);
  } catch (error) {
    if (isDeadline(error, args)) {
      throw serverTimeout(args, `reading the history of session '${sessionId}'`, error);
    }
    throw serverError(error, args);
  }
  const runs: AuditRun[] = [];
  for (const history of histories) runs.push(await auditRun(history, args, sessionId));
  return { sessionId, workflowId, runs, encrypted: histories.some(isEncrypted) };
}

async function auditRun(recorded: History, args: CommandArgs, target: string): Promise<AuditRun> {
  return {
    history: await decodedHistory(recorded, args, target),
    storedPayloadEventIds: storedPayloadEventIds(recorded),
  };
}

/** Whether the run's input (its first payload) was sealed by the agent's encryption. */
function isEncrypted(history: History): boolean {
  const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const encoding = input?.metadata?.encoding;
  return encoding != null && Buffer.from(encoding).toString('utf8') === ENCRYPTED_ENCODING;
}
