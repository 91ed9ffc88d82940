/**
 * `durable-agent golden`: golden session recordings (or session histories) checked against an
 * agent module's current hooks.
 *
 * @module
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { sessionIdOfHistory } from '../../history/decode.js';
import { loadAgentModule } from '../agent-module.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { decodedHistory } from '../history-codecs.js';
import { historyInFile } from '../history-files.js';

/**
 * Check golden session recordings against the module's hooks: exit 0 when no decision
 * changed, 1 when some did, 2 when the check could not run (a missing or malformed
 * recording, a module that does not load): a CI gate tells a policy change from bad input.
 */
export async function golden(args: CommandArgs, io: CliOutput): Promise<number> {
  try {
    return await checkGoldenRecordings(args, io);
  } catch (error) {
    throw new CliError(oneLine(error), {
      exitCode: GOLDEN_BAD_INPUT,
      cause: error instanceof CliError ? (error.cause ?? error) : error,
    });
  }
}

/** Exit code of `golden` when it could not check: bad input or usage. */
const GOLDEN_BAD_INPUT = 2;

async function checkGoldenRecordings(args: CommandArgs, io: CliOutput): Promise<number> {
  const modulePath = resolve(args.args[0]!);
  if (!existsSync(modulePath)) throw new CliError(`no such file: ${args.args[0]}`);
  const target = resolve(args.args[1]!);
  if (!existsSync(target)) throw new CliError(`no such file or folder: ${args.args[1]}`);
  const files = statSync(target).isDirectory()
    ? readdirSync(target)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => join(target, f))
    : [target];
  if (files.length === 0) throw new CliError(`no .json recordings in ${args.args[1]}`);
  const options = await loadAgentModule(modulePath, args.args[0]!);
  const { checkGoldenSession, formatGoldenChanges, goldenFromHistories, readGoldenSession } =
    await import('../../testing/golden.js');
  const hooks = options.advanced?.hooks ?? {};
  const reports = [];
  for (const file of files) {
    let recording;
    const shown = relative(process.cwd(), file) || file;
    const history = historyInFile(file);
    if (history) {
      // A session's history: its dispatches, decrypted with the key ring.
      const decoded = await decodedHistory(history, args, shown);
      recording = goldenFromHistories(sessionIdOfHistory(decoded) ?? shown, [decoded]);
    } else {
      try {
        recording = readGoldenSession(file);
      } catch (error) {
        throw new CliError(oneLine(error), { cause: error });
      }
    }
    const subagents = options.advanced?.subagents?.agents;
    reports.push({
      file,
      ...(await checkGoldenSession(recording, hooks, subagents ? { subagents } : {})),
    });
  }
  const changed = reports.filter((r) => r.changes.length > 0);
  if (args.json) {
    io.out(JSON.stringify(reports, null, 2));
  } else {
    for (const report of reports) {
      const name = relative(process.cwd(), report.file) || report.file;
      io.out(
        report.changes.length === 0
          ? `${name}: ${report.checked} decisions, none changed`
          : `${name}: ${report.changes.length} of ${report.checked} decisions changed\n${formatGoldenChanges(report.changes)}`,
      );
    }
  }
  return changed.length > 0 ? 1 : 0;
}
