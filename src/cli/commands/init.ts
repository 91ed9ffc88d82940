/**
 * `durable-agent init [dir]`: scaffold a project (agent, worker, client, hook test) from the
 * package's template.
 *
 * @module
 */
import { mkdirSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { CliError } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { ownPackage } from '../own-package.js';
import { occupied, projectNameOf, scaffoldPlan } from '../scaffold.js';

/**
 * `init`: write the project into `args.args[0]` (default `.`), then print the next steps.
 * @throws {CliError} when the folder is a file, or not empty and `--force` is not given.
 */
export async function init(args: CommandArgs, io: CliOutput): Promise<number> {
  const given = args.args[0] ?? '.';
  const dir = resolve(given);
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    throw new CliError(`${given} is a file, not a folder`);
  }
  const plan = scaffoldPlan(projectNameOf(dir), ownPackage());
  const { empty, overwritten } = occupied(dir, plan);
  if (!empty && !args.force) {
    const which =
      overwritten.length > 0
        ? `would overwrite ${overwritten.join(', ')}`
        : 'none of its files would be overwritten';
    throw new CliError(`${given} is not empty (${which}); --force writes anyway`);
  }
  for (const file of plan) {
    const path = join(dir, file.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.content);
  }
  const where = relative(process.cwd(), dir);
  io.out(`Created ${plan.length} files in ${where || '.'}: ${plan.map((f) => f.path).join(', ')}`);
  io.out('Next steps:');
  io.out(`  ${where ? `cd ${where} && ` : ''}npm install`);
  io.out('  npm start    # worker and client in one process, on an embedded Temporal server');
  io.out('  npm test     # the hook test; README.md has worker and client in two processes');
  return 0;
}
