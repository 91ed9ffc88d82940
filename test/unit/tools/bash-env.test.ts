/** Bash's environment: an allowlist, never the worker's whole environment (issue 15, item 5). */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../src/testing/index.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import { Bash, DEFAULT_TOOL_ENV, toolEnvironment } from '../../../src/tools/builtin/bash.js';
import { runTool } from '../../../src/tools/run-tool.js';
import { makeContext, makeSandbox, type Sandbox } from './fixtures.js';

const SECRET_NAME = 'DURABLE_AGENT_TEST_SECRET';
const ALLOWED_NAME = 'DURABLE_AGENT_TEST_ALLOWED';
let secret: string;
let allowed: string;
let box: Sandbox;

beforeEach(async () => {
  box = await makeSandbox();
  // Planted in this (the worker's) process, as an API key would be.
  secret = `planted-${randomUUID()}`;
  allowed = `visible-${randomUUID()}`;
  process.env[SECRET_NAME] = secret;
  process.env[ALLOWED_NAME] = allowed;
});
afterEach(async () => {
  delete process.env[SECRET_NAME];
  delete process.env[ALLOWED_NAME];
  await box.cleanup();
});

/** `env` run by Bash, as `NAME=value` lines. */
async function bashEnv(context = makeContext([box.root])): Promise<string[]> {
  const result = await runTool(Bash, { command: 'env' }, context);
  expect(result.status).toBe('success');
  return result.model.split('\n').filter((line) => line !== '');
}

describe('Bash environment', () => {
  it("never passes a variable of the worker's environment that is not allowed", async () => {
    const lines = await bashEnv();
    expect(lines.join('\n')).not.toContain(secret);
    expect(lines.some((l) => l.startsWith(`${SECRET_NAME}=`))).toBe(false);
    // PATH is passed: the command found `env`, and sees the worker's PATH.
    expect(lines).toContain(`PATH=${process.env.PATH}`);
  });

  it('passes only the default variables and what bash sets itself', async () => {
    const names = (await bashEnv()).map((l) => l.split('=', 1)[0]);
    // bash adds PWD, SHLVL and _ on its own.
    const expected = [...DEFAULT_TOOL_ENV.filter((n) => process.env[n] !== undefined)];
    expect(names.filter((n) => !['PWD', 'SHLVL', '_'].includes(n as string)).sort()).toEqual(
      expected.sort(),
    );
  });

  it('passes an allowed variable and a set one, and still not the planted one', async () => {
    const env = toolEnvironment({ allow: [ALLOWED_NAME], set: { GIT_PAGER: 'cat' } });
    const lines = await bashEnv(makeContext([box.root], { env }));
    expect(lines).toContain(`${ALLOWED_NAME}=${allowed}`);
    expect(lines).toContain('GIT_PAGER=cat');
    expect(lines.join('\n')).not.toContain(secret);
  });

  it('runs in the first workspace root with the allowlisted HOME', async () => {
    const env = toolEnvironment({}, { HOME: '/home/someone', PATH: process.env.PATH });
    const result = await runTool(
      Bash,
      { command: 'pwd; echo "home=$HOME"' },
      makeContext([box.root], { env }),
    );
    expect(result.model).toBe(`${box.root}\nhome=/home/someone\n`);
  });
});

describe('toolEnvironment', () => {
  it('copies the defaults and allowed names the source has; set wins', () => {
    const env = toolEnvironment(
      { allow: ['EXTRA', 'MISSING'], set: { LANG: 'C.UTF-8', NEW: 'x' } },
      { PATH: '/bin', HOME: '/h', LANG: 'de_DE.UTF-8', EXTRA: 'e', OPENAI_API_KEY: 'sk-1' },
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', LANG: 'C.UTF-8', EXTRA: 'e', NEW: 'x' });
    expect(Object.isFrozen(env)).toBe(true);
  });

  it('is PATH, HOME, LANG, LC_ALL, TERM and TMPDIR by default', () => {
    expect([...DEFAULT_TOOL_ENV]).toEqual(['PATH', 'HOME', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR']);
  });
});

describe('advanced.toolEnv', () => {
  const model = scriptedModel(['x']);
  const resolveWith = (toolEnv: unknown) =>
    resolveAgentOptions({ model, advanced: { toolEnv } as never });

  it('resolves to allow and set, empty by default', () => {
    expect(resolveAgentOptions({ model }).toolEnv).toEqual({ allow: [], set: {} });
    expect(resolveWith({ allow: ['AWS_REGION'], set: { CI: '1' } }).toolEnv).toEqual({
      allow: ['AWS_REGION'],
      set: { CI: '1' },
    });
  });

  it.each([
    ['not an object', 'PATH', /advanced\.toolEnv must be an object/],
    ['an unknown key', { allowed: ['X'] }, /unknown key 'allowed'/],
    ['allow not an array', { allow: 'PATH' }, /advanced\.toolEnv\.allow must be an array/],
    [
      'a bad name in allow',
      { allow: ['OK', 'NOT-OK'] },
      /allow\[1\] must be a variable name.*'NOT-OK'/,
    ],
    ['a bad name in set', { set: { 'A=B': 'x' } }, /set has 'A=B', which is not a variable name/],
    ['a value that is not a string', { set: { N: 1 } }, /toolEnv\.set\.N must be a string, got 1/],
  ])('refuses %s with a ConfigError naming it', (_what, toolEnv, message) => {
    expect(() => resolveWith(toolEnv)).toThrow(message);
    expect(() => resolveWith(toolEnv)).toThrow(expect.objectContaining({ name: 'ConfigError' }));
  });
});
