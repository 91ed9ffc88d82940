/**
 * The package this CLI belongs to: its root folder and its package.json, found above the
 * running module (`src/cli/` in a clone, `dist/src/cli/` installed).
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package this CLI belongs to (the `name` of its package.json). */
const PACKAGE_NAME = 'durable-agent-sdk';

/** What the CLI reads of its own package.json. */
export interface OwnPackage {
  /** The folder holding the package.json. */
  root: string;
  version: string;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/**
 * The first package.json named {@link PACKAGE_NAME} above `from`.
 * @throws {Error} when there is none.
 */
export function ownPackage(from: string = fileURLToPath(import.meta.url)): OwnPackage {
  for (let dir = dirname(from); ;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
        name?: unknown;
        version?: unknown;
        peerDependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') {
        return {
          root: dir,
          version: pkg.version,
          peerDependencies: pkg.peerDependencies ?? {},
          devDependencies: pkg.devDependencies ?? {},
        };
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${from}`);
    dir = up;
  }
}
