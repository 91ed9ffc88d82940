/**
 * What a hook callback is given, rebuilt from what crosses the workflow boundary. The
 * dispatch activity and golden session checks build callback inputs with it, so a recorded
 * dispatch is re-run on the very input its callbacks got. Workflow-safe (no Node imports).
 *
 * @module
 */
import { deserializeError, type SerializedError } from './errors.js';
import { HookEvent } from './hook-events.js';
import type { DispatchHookInput } from './activity-io.js';
import type { HookInput } from './types.js';

/**
 * The callback's input without its signal: a fresh copy of the payload (a JSON copy: the
 * payload came through Temporal as JSON, and `structuredClone` is not in the workflow sandbox),
 * with `event` and `sessionId`, in a sub-agent's session `parentSessionId`, `agentPath` and
 * `depth` from its `lineage` (a top session's inputs have none of the three), and for
 * `PostToolUseFailure` the serialized `error` rebuilt as an Error.
 */
export function hookInputOf(
  input: Pick<DispatchHookInput, 'payload' | 'event' | 'sessionId' | 'lineage'>,
): Omit<HookInput, 'abortSignal'> {
  const payload = JSON.parse(JSON.stringify(input.payload)) as typeof input.payload;
  const hookInput: Omit<HookInput, 'abortSignal'> = {
    ...payload,
    event: input.event,
    sessionId: input.sessionId,
  };
  if (input.lineage) {
    hookInput.parentSessionId = input.lineage.parentSessionId;
    hookInput.agentPath = input.lineage.agentPath;
    hookInput.depth = input.lineage.depth;
  }
  if (
    input.event === HookEvent.PostToolUseFailure &&
    payload.error &&
    typeof payload.error === 'object'
  ) {
    hookInput.error = deserializeError(payload.error as unknown as SerializedError);
  }
  return hookInput;
}
