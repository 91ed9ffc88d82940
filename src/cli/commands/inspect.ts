/**
 * `durable-agent inspect`: a session's hook timeline, rebuilt from its Temporal history
 * (fetched, or a history file).
 *
 * @module
 */
import { storedPayloadEventIds } from '../../history/decode.js';
import { timelineFromHistory } from '../../history/timeline.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';
import { decodedHistory } from '../history-codecs.js';
import { isHistoryFile, loadHistoryFile } from '../history-files.js';
import { renderTimeline } from '../render.js';
import { fetchSessionHistory } from '../session-lookup.js';

/** `inspect`: the hook timeline of a session or history file. @returns the exit code. */
export async function inspect(args: CommandArgs, io: CliOutput): Promise<number> {
  const target = args.args[0]!;
  const { history: recorded } = isHistoryFile(target)
    ? { history: loadHistoryFile(target) }
    : await withClient(args, (client) => fetchSessionHistory(client, target, args));
  const history = await decodedHistory(recorded, args, target);
  let timeline;
  try {
    timeline = timelineFromHistory(history, {
      storedPayloadEventIds: storedPayloadEventIds(recorded),
    });
  } catch (error) {
    throw new CliError(`${target}: ${oneLine(error)}`, { cause: error });
  }
  io.out(args.json ? JSON.stringify(timeline, null, 2) : renderTimeline(timeline));
  return 0;
}
