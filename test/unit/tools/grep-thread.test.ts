/**
 * Grep searches in a thread of its own (issue 15, item 6): a catastrophic regular expression
 * never blocks the worker's event loop, and it is stopped at the tool's budget.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GREP_MAX_LINE_CHARS, GREP_MAX_MATCHES, Grep } from '../../../src/tools/builtin/grep.js';
import * as sourceThread from '../../../src/tools/builtin/grep-thread.js';
import type { ToolContext } from '../../../src/tools/tool.js';
import { runTool } from '../../../src/tools/run-tool.js';
import { makeContext, makeSandbox, type Sandbox } from './fixtures.js';

/**
 * `(a+)+$` on this line backtracks about 2^32 times before it fails: tens of seconds to
 * minutes of one core, far past any budget here.
 */
const CATASTROPHIC_LINE = `${'a'.repeat(32)}b`;
const CATASTROPHIC_PATTERN = '(a+)+$';

let box: Sandbox;
beforeEach(async () => {
  box = await makeSandbox();
  await writeFile(join(box.root, 'evil.txt'), `${CATASTROPHIC_LINE}\n`);
});
afterEach(async () => {
  await box.cleanup();
});

function grep(input: Record<string, unknown>, overrides: Partial<ToolContext> = {}) {
  return runTool(Grep, input, makeContext([box.root], overrides));
}

/**
 * Have an idle search thread ready, so the search under test starts at once (from the
 * TypeScript sources a new thread takes a while to load its script).
 */
async function warmThread(): Promise<void> {
  expect((await grep({ pattern: 'alpha', path: 'a.txt' })).model).toBe('a.txt:1:alpha');
}

/**
 * Ticks the event loop while `run` runs; returns its result and how many ticks came while a
 * search thread was busy (none, had the search blocked the event loop: an order, not a
 * latency; `npm run bench:grep` measures what a blocking search costs an abort).
 */
async function withTicker<T>(
  run: () => Promise<T>,
): Promise<{ result: T; ticksWhileSearching: number }> {
  let ticksWhileSearching = 0;
  const ticker = setInterval(() => {
    if (!noSearchRunning()) ticksWhileSearching++;
  }, 10);
  try {
    return { result: await run(), ticksWhileSearching };
  } finally {
    clearInterval(ticker);
  }
}

/** No search thread is running (an idle one may wait for the next search). */
function noSearchRunning(): boolean {
  const { live, idle } = sourceThread.searchThreadCounts();
  return live === idle;
}

describe('Grep in its own thread', () => {
  it("stops a catastrophic pattern at the tool's budget with a TimeoutError naming the file, the event loop never blocked", async () => {
    await warmThread();
    const budgetMs = 1000;
    const t0 = performance.now();
    const { result, ticksWhileSearching } = await withTicker(() =>
      grep({ pattern: CATASTROPHIC_PATTERN }, { timeoutMs: budgetMs }),
    );
    const elapsedMs = performance.now() - t0;
    expect(result).toMatchObject({
      status: 'error',
      error: { type: 'TimeoutError', message: expect.stringContaining('evil.txt') },
    });
    expect(result.model).toMatch(
      /^Grep stopped at its time budget of 1000 ms, while searching evil\.txt \(file \d+ of \d+\)\. The regular expression may backtrack catastrophically/,
    );
    // Not before its budget (however late the loaded machine ends it).
    expect(elapsedMs).toBeGreaterThanOrEqual(budgetMs - 5);
    // Run on the event loop, the match would have blocked it for the whole search.
    expect(ticksWhileSearching).toBeGreaterThan(0);
    expect(noSearchRunning()).toBe(true);
  });

  it("stops when the signal aborts with the activity's TimeoutError", async () => {
    await warmThread();
    const controller = new AbortController();
    const timer = setTimeout(() => {
      const reason = new Error('Tool Grep exceeded 300ms');
      reason.name = 'TimeoutError';
      controller.abort(reason);
    }, 300);
    const result = await grep(
      { pattern: CATASTROPHIC_PATTERN },
      { signal: controller.signal, timeoutMs: 300 },
    ).finally(() => clearTimeout(timer));
    expect(result).toMatchObject({ status: 'error', error: { type: 'TimeoutError' } });
    expect(result.model).toContain('while searching evil.txt');
    expect(noSearchRunning()).toBe(true);
  });

  it('stops on abort with an AbortError result, long before its budget', async () => {
    await warmThread();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error('user abort')), 200);
    const result = await grep(
      { pattern: CATASTROPHIC_PATTERN },
      { signal: controller.signal, timeoutMs: 60_000 },
    ).finally(() => clearTimeout(timer));
    // An AbortError, not the budget's TimeoutError: it stopped on the abort, before the budget.
    expect(result).toMatchObject({ status: 'error', error: { type: 'AbortError' } });
    expect(result.model).toMatch(/^Grep was cancelled /);
    expect(noSearchRunning()).toBe(true);
  });

  it('does not start a search when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    const before = sourceThread.searchThreadCounts().live;
    const result = await grep({ pattern: 'alpha', path: 'a.txt' }, { signal: controller.signal });
    expect(result).toMatchObject({ status: 'error', error: { type: 'AbortError' } });
    expect(sourceThread.searchThreadCounts().live).toBeLessThanOrEqual(before);
  });

  it('searches normally after a stopped search, and keeps one finished thread idle', async () => {
    const stopped = await grep({ pattern: CATASTROPHIC_PATTERN }, { timeoutMs: 300 });
    expect(stopped).toMatchObject({ status: 'error', error: { type: 'TimeoutError' } });
    expect((await grep({ pattern: 'inside' })).model).toBe('sub/b.txt:1:inside b');
    expect((await grep({ pattern: 'gamma' })).model).toBe('a.txt:3:gamma');
    expect(sourceThread.searchThreadCounts()).toEqual({ live: 1, idle: 1 });
  });

  it('runs concurrent searches in threads of their own, each with its own result', async () => {
    const results = await Promise.all(
      ['alpha', 'beta', 'gamma', 'inside'].map((pattern) => grep({ pattern })),
    );
    expect(results.map((r) => r.model)).toEqual([
      'a.txt:1:alpha',
      'a.txt:2:beta',
      'a.txt:3:gamma',
      'sub/b.txt:1:inside b',
    ]);
    expect(noSearchRunning()).toBe(true);
    // Three new threads load their script from the TypeScript sources: seconds on a busy machine.
  }, 60_000);

  it('returns at most GREP_MAX_MATCHES lines with a note, and cuts long lines', async () => {
    const lines = Array.from({ length: GREP_MAX_MATCHES + 5 }, (_, i) => `match ${i}`);
    await writeFile(join(box.root, 'many.txt'), `${'x'.repeat(2000)} match\n${lines.join('\n')}\n`);
    const result = await grep({ pattern: 'match', path: 'many.txt' });
    const out = result.model.split('\n');
    expect(out).toHaveLength(GREP_MAX_MATCHES + 1);
    expect(out[0]).toBe(`many.txt:1:${'x'.repeat(GREP_MAX_LINE_CHARS)}...`);
    expect(out[1]).toBe('many.txt:2:match 0');
    expect(out[GREP_MAX_MATCHES - 1]).toBe(
      `many.txt:${GREP_MAX_MATCHES}:match ${GREP_MAX_MATCHES - 2}`,
    );
    expect(out[GREP_MAX_MATCHES]).toBe(
      `[... more than ${GREP_MAX_MATCHES} matches; narrow the pattern, path or glob ...]`,
    );
  });

  it('heartbeats with the number of files searched every 200 files', async () => {
    const dir = join(box.root, 'many');
    await mkdir(dir);
    await Promise.all(
      Array.from({ length: 450 }, (_, i) => writeFile(join(dir, `f${i}.txt`), 'hay\n')),
    );
    const context = makeContext([box.root]);
    const result = await runTool(Grep, { pattern: 'needle', path: 'many' }, context);
    expect(result.model).toBe('No matches found');
    expect(context.heartbeats).toEqual([{ filesSearched: 200 }, { filesSearched: 400 }]);
  });
});

describe('Grep built to JavaScript', () => {
  let out: string;
  beforeEach(async () => {
    out = await mkdtemp(join(tmpdir(), 'grep-built-'));
  });
  afterEach(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('starts its thread from grep-worker.js next to grep-thread.js', async () => {
    // The two modules as `tsc` emits them (types erased; grep-thread imports only types).
    const src = new URL('../../../src/tools/builtin/', import.meta.url);
    for (const name of ['grep-thread', 'grep-worker']) {
      const source = await readFile(new URL(`${name}.ts`, src), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          verbatimModuleSyntax: true,
        },
        fileName: `${name}.ts`,
      });
      await writeFile(join(out, `${name}.js`), outputText);
    }
    await writeFile(join(out, 'package.json'), '{"type":"module"}');
    const built = (await import(
      pathToFileURL(join(out, 'grep-thread.js')).href
    )) as typeof sourceThread;
    const outcome = await built.searchInThread(
      {
        dir: box.root,
        files: ['a.txt', 'evil.txt'],
        pattern: 'a$',
        maxMatches: 10,
        maxFileBytes: 1024,
        binarySniffBytes: 8000,
        lineUnits: 1001,
        progressEvery: 200,
      },
      {
        signal: new AbortController().signal,
        timeoutMs: 30_000,
        started: Date.now(),
        heartbeat: () => undefined,
      },
    );
    expect(outcome).toEqual({
      kind: 'done',
      matches: [
        { file: 'a.txt', lineNumber: 1, text: 'alpha' },
        { file: 'a.txt', lineNumber: 2, text: 'beta' },
        { file: 'a.txt', lineNumber: 3, text: 'gamma' },
      ],
      capped: false,
      filesSearched: 2,
    });
  });
});
