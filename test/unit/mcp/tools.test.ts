/** MCP tools: names, specs and digests, what changed, and results as ToolResults (issue 35). */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/common/errors.js';
import { McpConnections, checkMcpSdk, stdioEnvironment } from '../../../src/mcp/connections.js';
import { mcpResultToToolResult } from '../../../src/mcp/result.js';
import { canonicalJson } from '../../../src/common/json.js';
import { mcpToolName, parseMcpToolName } from '../../../src/common/mcp.js';
import { describeToolChange, mcpToolSpec, type McpToolInfo } from '../../../src/mcp/tools.js';

const writeFile: McpToolInfo = {
  name: 'write_file',
  description: 'Write a file',
  inputSchema: {
    type: 'object',
    properties: { path: { type: 'string' }, content: { type: 'string' } },
    required: ['path', 'content'],
  },
  annotations: { destructiveHint: true },
};

describe('MCP tool names', () => {
  it('names a tool mcp__<server>__<tool> and parses it back', () => {
    expect(mcpToolName('github', 'create_issue')).toBe('mcp__github__create_issue');
    expect(parseMcpToolName('mcp__github__create_issue')).toEqual({
      server: 'github',
      tool: 'create_issue',
    });
  });

  it('keeps a tool name containing __ whole: the split is at the first __ after the server', () => {
    const name = mcpToolName('fs', 'read__file__now');
    expect(parseMcpToolName(name)).toEqual({ server: 'fs', tool: 'read__file__now' });
  });

  it('refuses a server name containing __ or empty, and an empty tool name', () => {
    expect(() => mcpToolName('my__server', 'x')).toThrow(ConfigError);
    expect(() => mcpToolName('', 'x')).toThrow(/must be non-empty/);
    expect(() => mcpToolName('s', '')).toThrow(ConfigError);
  });

  it.each(['Bash', 'mcp__', 'mcp__server', 'mcp____tool', 'mcp__server__', 'MCP__s__t'])(
    'parses %s as no MCP tool',
    (name) => {
      expect(parseMcpToolName(name)).toBeUndefined();
    },
  );
});

describe('mcpToolSpec', () => {
  it('records name, server, tool, description, schema and annotations; write unless readOnlyHint', () => {
    const spec = mcpToolSpec('fs', writeFile);
    expect(spec).toMatchObject({
      name: 'mcp__fs__write_file',
      server: 'fs',
      tool: 'write_file',
      description: 'Write a file',
      inputSchema: writeFile.inputSchema,
      annotations: { destructiveHint: true },
      kind: 'write',
    });
    expect(spec.digest).toMatch(/^[0-9a-f]{64}$/);
    const read = mcpToolSpec('fs', { ...writeFile, annotations: { readOnlyHint: true } });
    expect(read.kind).toBe('readonly');
    expect(mcpToolSpec('fs', { name: 't', inputSchema: { type: 'object' } })).toMatchObject({
      description: '',
      kind: 'write',
    });
  });

  it('gives the same digest whatever the order of keys', () => {
    const reordered: McpToolInfo = {
      annotations: { destructiveHint: true },
      inputSchema: {
        required: ['path', 'content'],
        properties: { content: { type: 'string' }, path: { type: 'string' } },
        type: 'object',
      },
      description: 'Write a file',
      name: 'write_file',
    };
    expect(mcpToolSpec('fs', reordered).digest).toBe(mcpToolSpec('fs', writeFile).digest);
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });

  it('gives another digest when the description, schema or annotations change', () => {
    const digest = mcpToolSpec('fs', writeFile).digest;
    const changed = [
      { ...writeFile, description: 'Write a file (now also deletes)' },
      { ...writeFile, inputSchema: { ...writeFile.inputSchema, required: ['path'] } },
      { ...writeFile, annotations: { destructiveHint: false } },
      { ...writeFile, name: 'write_files' },
    ];
    for (const info of changed) expect(mcpToolSpec('fs', info).digest).not.toBe(digest);
  });

  it('drops what JSON cannot carry from a schema', () => {
    const spec = mcpToolSpec('s', {
      name: 't',
      inputSchema: { type: 'object', default: undefined, f: () => 1 },
    });
    expect(spec.inputSchema).toEqual({ type: 'object' });
  });
});

describe('describeToolChange', () => {
  const recorded = mcpToolSpec('fs', writeFile);

  it('says a tool is gone', () => {
    expect(describeToolChange(recorded, undefined)).toBe(
      "mcp__fs__write_file: server 'fs' no longer offers tool 'write_file'",
    );
  });

  it('says unchanged when the digests are equal', () => {
    expect(describeToolChange(recorded, mcpToolSpec('fs', writeFile))).toBe(
      'mcp__fs__write_file unchanged',
    );
  });

  it('names the description, the properties added, removed and changed, and the annotations', () => {
    const current = mcpToolSpec('fs', {
      ...writeFile,
      description: 'Write or delete a file',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'number' }, mode: { type: 'string' } },
        required: ['path', 'content'],
      },
      annotations: { destructiveHint: true, readOnlyHint: true },
    });
    expect(describeToolChange(recorded, current)).toBe(
      'mcp__fs__write_file changed: description; input schema (properties added: mode; ' +
        'removed: content; changed: path); annotations (readOnlyHint)',
    );
  });

  it('names schema keys other than the properties', () => {
    const current = mcpToolSpec('fs', {
      ...writeFile,
      inputSchema: { ...writeFile.inputSchema, required: ['path'] },
    });
    expect(describeToolChange(recorded, current)).toBe(
      'mcp__fs__write_file changed: input schema (required changed)',
    );
  });
});

describe('mcpResultToToolResult', () => {
  const options = { maxOutputBytes: 10_000 };
  const png = Buffer.from('not really a png').toString('base64');

  it('joins text parts with blank lines', async () => {
    const result = await mcpResultToToolResult(
      {
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
      options,
    );
    expect(result).toMatchObject({ status: 'success', model: 'one\n\ntwo' });
  });

  it('names an image or audio part in a line and keeps its data in metadata.mcpContent', async () => {
    const result = await mcpResultToToolResult(
      {
        content: [
          { type: 'text', text: 'look:' },
          { type: 'image', data: png, mimeType: 'image/png' },
          { type: 'audio', data: png, mimeType: 'audio/wav' },
        ],
      },
      options,
    );
    expect(result.model).toBe(
      'look:\n\n[image image/png, 16 bytes]\n\n[audio audio/wav, 16 bytes]',
    );
    expect(result.metadata?.['mcpContent']).toEqual([
      { type: 'image', mimeType: 'image/png', bytes: 16, data: png },
      { type: 'audio', mimeType: 'audio/wav', bytes: 16, data: png },
    ]);
  });

  it('offloads an image through saveFullOutput when given, naming the ref', async () => {
    const saved: Array<string | Uint8Array> = [];
    const result = await mcpResultToToolResult(
      { content: [{ type: 'image', data: png, mimeType: 'image/png' }] },
      {
        ...options,
        saveFullOutput: async (content) => {
          saved.push(content);
          return 'sha256:abc';
        },
      },
    );
    expect(result.model).toBe('[image image/png, 16 bytes: sha256:abc]');
    expect(result.metadata?.['mcpContent']).toEqual([
      { type: 'image', mimeType: 'image/png', bytes: 16, ref: 'sha256:abc' },
    ]);
    expect(Buffer.from(saved[0] as Uint8Array).toString()).toBe('not really a png');
  });

  it('gives structuredContent as data, and as the text when no part is text', async () => {
    const weather = { temperature: 33, conditions: 'Cloudy' };
    const withText = await mcpResultToToolResult(
      { content: [{ type: 'text', text: 'cloudy' }], structuredContent: weather },
      options,
    );
    expect(withText).toMatchObject({ status: 'success', model: 'cloudy', data: weather });
    const alone = await mcpResultToToolResult({ content: [], structuredContent: weather }, options);
    expect(alone).toMatchObject({ model: JSON.stringify(weather, null, 2), data: weather });
  });

  it('lists resource links, and gives embedded resources as text or a line', async () => {
    const result = await mcpResultToToolResult(
      {
        content: [
          { type: 'resource_link', name: 'a.txt', uri: 'file:///a.txt', mimeType: 'text/plain' },
          { type: 'resource_link', name: 'b', uri: 'demo://b' },
          { type: 'resource', resource: { uri: 'demo://t', text: 'inline text' } },
          { type: 'resource', resource: { uri: 'demo://bin', blob: png } },
        ],
      },
      options,
    );
    expect(result.model).toBe(
      '[resource link: a.txt file:///a.txt (text/plain)]\n\n[resource link: b demo://b]\n\n' +
        'inline text\n\n[resource demo://bin, 16 bytes]',
    );
  });

  it('turns unexpected parts and malformed results into lines, never a throw', async () => {
    const result = await mcpResultToToolResult(
      { content: [{ type: 'hologram' }, 42, { type: 'image' }, { type: 'text', text: 7 }] },
      options,
    );
    expect(result.model).toBe(
      '[hologram content]\n\n[malformed content]\n\n[image content]\n\n[text content]',
    );
    for (const odd of [null, 'text', { content: 'nope' }, []]) {
      expect(await mcpResultToToolResult(odd, options)).toMatchObject({
        status: 'success',
        model: '(no output)',
      });
    }
  });

  it('makes isError an error result with McpToolError and MCP_TOOL_ERROR', async () => {
    const result = await mcpResultToToolResult(
      { content: [{ type: 'text', text: 'no such file' }], isError: true },
      options,
    );
    expect(result).toMatchObject({
      status: 'error',
      model: 'no such file',
      error: { type: 'McpToolError', message: 'no such file', code: 'MCP_TOOL_ERROR' },
    });
  });

  it('caps text over maxOutputBytes and keeps the whole through saveFullOutput', async () => {
    const long = 'x'.repeat(5_000);
    let kept: string | Uint8Array | undefined;
    const result = await mcpResultToToolResult(
      { content: [{ type: 'text', text: long }] },
      {
        maxOutputBytes: 1_000,
        saveFullOutput: async (content) => {
          kept = content;
          return 'sha256:full';
        },
      },
    );
    expect(Buffer.byteLength(result.model)).toBeLessThanOrEqual(1_000);
    expect(result.model).toContain('5000 bytes total');
    expect(result.model).toContain('full output: sha256:full');
    expect(result).toMatchObject({ outputRef: 'sha256:full', metadata: { truncated: true } });
    expect(kept).toBe(long);
    const uncapped = await mcpResultToToolResult(
      { content: [{ type: 'text', text: long }] },
      { maxOutputBytes: 1_000 },
    );
    expect(uncapped.outputRef).toBeUndefined();
    expect(Buffer.byteLength(uncapped.model)).toBeLessThanOrEqual(1_000);
  });
});

describe('stdioEnvironment', () => {
  it('is the tool environment plus the server env, and unsets the SDK-inherited names', () => {
    const env = stdioEnvironment({ PATH: '/bin', A: '1' }, { A: '2', B: '3' }, ['PATH', 'USER']);
    expect(env).toEqual({ PATH: '/bin', USER: undefined, A: '2', B: '3' });
    expect(Object.hasOwn(env, 'USER')).toBe(true);
  });
});

describe('McpConnections', () => {
  it('refuses a server name that is empty or contains __, starting nothing', () => {
    for (const name of ['', 'my__server']) {
      expect(() => new McpConnections({ [name]: { command: 'x' } }, { env: {} })).toThrow(
        ConfigError,
      );
    }
  });
});

describe('checkMcpSdk', () => {
  it('passes when the SDK loads (it is installed here)', async () => {
    await expect(checkMcpSdk()).resolves.toBeUndefined();
  });

  it('is a ConfigError naming the package to install when it does not load', async () => {
    const missing = () =>
      Promise.reject(new Error("Cannot find package '@modelcontextprotocol/sdk'"));
    const error = await checkMcpSdk(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      /^mcpServers needs the package @modelcontextprotocol\/sdk .*npm install @modelcontextprotocol\/sdk/,
    );
  });
});
