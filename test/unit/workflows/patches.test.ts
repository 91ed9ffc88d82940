/**
 * `workflows/patches.ts` against the code: every `patched(`/`deprecatePatch(` call in
 * workflows/ names a row of `WORKFLOW_PATCHES` at its stage, every row is called, and every
 * row's fixture exists. The check is a pure function, tested first on sources made up here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { WORKFLOW_PATCHES, type WorkflowPatch } from '../../../workflows/patches.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const histories = join(root, 'test', 'fixtures', 'histories');

/** A source file: its path (for messages) and text. */
interface Source {
  path: string;
  text: string;
}

const PATCH_FUNCTIONS = new Set(['patched', 'deprecatePatch']);

/**
 * The uses of Temporal's patch functions in `text` (comments and strings are not uses): each
 * direct call `patched('id')` with its id, and any other use (`wf.patched(...)`, a call with an
 * id the test cannot read, `const p = patched`) with `id` undefined, so it is refused.
 */
function patchCalls(path: string, text: string) {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const calls: { fn: string; id?: string; line: number }[] = [];
  const lineOf = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const visit = (node: ts.Node): void => {
    const name = ts.isIdentifier(node) ? node.text : undefined;
    if (name !== undefined && PATCH_FUNCTIONS.has(name) && !inImport(node)) {
      const parent = node.parent;
      const call =
        ts.isCallExpression(parent) && parent.expression === node ? parent.arguments[0] : null;
      const qualified = ts.isPropertyAccessExpression(parent) && parent.name === node;
      const callee = qualified && ts.isCallExpression(parent.parent) ? parent.parent : undefined;
      calls.push({
        fn: name,
        id:
          call && ts.isStringLiteralLike(call) && callee === undefined && !qualified
            ? call.text
            : undefined,
        line: lineOf(node),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return calls;
}

/** Whether `node` is a name in an import declaration (importing is not using). */
function inImport(node: ts.Node): boolean {
  for (let n: ts.Node | undefined = node; n; n = n.parent) {
    if (ts.isImportDeclaration(n)) return true;
  }
  return false;
}

/**
 * What is wrong between `sources` and `table`, one line each (none: they agree).
 * @param fixtureExists whether a fixture file of that name exists.
 */
function patchProblems(
  sources: readonly Source[],
  table: readonly WorkflowPatch[],
  fixtureExists: (name: string) => boolean,
): string[] {
  const problems: string[] = [];
  const called = new Map<string, { stage: WorkflowPatch['stage']; where: string }>();
  for (const { path, text } of sources) {
    if (/\b(patched|deprecatePatch)\s+as\s+\w/.test(text)) {
      problems.push(`${path}: imports a patch function under another name`);
    }
    for (const { fn, id, line } of patchCalls(path, text)) {
      const where = `${path}:${line}`;
      if (id === undefined) {
        problems.push(`${where}: ${fn}() must be called by name with its id as a string literal`);
        continue;
      }
      const stage = fn === 'patched' ? 'patched' : 'deprecated';
      const before = called.get(id);
      if (before && before.stage !== stage) {
        problems.push(`${where}: '${id}' is both patched and deprecated (${before.where})`);
      }
      called.set(id, { stage, where });
    }
  }
  const ids = new Set<string>();
  for (const row of table) {
    if (ids.has(row.id)) problems.push(`table: '${row.id}' is listed twice`);
    ids.add(row.id);
    const call = called.get(row.id);
    if (!call) problems.push(`table: '${row.id}' is listed but no workflow code calls it`);
    else if (call.stage !== row.stage) {
      problems.push(
        `${call.where}: '${row.id}' is called as ${call.stage}, listed as ${row.stage}`,
      );
    }
    if (!/^\d+\.\d+\.\d+$/.test(row.since)) {
      problems.push(`table: '${row.id}' since '${row.since}' is not a release (x.y.z)`);
    }
    if (row.why.trim().length === 0) problems.push(`table: '${row.id}' says no why`);
    if (!fixtureExists(row.fixture)) {
      problems.push(`table: '${row.id}' fixture '${row.fixture}' does not exist`);
    }
  }
  for (const [id, { where }] of called) {
    if (!ids.has(id)) problems.push(`${where}: '${id}' is not in workflows/patches.ts`);
  }
  return problems;
}

/** The TypeScript files under `dir`, recursively. */
function sourcesUnder(dir: string): Source[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
    .map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }));
}

const row = (overrides: Partial<WorkflowPatch> = {}): WorkflowPatch => ({
  id: 'send-lean',
  since: '0.2.0',
  stage: 'patched',
  why: 'sends answer a microtask sooner',
  fixture: 'queued-sends.json',
  ...overrides,
});
const exists = (name: string) => name === 'queued-sends.json';

describe('patchProblems', () => {
  it('accepts a call listed at its stage with an existing fixture', () => {
    const code = {
      path: 'w.ts',
      text: "if (patched('send-lean')) {}\nif (patched('send-lean')) {}",
    };
    expect(patchProblems([code], [row()], exists)).toEqual([]);
  });

  it('names a call the table does not list, and a row no code calls', () => {
    const code = { path: 'w.ts', text: "const lean = patched('other');" };
    expect(patchProblems([code], [row()], exists)).toEqual([
      "table: 'send-lean' is listed but no workflow code calls it",
      "w.ts:1: 'other' is not in workflows/patches.ts",
    ]);
  });

  it('names a deprecated call listed as patched, and a call that mixes both', () => {
    const code = {
      path: 'w.ts',
      text: "patched('send-lean');\ndeprecatePatch('send-lean');",
    };
    expect(patchProblems([code], [row()], exists)).toEqual([
      "w.ts:2: 'send-lean' is both patched and deprecated (w.ts:1)",
      "w.ts:2: 'send-lean' is called as deprecated, listed as patched",
    ]);
  });

  it('refuses an id it cannot read, a renamed import, a namespace call and an alias', () => {
    const code = {
      path: 'w.ts',
      text: [
        "import { patched as p } from '@temporalio/workflow';",
        'patched(PATCH_ID);',
        "wf.patched('send-lean');",
        'const lean = deprecatePatch;',
      ].join('\n'),
    };
    expect(patchProblems([code], [], exists)).toEqual([
      'w.ts: imports a patch function under another name',
      'w.ts:2: patched() must be called by name with its id as a string literal',
      'w.ts:3: patched() must be called by name with its id as a string literal',
      'w.ts:4: deprecatePatch() must be called by name with its id as a string literal',
    ]);
  });

  it('names a missing fixture, a since that is not a release, an empty why, a repeated row', () => {
    const code = { path: 'w.ts', text: "patched('send-lean')" };
    const bad = row({ since: 'next', why: ' ', fixture: 'gone.json' });
    expect(patchProblems([code], [bad, row()], exists)).toEqual([
      "table: 'send-lean' since 'next' is not a release (x.y.z)",
      "table: 'send-lean' says no why",
      "table: 'send-lean' fixture 'gone.json' does not exist",
      "table: 'send-lean' is listed twice",
    ]);
  });
});

describe('workflows/patches.ts', () => {
  it('lists exactly the patches the workflow code calls, each with its fixture', () => {
    // Everything bundled into the workflow sandbox: workflows/, src/common/ and the tracing
    // interceptors.
    const sources = [
      ...sourcesUnder(join(root, 'workflows')),
      ...sourcesUnder(join(root, 'src', 'common')),
      ...sourcesUnder(join(root, 'src', 'tracing')),
    ];
    expect(sources.map((s) => s.path)).toContain(join('workflows', 'session-workflow.ts'));
    const problems = patchProblems(sources, WORKFLOW_PATCHES, (name) =>
      existsSync(join(histories, name)),
    );
    expect(problems).toEqual([]);
  });
});
