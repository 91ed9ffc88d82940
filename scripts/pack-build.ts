/**
 * `npm pack` of the build as it is (`--ignore-scripts`: no new build), for the checks that
 * install the package as a user would (check-package, check-scaffold, check-examples).
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Packs the repository at `repo` into `destination` and returns the tarball's path.
 * @throws when npm fails or names no tarball (run `npm run build` first: the tarball ships
 *   `dist/`).
 */
export function packBuild(repo: string, destination: string): string {
  const printed = execFileSync(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', destination],
    { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [packed] = JSON.parse(printed) as { filename: string }[];
  if (!packed) throw new Error('npm pack printed no tarball');
  return join(destination, packed.filename);
}
