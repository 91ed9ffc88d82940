/**
 * The demo's real workspace: a small git repository in a temporary folder, with source
 * files and a `.env` holding a planted secret.
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The planted secret; the demo checks it never reaches the model. */
export const PLANTED_SECRET = 'sk_live_demo_4f9a2c71b8e34d05';

/** Create the workspace and return its path. */
export function createDemoWorkspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'durable-agent-demo-'));
  const files: Record<string, string> = {
    'README.md': '# acme-service\n\nA tiny service for the durable-agent-sdk demo.\n',
    'src/app.ts':
      "import { greet } from '../../src/demo/util.js';\n\n// TODO: validate input before greeting\nexport function handle(name: string): string {\n  return greet(name);\n}\n",
    'src/util.ts':
      'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n',
    '.env': `SECRET_KEY=${PLANTED_SECRET}\nPORT=8080\n`,
    '.gitignore': '.env\nbuild/\n',
    'build/app.js': '// build output\n',
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'ignore' });
    git('init', '-q');
    git('-c', 'user.email=demo@example.com', '-c', 'user.name=demo', 'add', '-A');
    git(
      '-c',
      'user.email=demo@example.com',
      '-c',
      'user.name=demo',
      'commit',
      '-q',
      '-m',
      'initial',
    );
  } catch {
    // No git on this machine: the workspace works without history.
  }
  return root;
}
