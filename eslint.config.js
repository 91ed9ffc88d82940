// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.temporal/**', 'test/fixtures/**'] },
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
    // The sandbox boundary: workflow code imports only @temporalio/workflow, workflow-safe
    // shared code, its own files, and *types* from activities/.
    files: ['workflows/**/*.ts'],
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
        },
      ],
    },
  },
);
