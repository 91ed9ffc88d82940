/**
 * The session's `upgrade` Update: a move to another version of its agent, at a turn
 * boundary, recorded. Workflow code.
 *
 * `session.upgrade()` runs it in two steps around Temporal's re-pin of the session
 * (UpdateWorkflowExecutionOptions, with Worker Deployments on):
 * - `begin` takes a turn in the session's queue, as a prompt does: it waits for the prompt
 *   running now (a pending approval included) and those queued before it, then holds the
 *   turn, so no hook, model step or tool runs while the session changes workers;
 * - `finish` (its workflow task already on a worker of the target version, when Worker
 *   Deployments route) asks a worker of the target version which definition it runs
 *   (`describeDefinition`; a worker of another version refuses and is asked again), makes
 *   that the session's identity (every later activity input carries it), records the move
 *   in the input (carried across continue-as-new) and in this Update's result, and gives the
 *   turn back;
 * - `cancel` gives the turn back without moving (the re-pin failed).
 *
 * Histories recorded before this Update existed never ran it, so replaying them takes no
 * new path (no `patched()` needed).
 *
 * @module
 */
import { condition, setCurrentDetails } from '@temporalio/workflow';
import { VERSION_RULE } from '../src/common/identity.js';
import {
  Updates,
  type UpgradeAnswer,
  type UpgradeRequest,
  type VersionUpgrade,
} from '../src/common/protocol.js';
import { describeDefinitionActivity } from './activity-options.js';
import { cleanupPendingFailure } from './dispatch.js';
import { sessionClosedFailure, toFailure } from './failures.js';
import { isClosing, type SessionState } from './session-state.js';
import { sessionSetHandler } from './update-count.js';
import { withRefusalRetries } from './version-refusal.js';

/** How long `finish` waits for a worker of the target version to say what it runs, ms. */
const DESCRIBE_BUDGET_MS = 60_000;

/** Register the `upgrade` Update (and its validator). */
export function setUpgradeHandler(state: SessionState): void {
  const setHandler = sessionSetHandler(state);
  setHandler(Updates.upgrade, (request) => upgrade(state, request), {
    validator: (request) => {
      if (!['begin', 'finish', 'cancel'].includes(request?.phase)) {
        throw new TypeError("upgrade: phase must be 'begin', 'finish' or 'cancel'");
      }
      if (typeof request.toVersion !== 'string' || !VERSION_RULE.test(request.toVersion)) {
        throw new TypeError(
          `upgrade: toVersion must be a valid build id, got '${String(request.toVersion)}'`,
        );
      }
      if (state.input.version === undefined) {
        throw new TypeError('upgrade: this session was started before versions existed');
      }
      if (request.phase === 'begin' && isClosing(state)) {
        throw sessionClosedFailure(state.input.sessionId);
      }
      if (request.phase === 'finish' && state.upgrading?.toVersion !== request.toVersion) {
        throw new TypeError(`upgrade: no move to '${request.toVersion}' was begun`);
      }
    },
  });
}

async function upgrade(state: SessionState, request: UpgradeRequest): Promise<UpgradeAnswer> {
  state.activitySeq++;
  if (request.phase === 'begin') return begin(state, request);
  if (request.phase === 'cancel') {
    const held = state.upgrading;
    if (held?.toVersion === request.toVersion) {
      // A finish already under way decides: the turn is given back once, by it.
      if (held.finishing) await held.finishing.catch(() => undefined);
      else release(state, held.ticket);
    }
    return { version: state.input.version! };
  }
  // Two callers finishing one move (two upgrade() at once, or a retry of a slow one) share
  // the first one's outcome: the move is recorded once and the turn given back once.
  const held = state.upgrading!;
  held.finishing ??= finish(state, request, held.ticket);
  return held.finishing;
}

async function begin(state: SessionState, request: UpgradeRequest): Promise<UpgradeAnswer> {
  // Begun already (a client retried, or one that died comes back): the turn is held.
  if (state.upgrading?.toVersion === request.toVersion) return { version: state.input.version! };
  await condition(() => state.status !== 'starting');
  const ticket = state.nextTicket++;
  await condition(() => state.serving === ticket);
  let held = false;
  try {
    if (isClosing(state) || state.startError) throw sessionClosedFailure(state.input.sessionId);
    if (state.pendingCleanups.size > 0) throw cleanupPendingFailure(state);
    state.upgrading = { toVersion: request.toVersion, by: request.by, ticket };
    held = true;
    setCurrentDetails(`moving to version ${request.toVersion}`);
    return { version: state.input.version! };
  } finally {
    if (!held) state.serving++;
  }
}

async function finish(
  state: SessionState,
  request: UpgradeRequest,
  ticket: number,
): Promise<UpgradeAnswer> {
  const input = state.input;
  try {
    const to = await withRefusalRetries(
      input,
      { task: `the definition of version '${request.toVersion}'` },
      DESCRIBE_BUDGET_MS,
      (eager) =>
        describeDefinitionActivity(
          state.taskQueue,
          eager,
          `which definition version ${request.toVersion} runs`,
        )({ agentName: input.agentName, sessionId: input.sessionId, version: request.toVersion }),
    );
    if (to.version !== request.toVersion) {
      throw toFailure({
        name: 'EngineError',
        code: 'ENGINE_ERROR',
        message: `upgrade: asked for version '${request.toVersion}', a worker answered '${to.version}'`,
      });
    }
    const move: VersionUpgrade = {
      fromVersion: input.version!,
      fromFingerprint: input.fingerprint!,
      toVersion: to.version,
      toFingerprint: to.fingerprint,
      by: request.by,
      at: Date.now(),
      afterPrompts: state.promptsHandled,
    };
    state.input = {
      ...input,
      version: to.version,
      fingerprint: to.fingerprint,
      manifest: to.manifest,
      upgrades: [...(input.upgrades ?? []), move],
    };
    return { version: to.version, upgrade: move };
  } finally {
    release(state, ticket);
  }
}

/** Give back the turn the move of `ticket` holds: once, whoever asks again. */
function release(state: SessionState, ticket: number): void {
  if (state.upgrading?.ticket !== ticket) return;
  state.upgrading = undefined;
  state.serving++;
  setCurrentDetails(isClosing(state) ? 'closing' : 'idle');
}
