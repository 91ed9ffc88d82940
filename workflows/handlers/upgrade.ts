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
 * The hold does not outlive its client: when neither `finish` nor `cancel` came within the
 * begin's `holdMs` (default `DEFAULTS.upgradeHoldMs`, a timer in the history), the session
 * finishes the move itself if Temporal re-pinned it already (this workflow task runs on a
 * worker of the target version: the re-pin is the move's point of no return), else gives the
 * turn back and records the move as abandoned (`describe().abandonedUpgrades`, the memo's
 * `upgradeAbandoned`). A finished move also updates the session's `DurableAgentVersion`
 * search attribute and its memo's `version`, so lists and `durable-agent gate` file it under
 * the version it runs now.
 *
 * @module
 */
import {
  condition,
  log,
  setCurrentDetails,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { DEFAULTS } from '../../src/common/defaults.js';
import { VERSION_RULE } from '../../src/common/identity.js';
import { Updates, type UpgradeAnswer, type UpgradeRequest } from '../../src/common/messages.js';
import type { AbandonedUpgrade, VersionUpgrade } from '../../src/common/workflow-io.js';
import { describeDefinitionActivity } from '../activity-options.js';
import { cleanupPendingFailure } from '../prompt/dispatch-outcome.js';
import { sessionClosedFailure, toFailure } from '../session/failures.js';
import { AGENT_VERSION_KEY } from '../../src/common/search-attributes.js';
import { isClosing, type SessionState } from '../session/state.js';
import { sessionSetHandler } from '../session/update-count.js';
import { withRefusalRetries } from '../session/version-refusal.js';

/** How long `finish` waits for a worker of the target version to say what it runs, ms. */
const DESCRIBE_BUDGET_MS = 60_000;

/** Longest hold a begin may ask for, ms (a day). */
const MAX_HOLD_MS = 86_400_000;

type Held = NonNullable<SessionState['upgrading']>;

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
      if (
        request.holdMs !== undefined &&
        (request.phase !== 'begin' ||
          !Number.isInteger(request.holdMs) ||
          request.holdMs <= 0 ||
          request.holdMs > MAX_HOLD_MS)
      ) {
        throw new TypeError(
          `upgrade: holdMs must be a positive integer of ms up to ${MAX_HOLD_MS}, on begin only, got ${String(request.holdMs)}`,
        );
      }
      if (
        request.phase === 'finish' &&
        state.upgrading?.toVersion !== request.toVersion &&
        // Finished by the session itself (its client was late): the finish answers that move.
        lastMoveTo(state, request.toVersion) === undefined
      ) {
        const abandoned = state.input.abandonedUpgrades?.at(-1);
        if (abandoned && abandoned.toVersion === request.toVersion) {
          throw new TypeError(
            `upgrade: the move to '${request.toVersion}' begun by '${abandoned.by}' was abandoned: ` +
              `no finish or cancel within ${abandoned.heldMs} ms, and the session stayed on ` +
              `'${abandoned.version}'; call upgrade() again`,
          );
        }
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
  const held = state.upgrading;
  if (held?.toVersion !== request.toVersion) {
    // The session finished this move itself, its client's finish came late (validator).
    return { version: state.input.version!, upgrade: lastMoveTo(state, request.toVersion)! };
  }
  // Two callers finishing one move (two upgrade() at once, or a retry of a slow one) share
  // the first one's outcome: the move is recorded once and the turn given back once.
  held.finishing ??= finish(state, request, held.ticket);
  return held.finishing;
}

/** The last recorded move, if the session runs `toVersion` because of it. */
function lastMoveTo(state: SessionState, toVersion: string) {
  const move = state.input.upgrades?.at(-1);
  return move?.toVersion === toVersion && state.input.version === toVersion ? move : undefined;
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
    const hold: Held = { toVersion: request.toVersion, by: request.by, ticket };
    state.upgrading = hold;
    held = true;
    setCurrentDetails(`moving to version ${request.toVersion}`);
    void bound(state, hold, request.holdMs ?? DEFAULTS.upgradeHoldMs);
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
    // Lists (`DurableAgentVersion='v2'`), `durable-agent gate` and the session page read
    // these: they name the version the session runs now.
    upsertMemo({ version: to.version });
    if (state.searchAttributes) {
      upsertSearchAttributes([{ key: AGENT_VERSION_KEY, value: to.version }]);
    }
    return { version: to.version, upgrade: move };
  } finally {
    release(state, ticket);
  }
}

/**
 * The bound of a begin's hold: once `holdMs` passed with neither finish nor cancel, finish the
 * move if Temporal re-pinned the session already, else give the turn back and record the move
 * as abandoned.
 */
async function bound(state: SessionState, hold: Held, holdMs: number): Promise<void> {
  const answered = await condition(
    () => state.upgrading !== hold || hold.finishing !== undefined,
    holdMs,
    { summary: `upgrade hold: version ${hold.toVersion}` },
  );
  // A finish or cancel handled in the same workflow task as the timer decides.
  if (answered || state.upgrading !== hold || hold.finishing !== undefined) return;
  if (workflowInfo().currentDeploymentVersion?.buildId === hold.toVersion) {
    // Re-pinned: this task runs on a worker of the target version. Finishing is the only way
    // on (a worker of the old version no longer gets the session's tasks).
    log.warn('upgrade: no finish came for a re-pinned move; the session finishes it', {
      toVersion: hold.toVersion,
      by: hold.by,
      holdMs,
    });
    hold.finishing = finish(
      state,
      { phase: 'finish', toVersion: hold.toVersion, by: hold.by },
      hold.ticket,
    );
    await hold.finishing.catch(() => undefined);
    return;
  }
  const abandoned: AbandonedUpgrade = {
    version: state.input.version!,
    toVersion: hold.toVersion,
    by: hold.by,
    at: Date.now(),
    heldMs: holdMs,
  };
  log.warn('upgrade: no finish or cancel came; the move is abandoned', { ...abandoned });
  state.input = {
    ...state.input,
    abandonedUpgrades: [...(state.input.abandonedUpgrades ?? []), abandoned],
  };
  upsertMemo({ upgradeAbandoned: abandoned });
  release(state, hold.ticket);
}

/** Give back the turn the move of `ticket` holds: once, whoever asks again. */
function release(state: SessionState, ticket: number): void {
  if (state.upgrading?.ticket !== ticket) return;
  state.upgrading = undefined;
  state.serving++;
  setCurrentDetails(isClosing(state) ? 'closing' : 'idle');
}
