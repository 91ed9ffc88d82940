/**
 * The README's main job, end to end and non-interactive: a real session with the seed's
 * hooks, a worker killed with SIGKILL while an approval waits, and the summary's checks.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { temporalAddress } from '../helpers.js';
import { tempDir } from '../temp-dirs.js';

const main = fileURLToPath(new URL('../../src/demo/main.ts', import.meta.url));

describe('the demo', () => {
  it('runs to the end, prints a line per hook dispatch, and exits 0 with every check held', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', main], {
      env: {
        ...process.env,
        // The demo keeps its workspace for people to look at; here it goes where it is removed.
        TMPDIR: tempDir('demo-tmp'),
        TEMPORAL_ADDRESS: temporalAddress(),
        OPENAI_API_KEY: '',
        OPENAI_BASE_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(output).toMatch(/hook PreToolUse\s+Bash\s+abort/);
    expect(output).toMatch(/killing worker-1 with SIGKILL while the request waits/);
    expect(output).toMatch(/hook SessionEnd\s+continue/);
    for (const check of [
      'SessionStart ran once',
      'SessionEnd ran once',
      'the secret never reached the model',
      'the worker was killed mid-session and the session finished',
      'rm -rf was blocked and build/ is intact',
      'the .env read was redacted',
      'NOTES.md was written once, after approval, with the stamp',
    ]) {
      expect(output).toContain(`[ok  ] ${check}`);
    }
    expect(output).toContain('All checks held.');
    expect(code, output).toBe(0);
  }, 120_000);
});
