// Confines every path a tool touches to the job's workspace directory.
// The model sees paths relative to the workspace; anything that would leave it (.., absolute paths
// elsewhere, symbolic links pointing out, even dangling ones a later write would follow) is refused
// with a message the model can act on.
import { realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';

export class WorkspaceViolationError extends Error {
  override name = 'WorkspaceViolationError';
  constructor(
    readonly requestedPath: string,
    detail = '',
    options?: { cause?: unknown },
  ) {
    super(`path "${requestedPath}" is outside the job workspace${detail}; use paths relative to the workspace`, options);
  }
}

/** Symlink chains longer than this are treated like the kernel treats them (ELOOP). */
const MAX_LINK_HOPS = 40;

function isInside(root: string, p: string): boolean {
  if (p === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return p.startsWith(prefix);
}

function errCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

export class Workspace {
  /** The workspace directory, realpath'd when it exists at construction time. */
  readonly root: string;
  #given: string;
  #realRoot: Promise<string> | undefined;

  constructor(root: string) {
    this.#given = path.resolve(root);
    let real: string | undefined;
    try {
      real = realpathSync(this.#given);
    } catch {
      real = undefined; // not created yet: realpath lazily on first resolve
    }
    this.root = real ?? this.#given;
    if (real !== undefined) this.#realRoot = Promise.resolve(real);
  }

  #real(): Promise<string> {
    // Root may sit under a symlinked tmp dir (macOS /var -> /private/var); compare against its real path.
    this.#realRoot ??= fs.realpath(this.#given).catch((err: unknown) => {
      this.#realRoot = undefined;
      throw new Error(`job workspace ${this.#given} is not accessible`, { cause: err });
    });
    return this.#realRoot;
  }

  /** Absolute real path of `p` inside the workspace; the file need not exist yet. */
  async resolve(p: string): Promise<string> {
    if (p.includes('\0')) throw new WorkspaceViolationError(p.replaceAll('\0', '\\0'), ' (it contains a NUL byte)');
    const realRoot = await this.#real();
    const requested = p.trim() === '' ? '.' : p;
    let abs: string;
    if (path.isAbsolute(requested)) {
      abs = path.resolve(requested);
      // Absolute paths through the root as it was given (not realpath'd) are inside too.
      if (!isInside(realRoot, abs) && isInside(this.#given, abs)) abs = path.join(realRoot, path.relative(this.#given, abs));
    } else {
      abs = path.resolve(realRoot, requested);
    }
    return this.#follow(realRoot, abs, p, 0);
  }

  /** Walks `abs` component by component from the root, following symlinks and checking each hop. */
  async #follow(realRoot: string, abs: string, requested: string, hops: number): Promise<string> {
    if (!isInside(realRoot, abs)) {
      throw new WorkspaceViolationError(requested, hops > 0 ? ' (a symbolic link on the way points outside it)' : '');
    }
    if (hops > MAX_LINK_HOPS) throw new Error(`too many levels of symbolic links resolving "${requested}"`);
    const parts = path.relative(realRoot, abs).split(path.sep).filter((s) => s !== '');
    let cur = realRoot;
    for (let i = 0; i < parts.length; i++) {
      const next = path.join(cur, parts[i]);
      let isLink: boolean;
      try {
        isLink = (await fs.lstat(next)).isSymbolicLink();
      } catch (err) {
        const code = errCode(err);
        // The deepest existing ancestor is `cur` (already real and inside): the rest is created later.
        if (code === 'ENOENT' || code === 'ENOTDIR') return path.join(cur, ...parts.slice(i));
        throw err;
      }
      if (!isLink) {
        cur = next;
        continue;
      }
      // Follow the link one hop at a time so dangling links (a later write would create their
      // target) are checked as strictly as live ones.
      const target = path.resolve(cur, await fs.readlink(next));
      const rest = parts.slice(i + 1);
      return this.#follow(realRoot, rest.length ? path.join(target, ...rest) : target, requested, hops + 1);
    }
    return cur;
  }

  /** Path relative to the workspace root ('.' for the root itself), for messages to the model. */
  relative(abs: string): string {
    const base = isInside(this.root, abs) ? this.root : this.#given;
    return path.relative(base, abs) || '.';
  }
}

/** Creates the workspace layout a job expects: input/ (given files), output/ (deliverables), logs/. */
export async function prepareWorkspace(dir: string): Promise<Workspace> {
  const root = path.resolve(dir);
  await fs.mkdir(root, { recursive: true });
  await Promise.all(['input', 'output', 'logs'].map((d) => fs.mkdir(path.join(root, d), { recursive: true })));
  return new Workspace(root);
}

export const LIST_DIR_CAP = 200;

/**
 * Files under input/ or output/, as paths relative to the workspace (e.g. "input/a.txt"), sorted.
 * Capped at LIST_DIR_CAP entries plus a final "... N more" line so a huge tree cannot flood the prompt.
 */
export async function listDir(ws: Workspace, sub: 'input' | 'output'): Promise<string[]> {
  const dir = await ws.resolve(sub);
  try {
    if (!(await fs.stat(dir)).isDirectory()) return [];
  } catch {
    return [];
  }
  const files = await glob('**/*', { cwd: dir, dot: true, onlyFiles: true, followSymbolicLinks: false, expandDirectories: false });
  const rel = files.map((f) => `${sub}/${f}`).sort();
  if (rel.length <= LIST_DIR_CAP) return rel;
  return [...rel.slice(0, LIST_DIR_CAP), `... ${rel.length - LIST_DIR_CAP} more`];
}
