// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinRules } from 'eslint/use-at-your-own-risk';

/** Node built-ins and Temporal packages that must never reach the workflow sandbox. */
const nodeOnly = [
  'node:*',
  'fs',
  'fs/*',
  'path',
  'os',
  'child_process',
  'crypto',
  'net',
  'http',
  'https',
  'url',
  'util',
  'events',
  'stream',
  'worker_threads',
  '@temporalio/worker',
  '@temporalio/client',
  '@temporalio/activity',
  '@temporalio/testing',
];

/**
 * The folders are the architecture (STYLE.md): arrows point down only. `above(...names)` is
 * a `no-restricted-imports` pattern refusing relative imports of those folders of `src/` (or
 * of the top-level `activities/` and `workflows/`), from any depth; `npm run check:cycles`
 * refuses folder cycles on top of it.
 */
const above = (message, ...folders) => ({
  regex: `^(\\.\\./)+(src/)?(${folders.join('|')})/`,
  message,
});

/**
 * ESLint's own `max-lines-per-function` under a second name, so one function is warned about
 * past 80 lines and refused past 150 (a rule has one severity per file).
 */
const size = {
  rules: { 'max-lines-per-function': builtinRules.get('max-lines-per-function') },
};
const countedLines = { skipBlankLines: true, skipComments: true };

/** The top floor: clients of the library, which nothing below imports. */
const topFloor = ['cli', 'ui', 'testing', 'codec-server'];

/** The parts between the floor and the definition: each owns its options slice. */
const parts = [
  'temporal',
  'payloads',
  'models',
  'tools',
  'mcp',
  'stream',
  'tracing',
  'server',
  'history',
  'audit',
];

/**
 * Globals that do not exist in Temporal's workflow sandbox (a `vm` context holding the
 * ECMAScript built-ins plus URL, TextEncoder/TextDecoder, AbortController, assert and a
 * replay-aware console) or that it makes throw. `@types/node` declares them all, so only the
 * linter catches a use before a worker fails the workflow task. Left allowed on purpose:
 * `Date`/`Date.now()` (the sandbox returns the workflow task's time) and `Math.random()`
 * (seeded per workflow run), which the SDK makes deterministic; `console` (not repeated on
 * replay).
 */
const sideEffect =
  'A side effect belongs in an activity (activities/), called through workflows/activity-options.ts.';
const noSandboxGlobals = [
  {
    name: 'process',
    message: `Not in the workflow sandbox. Pass configuration in the workflow input; read the environment in an activity or the worker.`,
  },
  {
    name: 'require',
    message:
      'Not in the workflow sandbox: use a static import (of @temporalio/workflow, src/common/ or workflows/).',
  },
  { name: 'module', message: 'Not in the workflow sandbox (ES modules only).' },
  { name: '__dirname', message: 'Not in the workflow sandbox (no file system).' },
  { name: '__filename', message: 'Not in the workflow sandbox (no file system).' },
  {
    name: 'global',
    message: 'Not in the workflow sandbox: use globalThis, and only for ECMAScript built-ins.',
  },
  {
    name: 'Buffer',
    message: 'Not in the workflow sandbox: use Uint8Array with TextEncoder/TextDecoder.',
  },
  { name: 'fetch', message: `Not in the workflow sandbox. ${sideEffect}` },
  {
    name: 'crypto',
    message: 'Not in the workflow sandbox: use uuid4() from @temporalio/workflow for ids.',
  },
  {
    name: 'performance',
    message:
      'Not in the workflow sandbox: Date.now() is the workflow time; measure durations in activities.',
  },
  {
    name: 'setInterval',
    message:
      'Not in the workflow sandbox: loop on sleep() from @temporalio/workflow (a durable timer).',
  },
  {
    name: 'clearInterval',
    message: 'Not in the workflow sandbox: cancel the sleep() loop through a CancellationScope.',
  },
  {
    name: 'setImmediate',
    message: 'Not in the workflow sandbox: await a promise, or sleep() from @temporalio/workflow.',
  },
  { name: 'clearImmediate', message: 'Not in the workflow sandbox.' },
  {
    name: 'queueMicrotask',
    message: 'Not in the workflow sandbox: await a resolved promise instead.',
  },
  {
    name: 'structuredClone',
    message:
      'Not in the workflow sandbox: copy JSON values with JSON.parse(JSON.stringify(v)) or by spreading.',
  },
  {
    name: 'setTimeout',
    message:
      "Use sleep() from @temporalio/workflow (awaitable, cancelled with its CancellationScope), as Temporal advises: the sandbox's setTimeout is a durable timer too, but does not play well with cancellation scopes.",
  },
  {
    name: 'clearTimeout',
    message:
      'Use sleep() from @temporalio/workflow inside a CancellationScope, and cancel the scope.',
  },
  {
    name: 'WeakRef',
    message:
      'Throws DeterminismViolationError in the workflow sandbox (garbage collection is not deterministic).',
  },
  {
    name: 'FinalizationRegistry',
    message:
      'Throws DeterminismViolationError in the workflow sandbox (garbage collection is not deterministic).',
  },
];

/** The folders of examples/ that run on the packed package (tsconfig.json excludes them). */
const scenarioExamples = [
  'two-process-approval',
  'encryption',
  'session-inbox',
  'browser-chat',
  'cluster',
];

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', '.temporal/**', 'test/fixtures/**'] },
  // The scenario folders import the published package, so tsconfig.json leaves them out (no
  // typed lint); scripts/check-examples.ts type-checks each where the packed package is installed.
  { ignores: scenarioExamples.map((folder) => `examples/${folder}/**`) },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Type-aware rules, picked for the bugs they catch here rather than the whole
    // recommendedTypeChecked set: on this tree its no-unsafe-* and no-base-to-string flag
    // the deliberate handling of untrusted `unknown` values, and require-await the async
    // functions kept async for their signature (~250 findings, no fault among them).
    files: ['**/*.ts'],
    languageOptions: {
      // The one tsconfig.json covers every .ts file; `project` types them in one program,
      // about a fifth less CPU here than `projectService`.
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise nobody awaits: its rejection is unhandled (Node exits), or a test's
      // `expect(...).rejects` never runs. Fire-and-forget is written `void p` with a why.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's test()/describe() register the test; awaiting them is optional.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
          ],
        },
      ],
      // An async callback where a void one is expected (an event handler, forEach): its
      // rejection escapes every try/catch. And a promise in a condition is always truthy.
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // `return promise` inside try/catch/finally skips the catch and runs the finally
      // before the promise settles.
      '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
      // A new HookEvent, status or stop reason must reach every switch over it.
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/no-deprecated': 'error',
      '@typescript-eslint/no-implied-eval': 'error',
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/no-array-delete': 'error',
      '@typescript-eslint/no-misused-spread': 'error',
      // '[object Object]' in an error message hides what was wrong.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allow: [
            { from: 'lib', name: ['Error', 'URL', 'URLSearchParams'] },
            { from: 'package', package: 'long', name: 'Long' },
          ],
        },
      ],
    },
  },
  {
    // One concept per file (STYLE.md): a file over 500 code lines is refused; a function is
    // warned about past 80 and refused past 150 (a closure factory that grows past that
    // becomes module functions over a context record). Blank lines and comments not counted.
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'],
    plugins: { size },
    rules: {
      'max-lines': ['error', { max: 500, ...countedLines }],
      'max-lines-per-function': ['warn', { max: 80, ...countedLines, IIFEs: true }],
      'size/max-lines-per-function': ['error', { max: 150, ...countedLines, IIFEs: true }],
    },
  },
  {
    // Shipped code throws and rejects with Errors (tests throw other values on purpose, to
    // check how they are reported). A caught `unknown` may be rethrown as it is.
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'],
    rules: {
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/prefer-promise-reject-errors': 'error',
    },
  },
  {
    // Both run inside the workflow sandbox (src/common/ is bundled with workflows/).
    files: ['workflows/**/*.ts', 'src/common/**/*.ts'],
    rules: {
      'no-restricted-globals': ['error', ...noSandboxGlobals],
    },
  },
  {
    // The sandbox boundary: workflow code imports only @temporalio/workflow, workflow-safe
    // shared code, its own files, and *types* from activities/. (Top-level files here; the
    // block after it says the same for workflows/handlers/, prompt/ and session/.)
    files: ['workflows/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/workflow$|\\./|\\.\\./src/common/|\\.\\./activities/)',
              message:
                'workflows/ may import only @temporalio/workflow, src/common/ and its own files (sandbox boundary).',
            },
            {
              regex: '^\\.\\./activities/',
              allowTypeImports: true,
              message: 'workflows/ may import only types from activities/.',
            },
          ],
        },
      ],
    },
  },
  // Inside workflows/: handlers/ (an Update or query each) run prompts; a prompt's run
  // (prompt/) uses the run's state and helpers (session/); session/ names the prompt's state
  // type only (SessionState extends PromptState) and calls into neither.
  ...[
    ['handlers', []],
    [
      'prompt',
      [{ regex: '^\\.\\./handlers/', message: 'workflows/prompt/ sits below handlers/.' }],
    ],
    [
      'session',
      [
        { regex: '^\\.\\./handlers/', message: 'workflows/session/ sits below handlers/.' },
        {
          regex: '^\\.\\./prompt/',
          allowTypeImports: true,
          message: 'workflows/session/ may import only types from prompt/ (it sits below it).',
        },
      ],
    ],
  ].map(([folder, below]) => ({
    files: [`workflows/${folder}/**/*.ts`],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // The sandbox boundary, from one folder down: `../` stays in workflows/.
              regex:
                '^(?!@temporalio/workflow$|\\./|\\.\\./(?!\\.\\.)|\\.\\./\\.\\./src/common/|\\.\\./\\.\\./activities/)',
              message:
                'workflows/ may import only @temporalio/workflow, src/common/ and its own files (sandbox boundary).',
            },
            {
              regex: '^\\.\\./\\.\\./activities/',
              allowTypeImports: true,
              message: 'workflows/ may import only types from activities/.',
            },
            ...below,
          ],
        },
      ],
    },
  })),
  {
    files: ['src/common/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: nodeOnly,
              allowTypeImports: true,
              message: 'src/common/ is workflow-safe: no Node APIs, no worker/client code.',
            },
            {
              regex: '^\\.\\./',
              allowTypeImports: true,
              message: 'src/common/ imports only src/common/ (types excepted).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@temporalio/workflow', message: 'activities/ never import workflow code.' },
          ],
          patterns: [
            above(
              'activities/ run below the client and the worker: they take what they need from src/definition/ and the parts (the worker builds them).',
              'agent',
              'client',
              'worker',
              'workflows',
              ...topFloor,
            ),
          ],
        },
      ],
    },
  },
  {
    files: parts.map((part) => `src/${part}/**/*.ts`),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            above(
              'A part (src/temporal/, src/payloads/, ...) owns its options slice and imports only src/common/ and other parts: the agent definition, the client, the worker and what is built on them sit above it.',
              'definition',
              'agent',
              'client',
              'worker',
              'activities',
              'workflows',
              ...topFloor,
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/definition/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            above(
              'src/definition/ (what an agent is) sits below the client, the worker and the activities.',
              'agent',
              'client',
              'worker',
              'activities',
              'workflows',
              ...topFloor,
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/client/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            above(
              'src/client/ starts and attaches to sessions and runs no hooks: it never imports the worker, the activities or the assembly (src/agent/).',
              'agent',
              'worker',
              'activities',
              'workflows',
              ...topFloor,
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/worker/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            above(
              'src/worker/ runs sessions: it never imports the client or the assembly (src/agent/).',
              'agent',
              'client',
              ...topFloor,
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/agent/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            above(
              'src/agent/ assembles the worker, the client and a server; the top floor builds on it.',
              ...topFloor,
            ),
          ],
        },
      ],
    },
  },
);
