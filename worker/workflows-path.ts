// Where the workflow sources live, for the bundler (kept apart so importing it loads nothing else).
import { fileURLToPath } from 'node:url';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
