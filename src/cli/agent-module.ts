/**
 * Loading an agent module named on the command line (`dev`, `golden`, `gate`): its default
 * export, checked to look like `AgentOptions`; a TypeScript module through tsx.
 *
 * @module
 */
import { pathToFileURL } from 'node:url';
import type { AgentOptions } from '../definition/options.js';
import { CliError, oneLine } from './cli-error.js';

/** Import the agent module and return its default export, checked to look like AgentOptions. */
export async function loadAgentModule(path: string, shown: string): Promise<AgentOptions> {
  const url = pathToFileURL(path).href;
  if (/\.[cm]?tsx?$/.test(path) && !tsxActive()) {
    // A TypeScript module under plain node (the built CLI): load it through tsx if installed,
    // its CommonJS hooks too, as `node --import tsx` does. Without them a .ts module outside
    // a "type": "module" package is read as CommonJS, and Node's require() of it fails
    // ('Cannot require() ES Module ... in a cycle').
    try {
      type Api = { register: () => unknown };
      const [esm, cjs] = (await Promise.all([
        import('tsx/esm/api' as string),
        import('tsx/cjs/api' as string),
      ])) as [Api, Api];
      esm.register();
      cjs.register();
    } catch (error) {
      throw new CliError(
        `cannot load ${shown}: TypeScript modules need tsx (npm i -D tsx), or run ` +
          `node --import tsx (${oneLine(error)})`,
        { cause: error },
      );
    }
  }
  let mod: { default?: unknown };
  try {
    mod = (await import(url)) as { default?: unknown };
  } catch (error) {
    const hint = /require\(\)/.test(oneLine(error))
      ? ' (the SDK is ESM: name the module .mts/.mjs or set "type": "module" in its package.json)'
      : '';
    throw new CliError(`cannot load ${shown}: ${oneLine(error)}${hint}`, { cause: error });
  }
  let options = mod.default;
  // A module compiled as CommonJS shows its `export default` one level down.
  if (isObject(options) && !('model' in options) && isObject(options.default)) {
    options = options.default;
  }
  if (typeof options !== 'object' || options === null || !('model' in options)) {
    throw new CliError(
      `${shown} must export the agent's options as default: export default { model, ... }`,
    );
  }
  return options as AgentOptions;
}

/** Whether tsx already loads TypeScript in this process (`npx tsx`, `node --import tsx`). */
function tsxActive(): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /\btsx\b/.test(arg));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
