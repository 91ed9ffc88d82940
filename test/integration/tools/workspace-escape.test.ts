/** Regression: the workspace guard against a missing component followed by `..` and a symlink. */
import { existsSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, builtinTools, type Agent } from '../../../src/index.js';
import { resolveInWorkspace } from '../../../src/tools/workspace.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const ws = tempDir('edge-ws');
const outside = tempDir('edge-out');
symlinkSync(outside, join(ws, 'link'));

describe('workspace guard', () => {
  it('resolveInWorkspace refuses a write to missing/../link/x', async () => {
    await expect(
      resolveInWorkspace([ws], 'missing/../link/pwned.txt', 'write'),
    ).rejects.toMatchObject({ name: 'WorkspaceError', reason: 'not_found' });
  });

  let agent: Agent | undefined;
  afterAll(() => agent?.shutdown());
  it('Write through missing/../link/x gets an error result and creates nothing outside', async () => {
    agent = await createAgent({
      model: scriptedModel([
        toolCall('Write', { file_path: 'missing/../link/pwned.txt', content: 'escaped' }),
        'done',
      ]),
      workspaceRoots: [ws],
      tools: builtinTools(),
      advanced: {
        permission: 'bypass-permissions',
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-ws') },
      },
    });
    const session = await agent.createSession();
    const r = await session.send('go');
    await session.close();
    expect(r.status).toBe('completed');
    expect(r.toolCalls.map((c) => c.status)).toEqual(['error']);
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(ws, 'missing'))).toBe(false);
  });
});
