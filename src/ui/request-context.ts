/**
 * What the inbox says of a permission request besides the request itself, read from the
 * session's history. Pure.
 *
 * @module
 */
import type { JsonObject } from '../common/json.js';
import type { HistoryTimeline } from '../history/timeline-types.js';
import type { InboxEntry } from './pages.js';

/**
 * What the inbox says of a request besides the request itself, from the session's history:
 * the agent, the prompt whose turn made the call, and the input keys a PreToolUse callback
 * added (absent from the model's input; of those still in `asked`, the input the person is
 * asked about, when known).
 */
export function requestContext(
  timeline: HistoryTimeline,
  toolUseId: string,
  asked: JsonObject | undefined,
): Pick<InboxEntry, 'agentName' | 'prompt' | 'hookAddedKeys'> {
  const prompt = timeline.prompts.find((p) => p.toolCalls.includes(toolUseId));
  const call = timeline.toolCalls.find((c) => c.toolUseId === toolUseId);
  const added = new Map<string, number>();
  if (call) {
    const fromModel = call.input ?? {};
    for (const seq of call.dispatches) {
      const dispatch = timeline.dispatches.find((d) => d.seq === seq);
      if (dispatch?.event !== 'PreToolUse') continue;
      for (const callback of dispatch.callbacks ?? []) {
        for (const key of Object.keys(callback.modifiedInput ?? {})) {
          if (Object.prototype.hasOwnProperty.call(fromModel, key) || added.has(key)) continue;
          if (asked !== undefined && !Object.prototype.hasOwnProperty.call(asked, key)) continue;
          added.set(key, callback.index + 1);
        }
      }
    }
  }
  return {
    ...(timeline.agentName !== undefined ? { agentName: timeline.agentName } : {}),
    ...(prompt ? { prompt: prompt.prompt } : {}),
    ...(added.size > 0
      ? { hookAddedKeys: [...added].map(([key, callback]) => ({ key, callback })) }
      : {}),
  };
}
