/**
 * McpConnections against real MCP servers (issue 35, step 1): the reference `everything`
 * server over stdio and Streamable HTTP, the `filesystem` server over stdio, and
 * test/fixtures/mcp-cancel-server.ts, which records the cancellations it is told of.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { McpServerError } from '../../../src/common/errors.js';
import { McpConnections } from '../../../src/mcp/connections.js';
import type { McpServers } from '../../../src/mcp/options.js';
import { mcpResultToToolResult } from '../../../src/mcp/result.js';
import { toolEnvironment } from '../../../src/tools/builtin/bash.js';
import { waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';
import { alive, logServer } from '../../helpers/mcp.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const everything = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const filesystem = join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const cancelFixture = join(root, 'test/fixtures/mcp-cancel-server.ts');

const env = toolEnvironment({ set: { MCP_VISIBLE: 'visible-to-servers' } });
const secret = `planted-${randomUUID()}`;
const dir = tempDir('mcp');
const cancelLog = join(dir, 'cancel.log');
const open: McpConnections[] = [];
const started: ChildProcess[] = [];
let httpUrl = '';

/** Connections to `servers`, closed after the test. */
function connect(servers: McpServers): McpConnections {
  const connections = new McpConnections(servers, { env, connectTimeoutMs: 20_000 });
  open.push(connections);
  return connections;
}

const stdioEverything = { command: process.execPath, args: [everything, 'stdio'] };
const cancelServer = {
  command: process.execPath,
  args: ['--import', 'tsx', cancelFixture],
  cwd: root,
  env: { MCP_CANCEL_LOG: cancelLog },
};

function logLines(): string[] {
  return existsSync(cancelLog) ? readFileSync(cancelLog, 'utf8').trim().split('\n') : [];
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The everything server over Streamable HTTP on `port`, once it listens. */
async function startHttpEverything(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [everything, 'streamableHttp'], {
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`listening on port ${port}`)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`everything (http) exited ${code}: ${output}`)));
  });
  return child;
}

beforeAll(async () => {
  // A worker's secret: it must reach no MCP server.
  process.env['SECRET_TOKEN'] = secret;
  const port = await freePort();
  await startHttpEverything(port);
  httpUrl = `http://127.0.0.1:${port}/mcp`;
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((connections) => connections.close()));
});

afterAll(() => {
  delete process.env['SECRET_TOKEN'];
  for (const child of started) child.kill('SIGKILL');
});

describe.each([
  ['stdio', () => stdioEverything],
  ['Streamable HTTP', () => ({ type: 'http' as const, url: httpUrl })],
])('the everything server over %s', (_transport, config) => {
  it('lists its tools as mcp__everything__<tool> with their schemas and kinds', async () => {
    const tools = await connect({ everything: config() }).listTools('everything');
    const echo = tools.find((tool) => tool.name === 'mcp__everything__echo');
    expect(echo).toMatchObject({ server: 'everything', tool: 'echo', kind: 'readonly' });
    expect(echo?.inputSchema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
    });
    expect(echo?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(tools.map((tool) => tool.tool)).toEqual(
      expect.arrayContaining(['get-env', 'get-tiny-image', 'trigger-long-running-operation']),
    );
  });

  it('echoes a message back', async () => {
    const result = await connect({ everything: config() }).callTool('everything', 'echo', {
      message: 'hello from the worker',
    });
    expect(await mcpResultToToolResult(result, { maxOutputBytes: 10_000 })).toMatchObject({
      status: 'success',
      model: 'Echo: hello from the worker',
    });
  });
});

describe('results of the everything server', () => {
  it('maps get-tiny-image to an image line, get-structured-content to data, get-resource-links to links', async () => {
    const mcp = connect({ everything: stdioEverything });
    const map = async (tool: string, args: Record<string, string | number>) =>
      mcpResultToToolResult(await mcp.callTool('everything', tool, args), {
        maxOutputBytes: 100_000,
      });
    const image = await map('get-tiny-image', {});
    expect(image.model).toMatch(
      /^Here's the image you requested:\n\n\[image image\/png, \d+ bytes\]/,
    );
    expect(image.metadata?.['mcpContent']).toEqual([
      expect.objectContaining({ type: 'image', mimeType: 'image/png' }),
    ]);
    const weather = await map('get-structured-content', { location: 'New York' });
    expect(weather).toMatchObject({
      status: 'success',
      data: { temperature: 33, conditions: 'Cloudy', humidity: 82 },
    });
    const links = await map('get-resource-links', { count: 2 });
    expect(links.model.match(/^\[resource link: .+ demo:\/\/\S+( \(.+\))?\]$/gm)).toHaveLength(2);
  });
});

describe('cancellation and progress', () => {
  it('rejects an aborted long call within 2 s, after reporting progress', async () => {
    const mcp = connect({ everything: stdioEverything });
    const controller = new AbortController();
    const progress: number[] = [];
    let abortedAt = 0;
    const call = mcp.callTool(
      'everything',
      'trigger-long-running-operation',
      { duration: 10, steps: 50 },
      {
        signal: controller.signal,
        onProgress: (p) => {
          progress.push(p.progress);
          if (abortedAt === 0) {
            abortedAt = Date.now();
            controller.abort(new Error('aborted by the test'));
          }
        },
      },
    );
    await expect(call).rejects.toThrow('aborted by the test');
    expect(Date.now() - abortedAt).toBeLessThan(2_000);
    expect(progress[0]).toBe(1);
    // The connection stays usable.
    await expect(mcp.callTool('everything', 'echo', { message: 'after' })).resolves.toBeDefined();
  });

  it('tells the server of the abort: it sees notifications/cancelled for its request', async () => {
    writeFileSync(cancelLog, '');
    const mcp = connect({ cancel: cancelServer });
    const controller = new AbortController();
    const call = mcp.callTool('cancel', 'wait', {}, { signal: controller.signal });
    await waitFor(() => logLines().some((l) => l.startsWith('started ')), 20_000, 'the call');
    const requestId = logLines()
      .find((l) => l.startsWith('started '))
      ?.split(' ')[1];
    controller.abort();
    await expect(call).rejects.toThrow(/abort/i);
    await waitFor(() => logLines().includes(`cancelled ${requestId}`), 5_000, 'the cancel');
  });

  it('connects once for concurrent first uses', async () => {
    writeFileSync(cancelLog, '');
    const mcp = connect({ cancel: cancelServer });
    const lists = await Promise.all([mcp.listTools('cancel'), mcp.listTools('cancel')]);
    expect(lists[0]?.map((tool) => tool.name)).toEqual(['mcp__cancel__wait']);
    expect(logLines().filter((l) => l.startsWith('server '))).toHaveLength(1);
  });
});

describe('the tool list', () => {
  it('of a server that announces changes is kept until it says its tools changed', async () => {
    const mcp = connect({ notes: { ...logServer({ MCP_DYNAMIC: '1' }), cwd: root } });
    const first = await mcp.listTools('notes');
    expect(first.map((t) => t.tool)).toEqual(['read_note', 'write_note', 'slow', 'add_tool']);
    // Kept: the same list, not listed again.
    expect(await mcp.listTools('notes')).toBe(first);
    await mcp.callTool('notes', 'add_tool', {});
    // The server announced its new tool before it answered the call: listed again.
    const after = await mcp.listTools('notes');
    expect(after).not.toBe(first);
    expect(after.map((t) => t.tool)).toEqual([
      'read_note',
      'write_note',
      'slow',
      'add_tool',
      'extra',
    ]);
  });
});

describe('server processes', () => {
  it('starts a new process on the next call after the server was killed between calls', async () => {
    const mcp = connect({ everything: stdioEverything });
    await mcp.callTool('everything', 'echo', { message: 'one' });
    const first = mcp.pid('everything');
    expect(first).toBeTypeOf('number');
    process.kill(first!, 'SIGKILL');
    await waitFor(() => mcp.pid('everything') === undefined, 10_000, 'the connection dropped');
    const result = await mcp.callTool('everything', 'echo', { message: 'two' });
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: two' }]);
    expect(mcp.pid('everything')).not.toBe(first);
  });

  it('fails a call whose server dies mid-call with McpServerError', async () => {
    const mcp = connect({ everything: stdioEverything });
    await mcp.listTools('everything');
    const pid = mcp.pid('everything');
    expect(pid).toBeTypeOf('number');
    let killed = false;
    const killOnce = (): void => {
      if (!killed) process.kill(pid!, 'SIGKILL');
      killed = true;
    };
    const call = mcp.callTool(
      'everything',
      'trigger-long-running-operation',
      { duration: 10, steps: 50 },
      { onProgress: killOnce },
    );
    await expect(call).rejects.toThrow(McpServerError);
    await expect(call).rejects.toThrow(/MCP server 'everything' failed: .*Connection closed/);
  });

  it('connects again after an HTTP server restarted: the call that finds it gone fails', async () => {
    const port = await freePort();
    const first = await startHttpEverything(port);
    const mcp = connect({ remote: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } });
    await mcp.callTool('remote', 'echo', { message: 'before' });
    const exited = new Promise((resolve) => first.once('exit', resolve));
    first.kill('SIGKILL');
    await exited;
    await startHttpEverything(port);
    // The new server knows nothing of our session: that call fails, the client is dropped.
    await expect(mcp.callTool('remote', 'echo', { message: 'lost' })).rejects.toThrow(
      /^MCP server 'remote' failed: /,
    );
    const again = await mcp.callTool('remote', 'echo', { message: 'after' });
    expect(again.content).toEqual([{ type: 'text', text: 'Echo: after' }]);
  });

  it('names a server whose command does not exist, and gives the stderr of one that exits', async () => {
    const mcp = connect({
      missing: { command: `no-such-mcp-server-${randomUUID()}` },
      exits: {
        command: process.execPath,
        args: ['-e', 'console.error("boom: no config"); process.exit(3)'],
      },
    });
    const missing = mcp.listTools('missing');
    await expect(missing).rejects.toBeInstanceOf(McpServerError);
    await expect(missing).rejects.toMatchObject({
      code: 'MCP_SERVER_UNAVAILABLE',
      server: 'missing',
      message: expect.stringMatching(/^MCP server 'missing' could not be started: .*ENOENT/),
    });
    await expect(mcp.listTools('exits')).rejects.toThrow(/'exits'[\s\S]*boom: no config/);
  });

  it('names the configured servers when asked for one that is not', async () => {
    const mcp = connect({ a: stdioEverything, b: stdioEverything });
    await expect(mcp.callTool('c', 'echo', {})).rejects.toThrow(
      "MCP server 'c' is not configured (configured: 'a', 'b')",
    );
  });

  it('lists the servers that are up and names the one that is down', async () => {
    const down = `http://127.0.0.1:${await freePort()}/mcp`;
    const mcp = connect({ everything: stdioEverything, down: { type: 'http', url: down } });
    const { tools, unavailable } = await mcp.listAll();
    expect(tools.some((tool) => tool.name === 'mcp__everything__echo')).toBe(true);
    expect(unavailable).toEqual([
      { server: 'down', message: expect.stringMatching(/^MCP server 'down' could not be reached/) },
    ]);
  });

  it('gives a stdio server the tool environment and its own env, never the worker secret', async () => {
    const mcp = connect({ everything: { ...stdioEverything, env: { OWN_VAR: 'own' } } });
    const result = await mcp.callTool('everything', 'get-env', {});
    const first = result.content?.[0];
    const text = first?.type === 'text' ? String(first.text) : '';
    const seen = JSON.parse(text) as Record<string, string>;
    expect(seen['MCP_VISIBLE']).toBe('visible-to-servers');
    expect(seen['OWN_VAR']).toBe('own');
    expect(text).not.toContain(secret);
    expect(seen['SECRET_TOKEN']).toBeUndefined();
    // Nothing else of the worker's: not even the SDK's default USER, LOGNAME, SHELL.
    expect(Object.keys(seen).sort()).toEqual(Object.keys({ ...env, OWN_VAR: '' }).sort());
  });

  it('stops the stdio processes on close, and refuses calls after', async () => {
    const mcp = connect({
      everything: stdioEverything,
      fs: { command: process.execPath, args: [filesystem, dir] },
    });
    await Promise.all([mcp.listTools('everything'), mcp.listTools('fs')]);
    const pids = [mcp.pid('everything'), mcp.pid('fs')];
    expect(pids.every((pid) => typeof pid === 'number' && alive(pid))).toBe(true);
    await mcp.close();
    await waitFor(() => pids.every((pid) => !alive(pid!)), 5_000, 'the processes gone');
    await mcp.close();
    await expect(mcp.listTools('fs')).rejects.toThrow(/connections are closed/);
  });
});

describe('the filesystem server over stdio', () => {
  it('writes and reads a file in its directory', async () => {
    const mcp = connect({ fs: { command: process.execPath, args: [filesystem, dir] } });
    const names = (await mcp.listTools('fs')).map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['mcp__fs__write_file', 'mcp__fs__read_text_file']),
    );
    const path = join(dir, 'note.txt');
    await mcp.callTool('fs', 'write_file', { path, content: 'written over MCP' });
    const read = await mcp.callTool('fs', 'read_text_file', { path });
    expect((await mcpResultToToolResult(read, { maxOutputBytes: 1_000 })).model).toBe(
      'written over MCP',
    );
  });
});
