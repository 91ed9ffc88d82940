/**
 * `durable-agent approve` and `deny`: a person's answer to a pending permission request, sent
 * as the `decidePermission` Update of the session that asked (the named one, or the sub-agent
 * whose request id it is), which only a worker of the session applies.
 *
 * @module
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { AgentSdkError } from '../../common/errors.js';
import { isPlainObject, type JsonObject } from '../../common/json.js';
import { shortDigest, whyNotDigest } from '../../common/approval-digest.js';
import type { PendingPermission, PermissionAnswer } from '../../common/permission.js';
import { Queries } from '../../common/messages.js';
import { routeOfRequest } from '../../client/pending-tree.js';
import { Session } from '../../client/session.js';
import { toolLabel } from '../../common/summaries.js';
import { isTransientTaskFailure } from '../../client/update-calls.js';
import { storedPayloadEventIds } from '../../history/decode.js';
import { answeredAlike, describeDecidedRequest } from '../../history/decided.js';
import type { FoundSession } from '../../history/files.js';
import { timelineFromHistory } from '../../history/timeline.js';
import { isNoPollerError } from '../../temporal/query.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';
import { isDeadline, remainingMs } from '../deadline.js';
import { sessionError } from '../failures.js';
import { decodedHistory } from '../history-codecs.js';
import { agentPathOf, sessionOf } from '../session-lookup.js';
import { lastLookAtPollers, noAnswer, workflowPollers } from '../session-worker.js';
import { describePollers, formatDuration, pollersOf } from '../workers.js';

/** After this long, `approve --wait` / `deny --wait` say that they wait for a worker, ms. */
const WAITING_NOTE_AFTER_MS = 1000;

/**
 * `approve` / `deny`: an Update, which only a worker of the session can accept. Without
 * `--wait`, a session no worker answers for is refused before anything is sent; with it,
 * the answer is sent and waited for until the deadline.
 * @returns the exit code.
 */
export async function decide(args: CommandArgs, io: CliOutput): Promise<number> {
  return withClient(args, (client) => decideRequest(client, args, io));
}

/** One answer to one request: what the steps of {@link decide} share. */
interface Decision {
  client: Client;
  args: CommandArgs;
  io: CliOutput;
  found: FoundSession;
  requestId: string;
  answer: PermissionAnswer;
  /** `approval` or `denial`, as the messages name the answer. */
  verb: string;
  handle: WorkflowHandle;
  /**
   * The approval digest the answer is bound to: `--digest`, else the request's as this
   * command read it (`pending`'s); none with `--wait` and no `--digest` (unbound).
   */
  digest?: string;
}

async function decideRequest(client: Client, args: CommandArgs, io: CliOutput): Promise<number> {
  const [, requestId] = args.args as [string, string];
  let updatedInput: JsonObject | undefined;
  if (args.input !== undefined) updatedInput = parseInputOption(args.input);
  const digestProblem = args.digest !== undefined ? whyNotDigest(args.digest) : undefined;
  if (digestProblem) throw new CliError(`--${digestProblem}`, { usage: true });
  const named = await sessionOf(client, args);
  checkRunning(named);
  // A sub-agent's request (`<its session id>#<uuid>`) is answered in its own session.
  const route = routeOfRequest(named.sessionId, requestId);
  const found = route ? await sessionOf(client, args, route.sessionId) : named;
  if (route) checkRunning(found);
  const answer: PermissionAnswer =
    args.command === 'approve'
      ? { behavior: 'allow', ...(updatedInput ? { updatedInput } : {}) }
      : {
          behavior: 'deny',
          ...(args.message !== undefined ? { message: args.message } : {}),
          ...(args.interrupt ? { interrupt: true } : {}),
        };
  const decision: Decision = {
    client,
    args,
    io,
    found,
    requestId,
    answer,
    verb: args.command === 'approve' ? 'approval' : 'denial',
    handle: client.workflow.getHandle(found.workflowId),
    ...(args.digest !== undefined ? { digest: args.digest } : {}),
  };
  // The queue the session's activities (the tool, the model) go to: the workflow's own
  // until a handoff moves them, which the workflow's description says.
  let activityQueue = found.description.taskQueue;
  let asked: PendingPermission | undefined;
  if (!args.wait) {
    const checked = await checkBeforeSending(decision);
    if (checked === undefined) return 0;
    activityQueue = checked.activityQueue;
    asked = checked.request;
    decision.digest ??= asked.digest;
  }
  if (!(await sendAnswer(decision))) return 0;
  const done = args.command === 'approve' ? 'approved' : 'denied';
  const interrupt = args.command === 'deny' && args.interrupt ? ' (interrupt)' : '';
  // A sub-agent's: the call and the sub-agent's path (`approved Write notes.md in main/writer`).
  io.out(
    (route
      ? `${done} ${asked ? toolLabel(asked.toolName, asked.input) : requestId} in ${agentPathOf(found)}${interrupt}`
      : `${done} ${requestId} in session ${found.sessionId}${interrupt}`) + boundNote(decision),
  );
  // What runs next (the tool, the model) are activities: say when nobody would run them.
  const activities = await pollersOf(client, activityQueue, 'activity').catch(() => undefined);
  if (activities?.count === 0) {
    io.err(
      `note: ${describePollers(activities)}: the session's next step (the tool, the model) ` +
        'waits until a worker polls it',
    );
  }
  return 0;
}

/**
 * What the answer was bound to, for the record: ` (digest ab12cd34ef56)` for `--digest`,
 * ` (digest ab12cd34ef56, the pending request's)` for the digest read from the request,
 * ` (unbound: no digest)` for `--wait` without `--digest`.
 */
function boundNote(d: Decision): string {
  if (d.digest === undefined) return ' (unbound: no digest)';
  const read = d.args.digest === undefined ? ", the pending request's" : '';
  return ` (digest ${shortDigest(d.digest)}${read})`;
}

/**
 * Without `--wait`: refuse before anything is sent when no worker polls or answers, or the
 * request was decided with another answer.
 * @returns the queue of the session's activities, or `undefined` when the request was
 *   decided already with this same answer (said on `io`; nothing to send).
 */
async function checkBeforeSending(
  d: Decision,
): Promise<{ activityQueue: string; request: PendingPermission } | undefined> {
  const { client, args, found } = d;
  let activityQueue = found.description.taskQueue;
  const pollers = await workflowPollers(client, found, args);
  if (pollers.count === 0) {
    throw new CliError(
      `session '${found.sessionId}' has no worker: ${describePollers(pollers)}; nothing was sent. ` +
        `The ${d.verb} is applied by the agent's worker: start it and run ${args.command} again, ` +
        'or pass --wait to send it and wait for a worker (up to --timeout)',
    );
  }
  let waiting: PendingPermission[];
  try {
    const described = await d.handle.query(Queries.describe);
    if (typeof described?.taskQueue === 'string') activityQueue = described.taskQueue;
    waiting = await d.handle.query(Queries.pendingPermissions);
  } catch (error) {
    if (isDeadline(error, args) || isNoPollerError(error)) {
      throw await noAnswer(client, found, args, error, true);
    }
    throw sessionError(error, args, found.sessionId);
  }
  // Decided already: the same answer again is done (as the API's deduplicated Update
  // is), any other answer refused; either way the history says how it was decided.
  const request = waiting.find((r) => r.requestId === d.requestId);
  if (!request) {
    const decided = await notPending(client, found, d.requestId, args, d.answer);
    if (!decided.alike) throw new CliError(`${decided.why}; nothing was sent`);
    d.io.out(`${decided.why}: the same answer, applied once; nothing was sent`);
    return undefined;
  }
  return { activityQueue, request };
}

/**
 * Send the answer and wait until the session's worker applied it (with `--wait`, a note on
 * stderr after {@link WAITING_NOTE_AFTER_MS}).
 * @returns `true` once applied; `false` when the request was decided already with this same
 *   answer (said on `io`).
 * @throws {CliError} at the deadline, for another answer given already, or what the session
 *   refused.
 */
async function sendAnswer(d: Decision): Promise<boolean> {
  const { client, args, io, found, requestId, answer, verb } = d;
  const session = new Session(found.sessionId, d.handle);
  const bound = d.digest !== undefined ? { digest: d.digest } : {};
  const send = () =>
    answer.behavior === 'allow'
      ? session.approve(requestId, {
          ...(answer.updatedInput ? { updatedInput: answer.updatedInput } : {}),
          ...bound,
        })
      : session.deny(requestId, { ...answer, ...bound });
  // With --wait, what the session's own retries give up on after 40 s (a workflow task in
  // failed state, an Update the server aborted: a worker still starting on a loaded machine)
  // is sent again until the deadline; the same update id applies it once.
  const sending = (async () => {
    for (;;) {
      try {
        return await send();
      } catch (error) {
        if (!args.wait || !isTransientTaskFailure(error) || remainingMs(args) < 1000) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  })();
  let note: NodeJS.Timeout | undefined;
  if (args.wait) {
    note = setTimeout(() => {
      io.err(
        `waiting up to ${formatDuration(remainingMs(args))} for a worker of task queue ` +
          `'${found.description.taskQueue}' to apply the ${verb} ...`,
      );
    }, WAITING_NOTE_AFTER_MS);
  }
  try {
    await sending;
  } catch (error) {
    if (isDeadline(error, args)) {
      const why = await lastLookAtPollers(client, found.description.taskQueue).then((p) =>
        p ? `${describePollers(p)}; ` : '',
      );
      throw new CliError(
        `the ${verb} of ${requestId} was sent to session '${found.sessionId}' but not applied ` +
          `within ${formatDuration(args.timeoutMs)}: ${why}it may still apply when a worker polls ` +
          `'${found.description.taskQueue}' (Temporal holds it in memory, not in the history: a ` +
          `server restart drops it); check with: durable-agent pending ${found.sessionId}`,
        { cause: error },
      );
    }
    if (error instanceof AgentSdkError && error.code === 'PERMISSION_REQUEST_NOT_FOUND') {
      const decided = await notPending(client, found, requestId, args, answer);
      if (!decided.alike) throw new CliError(`${decided.why}; the ${verb} was refused`);
      io.out(`${decided.why}: the same answer, applied once`);
      return false;
    }
    throw sessionError(error, args, found.sessionId);
  } finally {
    clearTimeout(note);
  }
  return true;
}

/**
 * A request that does not wait (any more): how it was decided, from the session's history
 * (approved or denied by whom and when, expired, cancelled), and whether it was decided with
 * `answer` itself (`alike`: the same answer given again, which is applied once).
 */
async function notPending(
  client: Client,
  found: FoundSession,
  requestId: string,
  args: CommandArgs,
  answer: PermissionAnswer,
): Promise<{ why: string; alike: boolean }> {
  try {
    const recorded = await client.workflow.getHandle(found.workflowId).fetchHistory();
    const history = await decodedHistory(recorded, args, found.sessionId);
    const timeline = timelineFromHistory(history, {
      storedPayloadEventIds: storedPayloadEventIds(recorded),
    });
    return {
      why: describeDecidedRequest(timeline, { requestId }),
      alike: answeredAlike(timeline, { requestId }, answer),
    };
  } catch {
    return {
      why: `no permission request '${requestId}' waits in session '${found.sessionId}'`,
      alike: false,
    };
  }
}

/** @throws {CliError} when the session `found` is closed: nothing is sent to it. */
function checkRunning(found: FoundSession): void {
  if (found.description.status.name !== 'RUNNING') {
    throw new CliError(
      `session '${found.sessionId}' is closed (${found.description.status.name}): nothing was sent`,
    );
  }
}

/** `--input`: a JSON object. */
function parseInputOption(text: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--input is not valid JSON: ${oneLine(error)}`, { usage: true });
  }
  if (!isPlainObject(value)) {
    throw new CliError('--input must be a JSON object, e.g. \'{"file_path":"a.txt"}\'', {
      usage: true,
    });
  }
  return value as JsonObject;
}
