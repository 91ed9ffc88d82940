/**
 * `durable-agent gate`: the deploy gate, recent sessions' recorded hook inputs replayed through
 * an agent module's definition.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { AgentSdkError } from '../../common/errors.js';
import { loadAgentModule } from '../agent-module.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';
import { isDeadline } from '../deadline.js';
import { serverError, serverTimeout } from '../failures.js';

/**
 * The deploy gate: replay recent sessions' recorded hook inputs through the module's
 * definition; exit 0 when no decision flips, 1 when some do, 2 when the gate could not run
 * (a module that does not load or is not valid agent options, no sessions of the agent, a
 * server that does not answer, a history that does not decrypt): a CI gate tells a policy
 * change from bad input.
 */
export async function gate(args: CommandArgs, io: CliOutput): Promise<number> {
  try {
    return await runGate(args, io);
  } catch (error) {
    throw new CliError(oneLine(error), {
      exitCode: GATE_BAD_INPUT,
      cause: error instanceof CliError ? (error.cause ?? error) : error,
    });
  }
}

/** Exit code of `gate` when it could not run: bad input, an unreachable server, or usage. */
const GATE_BAD_INPUT = 2;

async function runGate(args: CommandArgs, io: CliOutput): Promise<number> {
  const shown = args.args[0]!;
  const modulePath = resolve(shown);
  if (!existsSync(modulePath)) throw new CliError(`no such file: ${shown}`);
  const options = await loadAgentModule(modulePath, shown);
  const [{ resolveAgentOptions }, { gateDeploy, formatGateReport }] = await Promise.all([
    import('../../definition/resolve.js'),
    import('../../testing/gate.js'),
  ]);
  // Checked before connecting: a bad definition is named as the module's.
  try {
    resolveAgentOptions(options);
  } catch (error) {
    throw new CliError(`${shown}: ${oneLine(error)}`, { cause: error });
  }
  const { isHookEvent } = await import('../../common/hook-events.js');
  const events = args.events.map((event) => {
    if (!isHookEvent(event)) {
      throw new CliError(`--event: unknown hook event '${event}'`, { usage: true });
    }
    return event;
  });
  return withClient(args, async (client) => {
    let report;
    try {
      report = await gateDeploy({
        agent: options,
        client,
        ...(args.version !== undefined ? { version: args.version } : {}),
        ...(args.sinceMs !== undefined ? { since: new Date(Date.now() - args.sinceMs) } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(events.length > 0 ? { events } : {}),
      });
    } catch (error) {
      if (isDeadline(error, args)) throw serverTimeout(args, 'reading sessions', error);
      if (error instanceof AgentSdkError) throw new CliError(oneLine(error), { cause: error });
      throw serverError(error, args);
    }
    io.out(args.json ? JSON.stringify(report, null, 2) : formatGateReport(report));
    return report.flipped > 0 ? 1 : 0;
  });
}
