import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/common/errors.js';
import {
  Bash,
  Edit,
  Glob,
  Grep,
  Read,
  Write,
  builtinTools,
} from '../../../src/tools/builtin/index.js';
import { runTool } from '../../../src/tools/run-tool.js';
import { defineTool } from '../../../src/tools/tool.js';
import { makeContext } from './fixtures.js';

const context = makeContext(['/nonexistent-root-never-touched']);

const echo = defineTool({
  name: 'Echo',
  description: 'echo',
  kind: 'readonly',
  inputSchema: z.object({ text: z.string(), times: z.number().int().optional() }),
  execute: async ({ text, times }) => text.repeat(times ?? 1),
});

describe('runTool', () => {
  it('gives an InvalidToolInput error result for input that fails the schema, not a throw', async () => {
    const result = await runTool(echo, { text: 42 }, context);
    expect(result).toMatchObject({ status: 'error', error: { type: 'InvalidToolInput' } });
    expect(result.model).toMatch(/^Invalid input for Echo: text: /);
  });

  it('gives an error result for input that is not an object at all', async () => {
    for (const raw of [null, undefined, 'text', [1]]) {
      const result = await runTool(Read, raw, context);
      expect(result).toMatchObject({ status: 'error', error: { type: 'InvalidToolInput' } });
      expect(result.model).toMatch(/^Invalid input for Read: /);
    }
  });

  it('names every bad field of a built-in tool', async () => {
    const result = await runTool(Read, { file_path: 3, offset: 1.5 }, context);
    expect(result.model).toContain('file_path');
    expect(result.model).toContain('offset');
  });

  it('turns a string into a success result', async () => {
    await expect(runTool(echo, { text: 'hi' }, context)).resolves.toEqual({
      status: 'success',
      model: 'hi',
    });
  });

  it('turns a thrown error into an error result named after the error', async () => {
    const failing = defineTool({
      ...echo,
      execute: async () => {
        throw new ToolError('disk on fire');
      },
    });
    const result = await runTool(failing, { text: 'x' }, context);
    expect(result).toMatchObject({
      status: 'error',
      model: 'Echo failed: disk on fire',
      error: { type: 'ToolError', message: 'disk on fire', code: 'TOOL_ERROR' },
    });
  });

  it('turns a thrown non-error and a malformed return into error results', async () => {
    const throwsString = defineTool({
      ...echo,
      execute: async () => {
        throw 'plain string';
      },
    });
    expect(await runTool(throwsString, { text: 'x' }, context)).toMatchObject({
      status: 'error',
      error: { type: 'Error', message: 'plain string' },
    });
    const malformed = defineTool({
      ...echo,
      execute: async () => ({ nope: true }) as never,
    });
    expect(await runTool(malformed, { text: 'x' }, context)).toMatchObject({
      status: 'error',
      error: { type: 'InvalidToolResult' },
    });
  });

  it('caps the model text at maxOutputBytes', async () => {
    const result = await runTool(
      echo,
      { text: 'abc', times: 10_000 },
      makeContext([], { maxOutputBytes: 500 }),
    );
    expect(result.status).toBe('success');
    expect(Buffer.byteLength(result.model)).toBeLessThanOrEqual(500);
    expect(result.model).toContain('output truncated: 30000 bytes total');
  });
});

describe('builtinTools', () => {
  it('returns the six built-ins with their kinds', () => {
    expect(builtinTools().map((t) => [t.name, t.kind])).toEqual([
      ['Read', 'readonly'],
      ['Write', 'write'],
      ['Edit', 'write'],
      ['Bash', 'execute'],
      ['Glob', 'readonly'],
      ['Grep', 'readonly'],
    ]);
    expect(builtinTools()).toEqual([Read, Write, Edit, Bash, Glob, Grep]);
  });
});
