#!/usr/bin/env node
// Launcher: registers tsx so the TypeScript sources run as they are (no build step),
// then hands over to the commander-based CLI.
import { register } from 'tsx/esm/api';

register();
await import('../cli/maestro.ts');
