// Lint: TypeScript rules everywhere, and the determinism rules for code bundled into workflows.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeModules = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', '.maestro/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox and is replayed: no Node built-ins,
    // no I/O libraries, no process state. Only @temporalio/workflow, @temporalio/common and pure modules.
    files: ['workflows/**/*.ts', 'core/**/*.ts'],
    languageOptions: { globals: { ...globals['shared-node-browser'] } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeModules.map((name) => ({ name, message: 'Workflow code must not import Node modules.' })),
          patterns: [
            {
              regex: '^(?!@temporalio/(workflow|common)$|\\.{1,2}/)',
              message: 'Workflow code may import only @temporalio/workflow, @temporalio/common and relative pure modules.',
            },
            {
              regex: '^\\.\\./(db|api|infra|cli|worker|engine|config|activities)/',
              allowTypeImports: true,
              message: 'Workflow code may import only types from non-workflow folders.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No process state in workflow code.' },
        { name: 'require', message: 'No dynamic loading in workflow code.' },
      ],
    },
  },
);
