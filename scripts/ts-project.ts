/**
 * What the repository's own checks (`check:cycles`, `check:exports`) read of the TypeScript
 * project: its root, the folders they scan, and tsconfig.json parsed as tsc parses it.
 *
 * @module
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository's root folder. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The folders of shipped code the checks scan. */
export const scanned = ['src', 'workflows', 'activities'];

/** tsconfig.json, parsed: its compiler options (so specifiers resolve as tsc resolves them) and files. */
export function parsedTsConfig(): ts.ParsedCommandLine {
  const configPath = resolve(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (config.error)
    throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, root);
}
