// Lint: TypeScript rules everywhere, the layer rule (docs/architecture.md, "Layers"), and the
// determinism rules for code bundled into workflows.
import js from '@eslint/js';
import globals from 'globals';
import importPlugin from 'eslint-plugin-import';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeModules = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Top-level folders, low to high. A folder imports its own layer's folders only where SIBLINGS says
// so, and lower layers freely; nothing imports a higher layer. test/ may import anything and only
// test/ imports test/.
const LAYERS = [
  ['core', 'config'],
  ['db', 'engine'],
  ['activities', 'workflows'],
  ['worker', 'api', 'infra'],
  ['dev'],
  ['cli'],
  ['scripts', 'bench', 'bin'],
];
const SIBLINGS = {
  db: ['engine'], // the piece hash the job row stores (engine/piece/piece-hash.ts)
  workflows: ['activities'], // `typeof activities` for proxyActivities; types only (the workflow rule below)
  infra: ['api', 'worker'], // the one-process stack composes them
};
const layerZones = LAYERS.flatMap((layer, i) =>
  layer.map((folder) => {
    const higher = LAYERS.slice(i + 1).flat();
    const siblings = layer.filter((f) => f !== folder && !(SIBLINGS[folder] ?? []).includes(f));
    const allowed = [...LAYERS.slice(0, i).flat(), ...(SIBLINGS[folder] ?? [])];
    return {
      target: `./${folder}`,
      from: [...higher, ...siblings, 'test'].map((f) => `./${f}`),
      message: `${folder}/ may import its own files${allowed.length ? ` and ${allowed.map((f) => `${f}/`).join(', ')}` : ''}, nothing else (layers: docs/architecture.md).`,
    };
  }),
);

export default tseslint.config(
  { ignores: ['node_modules/**', '.maestro/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    plugins: { import: importPlugin },
    // The TypeScript resolver maps the `.js` specifiers of ESM TypeScript to their `.ts` files; an
    // import it cannot resolve is not checked by no-restricted-paths.
    settings: { 'import/resolver': { typescript: { project: './tsconfig.json' }, node: true } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import/no-restricted-paths': ['error', { zones: layerZones }],
    },
  },
  {
    // Type-aware rules: a promise nobody awaits loses its rejection (and its ordering).
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test runs and reports these itself; their promises are not the caller's to await.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] },
      ],
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
