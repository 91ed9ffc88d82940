/** The agent's identity: name and version rules, the default task queue, the fingerprint. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, defineTool, HookEvent, type AgentOptions } from '../../../src/index.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import { normalizedSource } from '../../../src/definition/fingerprint.js';
import { manifestDifferences } from '../../../src/common/identity.js';
import { definition, weather } from '../../fixtures/version-definition.js';

const fixture = fileURLToPath(new URL('../../fixtures/version-definition.ts', import.meta.url));
const fingerprint = (options: AgentOptions) => resolveAgentOptions(options).fingerprint;
const base = fingerprint(definition);
const withAdvanced = (advanced: NonNullable<AgentOptions['advanced']>): AgentOptions => ({
  ...definition,
  advanced: { ...definition.advanced, ...advanced },
});

describe('the fingerprint', () => {
  it('is 16 hex digits, and the default version', () => {
    expect(base).toMatch(/^[0-9a-f]{16}$/);
    expect(resolveAgentOptions(definition).version).toBe(base);
  });

  it('is the same in another process, built by another toolchain (tsx there, vitest here)', () => {
    const other = execFileSync(process.execPath, ['--import', 'tsx', fixture], {
      encoding: 'utf8',
    }).trim();
    expect(other).toBe(base);
  }, 30_000);

  it('is the same for a second resolve of the same definition', () => {
    expect(fingerprint(definition)).toBe(base);
  });

  it("changes when a callback's source changes", () => {
    const hooks = {
      ...definition.advanced!.hooks,
      [HookEvent.PreToolUse]: [async () => ({ action: 'skip' as const, reason: 'no tools' })],
    };
    expect(fingerprint(withAdvanced({ hooks }))).not.toBe(base);
  });

  it('changes when callbacks change order', () => {
    const a = async () => ({ action: 'continue' as const });
    const b = async () => ({ action: 'abort' as const, reason: 'b' });
    const ab = fingerprint(withAdvanced({ hooks: { [HookEvent.UserPromptSubmit]: [a, b] } }));
    const ba = fingerprint(withAdvanced({ hooks: { [HookEvent.UserPromptSubmit]: [b, a] } }));
    expect(ab).not.toBe(ba);
  });

  it("changes when a tool's schema changes", () => {
    const wider = defineTool({
      ...weather,
      inputSchema: z.object({ city: z.string(), units: z.string() }),
    });
    expect(fingerprint({ ...definition, tools: [wider] })).not.toBe(base);
  });

  it('changes when a tool is added', () => {
    const echo = defineTool({
      name: 'Echo',
      description: 'echo',
      kind: 'readonly',
      inputSchema: z.object({ text: z.string() }),
      execute: async ({ text }) => text,
    });
    expect(fingerprint({ ...definition, tools: [weather, echo] })).not.toBe(base);
  });

  it('changes when the permission policy changes (preset or function source)', () => {
    expect(fingerprint(withAdvanced({ permission: 'default' }))).not.toBe(base);
    const allow = fingerprint(withAdvanced({ permission: async () => 'allow' as const }));
    const deny = fingerprint(withAdvanced({ permission: async () => 'deny' as const }));
    expect(allow).not.toBe(deny);
  });

  it.each([
    ['hookTimeoutMs', { hookTimeoutMs: 5_000 }],
    ['sessionEndHookTimeoutMs', { sessionEndHookTimeoutMs: 1_000 }],
    ['toolHookErrors', { toolHookErrors: 'reject' as const }],
    ['permissionTimeoutMs', { permissionTimeoutMs: 60_000 }],
    ['maxTurns', { maxTurns: 3 }],
  ])('changes when the deciding option %s changes', (_name, advanced) => {
    expect(fingerprint(withAdvanced(advanced))).not.toBe(base);
  });

  it.each([
    ['the model', { ...definition, model: 'gpt-4o', apiKey: 'sk-test' }],
    ['the name', { ...definition, name: 'billing' }],
    ['workspaceRoots', { ...definition, workspaceRoots: ['/tmp'] }],
    ['modelTimeoutMs', withAdvanced({ modelTimeoutMs: 1_000 })],
    ['toolTimeoutMs', withAdvanced({ toolTimeoutMs: 1_000 })],
    ['maxToolOutputBytes', withAdvanced({ maxToolOutputBytes: 1_024 })],
    ['maxContextTokens', withAdvanced({ maxContextTokens: 1_000 })],
    ['logLevel', withAdvanced({ logLevel: 'ERROR' })],
    ['temporal.taskQueue', withAdvanced({ temporal: { taskQueue: 'elsewhere' } })],
    ['an explicit version', { ...definition, version: 'v42' }],
  ])('stays the same when %s changes (it decides nothing)', (_name, options) => {
    expect(fingerprint(options as AgentOptions)).toBe(base);
  });
});

describe('normalizedSource', () => {
  it('is the same for one function printed minified or laid out', () => {
    const laidOut = `async (input) => {
      // a comment
      return String(input.userPrompt).includes("a b") ? { action: "abort", reason: 'x', } : { action: "continue" };
    }`;
    const minified = `async input=>{return String(input.userPrompt).includes("a b")?{action:"abort",reason:'x'}:{action:"continue"}}`;
    expect(normalizedSource(laidOut)).toBe(normalizedSource(minified));
  });

  it('keeps the whitespace of string literals', () => {
    expect(normalizedSource('() => "rm -rf"')).not.toBe(normalizedSource('() => "rm-rf"'));
  });
});

describe('manifestDifferences', () => {
  it('names the event and index, the tool and the option that differ', () => {
    const a = resolveAgentOptions(definition).manifest;
    const b = resolveAgentOptions({
      ...definition,
      tools: [defineTool({ ...weather, kind: 'execute' })],
      advanced: {
        ...definition.advanced,
        hooks: {
          ...definition.advanced!.hooks,
          [HookEvent.PreToolUse]: [async () => ({ action: 'skip' as const, reason: 'x' })],
        },
        hookTimeoutMs: 5_000,
      },
    }).manifest;
    expect(manifestDifferences(a, b)).toEqual([
      'PreToolUse[0] callback source',
      'tool Weather (kind, description, schema or affectedPaths)',
      'option hookTimeoutMs (600000 vs 5000)',
    ]);
    expect(manifestDifferences(a, a)).toEqual([]);
  });
});

describe('name and version', () => {
  it("default the name to 'default' and the task queue to durable-agent.<name>", () => {
    expect(resolveAgentOptions(definition).name).toBe('default');
    expect(resolveAgentOptions(definition).temporal.taskQueue).toBe('durable-agent.default');
    expect(resolveAgentOptions({ ...definition, name: 'billing' }).temporal.taskQueue).toBe(
      'durable-agent.billing',
    );
  });

  it('keep an explicit version', () => {
    expect(resolveAgentOptions({ ...definition, version: 'v42' }).version).toBe('v42');
  });

  it.each(['', 'v 1', 'v:1', '__unversioned__', '-v1', 'x'.repeat(256), 'v1/2'])(
    'refuse the version %j with a ConfigError naming the build id rule',
    (version) => {
      expect(() => resolveAgentOptions({ ...definition, version })).toThrow(ConfigError);
      expect(() => resolveAgentOptions({ ...definition, version })).toThrow(
        /version must be 1 to 255 letters, digits, '\.', '_' or '-', starting with a letter or digit \(it becomes a Temporal Worker Deployment build id\)/,
      );
    },
  );

  it.each(['1.2.3', 'v42', 'release-2025_01', 'a'.repeat(255)])(
    'accept the version %j',
    (version) => {
      expect(resolveAgentOptions({ ...definition, version }).version).toBe(version);
    },
  );

  it.each(['acme.billing', 'a:b', '', 'with space', 'x'.repeat(101)])(
    'refuse the name %j with a ConfigError naming the deployment name rule',
    (name) => {
      expect(() => resolveAgentOptions({ ...definition, name })).toThrow(
        /name must be 1 to 100 letters, digits, '-' or '_'.*may not contain '\.' or ':'/,
      );
    },
  );
});
