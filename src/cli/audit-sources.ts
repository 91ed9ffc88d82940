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
import {
  addRunEntries,
  emptySessionAudit,
  type AuditEntryOptions,
  type AuditRun,
  type SessionAudit,
} from '../audit/index.js';
import { storedPayloadEventIds, type HistoryEvent } from '../history/decode.js';
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

/**
 * A session to read: its workflow id, whether its payloads are encrypted, and its runs,
 * oldest first, fetched and decoded one at a time (so a long session's runs are never all
 * in memory at once).
 */
export interface SessionSource {
  /** What errors name it by: the session id given, or the file. */
  label: string;
  workflowId: string;
  /** Whether a run's input was sealed by the agent's encryption. */
  encrypted: boolean;
  runs(): AsyncIterable<AuditRun>;
}

/** The run of history file `path`. @throws {CliError} as `inspect` does. */
export function fileSource(path: string, args: CommandArgs): SessionSource {
  const recorded = loadHistoryFile(path);
  const started = recorded.events?.[0]?.workflowExecutionStartedEventAttributes;
  return {
    label: path,
    workflowId: started?.workflowId ?? '',
    encrypted: isEncrypted(recorded.events?.[0]),
    runs: async function* () {
      yield await auditRun(recorded, args, path);
    },
  };
}

/**
 * The session `target` (a session id or `session-<id>`) on the server.
 * @throws {CliError} no such session, the server.
 */
export async function sessionSource(
  client: Client,
  target: string,
  args: CommandArgs,
): Promise<SessionSource> {
  const found = await sessionOf(client, args, target);
  return workflowSource(client, found.workflowId, target, args);
}

/**
 * The session of workflow `workflowId`: its runs' ids (from the newest back along each run's
 * `continuedExecutionRunId`, reading one event of each) and whether they are encrypted.
 * @throws {CliError} the server.
 */
export async function workflowSource(
  client: Client,
  workflowId: string,
  label: string,
  args: CommandArgs,
): Promise<SessionSource> {
  const runIds: string[] = [];
  let encrypted = false;
  await fromServer(args, `reading the runs of session '${label}'`, async () => {
    let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
    while (runId) {
      runIds.unshift(runId);
      const first = await firstEvent(client, workflowId, runId);
      encrypted ||= isEncrypted(first);
      runId = first?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    }
  });
  return {
    label,
    workflowId,
    encrypted,
    runs: async function* () {
      for (const runId of runIds) {
        const history = await fromServer(args, `reading the history of session '${label}'`, () =>
          client.workflow.getHandle(workflowId, runId).fetchHistory(),
        );
        yield await auditRun(history, args, label);
      }
    },
  };
}

/** The first event of a run: its start, with the input as stored (sealed, when encrypted). */
async function firstEvent(
  client: Client,
  workflowId: string,
  runId: string,
): Promise<HistoryEvent | undefined> {
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    maximumPageSize: 1,
  });
  return page.history?.events?.[0] ?? undefined;
}

/** `call`, with the CLI's errors for a server that fails or does not answer in time. */
async function fromServer<T>(args: CommandArgs, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isDeadline(error, args)) throw serverTimeout(args, what, error);
    throw serverError(error, args);
  }
}

/**
 * The entries of the session `source` names, read one run at a time.
 * @throws {CliError} exit 2 when a history is not a workflow history.
 */
export async function auditOfSource(
  source: SessionSource,
  options: AuditEntryOptions,
): Promise<SessionAudit> {
  const audit = emptySessionAudit(source.workflowId);
  for await (const run of source.runs()) {
    try {
      addRunEntries(audit, run, options);
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(`${source.label}: ${oneLine(error)}`, { exitCode: 2, cause: error });
    }
  }
  return audit;
}

async function auditRun(recorded: History, args: CommandArgs, target: string): Promise<AuditRun> {
  return {
    history: await decodedHistory(recorded, args, target),
    storedPayloadEventIds: storedPayloadEventIds(recorded),
  };
}

/** Whether a run's start event carries its input sealed by the agent's encryption. */
function isEncrypted(started: HistoryEvent | undefined): boolean {
  const input = started?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const encoding = input?.metadata?.encoding;
  return encoding != null && Buffer.from(encoding).toString('utf8') === ENCRYPTED_ENCODING;
}
