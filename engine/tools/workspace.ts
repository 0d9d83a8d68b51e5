// The one resolver behind every file a tool (or the engine, on a workspace's behalf) touches.
// The model sees paths relative to the job's workspace. A path is used only if the file it OPENS is
// inside the workspace once every symbolic link is resolved, and that is decided at open time on the
// open descriptor (safe-fs.ts), never by looking at the path first: a link swapped between a check
// and an open cannot lead out. Refusals are errors whose messages the model can act on.
import { constants as C, realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  describeType,
  errCode,
  fdRealPath,
  isInside,
  O_PATH,
  openVerified,
  procFd,
  RDWR_FLAGS,
  READ_FLAGS,
  readUpTo,
  reopen,
  walkFiles,
  WorkspaceFileError,
  type WalkOptions,
} from './safe-fs.js';

export { WorkspaceFileError } from './safe-fs.js';
export { LIST_DIR_CAP, listDir } from './workspace-listing.js';

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
const LINK_OUT = ' (a symbolic link on the way points outside it)';
/** Kernel views of the worker itself: never a workspace, whatever trick leads there. */
const SYSTEM_VIEW = /^\/(proc|sys|dev)(\/|$)/;

/** An open, verified regular file: `abs` is its real path inside the workspace, `rel` what the model sees. */
export interface OpenFile {
  fh: fs.FileHandle;
  abs: string;
  rel: string;
  size: number;
}

/** A verified O_PATH descriptor of a directory inside the workspace (no I/O; stands in for openat). */
export interface OpenDir {
  fh: fs.FileHandle;
  abs: string;
  rel: string;
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

  /** The workspace's real path (a sandbox binds exactly this). */
  realRoot(): Promise<string> {
    // Root may sit under a symlinked tmp dir (macOS /var -> /private/var); compare against its real path.
    this.#realRoot ??= fs.realpath(this.#given).catch((err: unknown) => {
      this.#realRoot = undefined;
      throw new Error(`job workspace ${this.#given} is not accessible`, { cause: err });
    });
    return this.#realRoot;
  }

  /** The requested path made absolute under the real root, without touching the filesystem. */
  async #lexical(p: string): Promise<{ realRoot: string; abs: string }> {
    if (p.includes('\0')) throw new WorkspaceViolationError(p.replaceAll('\0', '\\0'), ' (it contains a NUL byte)');
    const realRoot = await this.realRoot();
    const requested = p.trim() === '' ? '.' : p;
    let abs: string;
    if (path.isAbsolute(requested)) {
      abs = path.resolve(requested);
      // Absolute paths through the root as it was given (not realpath'd) are inside too.
      if (!isInside(realRoot, abs) && isInside(this.#given, abs)) abs = path.join(realRoot, path.relative(this.#given, abs));
      if (!isInside(realRoot, abs) && SYSTEM_VIEW.test(abs)) {
        throw new WorkspaceViolationError(p, ' (/proc, /sys and /dev are never reachable from a file tool)');
      }
    } else {
      abs = path.resolve(realRoot, requested);
    }
    if (!isInside(realRoot, abs)) throw new WorkspaceViolationError(p);
    return { realRoot, abs };
  }

  /**
   * Absolute real path of `p` inside the workspace; the file need not exist yet. A string answer for
   * messages and for a process's working directory: whoever opens files uses the open* methods.
   */
  async resolve(p: string): Promise<string> {
    const { realRoot, abs } = await this.#lexical(p);
    return this.#follow(realRoot, abs, p, 0);
  }

  /** Walks `abs` component by component from the root, following symlinks and checking each hop. */
  async #follow(realRoot: string, abs: string, requested: string, hops: number): Promise<string> {
    if (!isInside(realRoot, abs)) throw new WorkspaceViolationError(requested, hops > 0 ? LINK_OUT : '');
    if (hops > MAX_LINK_HOPS) throw new WorkspaceFileError('link_loop', `too many levels of symbolic links resolving "${requested}"`);
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
      // One hop at a time, so dangling links (a later write would create their target) are checked too.
      const target = path.resolve(cur, await fs.readlink(next));
      const rest = parts.slice(i + 1);
      return this.#follow(realRoot, rest.length ? path.join(target, ...rest) : target, requested, hops + 1);
    }
    return cur;
  }

  /** Turns an open(2) failure into the refusal the model should see. */
  async #openFailure(p: string, abs: string, err: unknown, what: 'file' | 'directory'): Promise<never> {
    const code = errCode(err);
    const rel = this.relative(abs);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      await this.resolve(p); // a dangling link out is refused as outside, not reported as missing
      if (code === 'ENOTDIR' && what === 'directory') {
        throw new WorkspaceFileError('not_a_directory', `${rel} is a file, not a directory`, { cause: err });
      }
      throw new WorkspaceFileError('not_found', `${what === 'file' ? 'file' : 'directory'} not found: ${rel}`, { cause: err });
    }
    if (code === 'ELOOP') throw new WorkspaceFileError('link_loop', `too many levels of symbolic links resolving "${p}"`, { cause: err });
    if (code === 'EACCES' || code === 'EPERM') throw new WorkspaceFileError('denied', `permission denied: ${rel}`, { cause: err });
    throw err;
  }

  #checkInside(realRoot: string, real: string, p: string): void {
    if (!isInside(realRoot, real)) throw new WorkspaceViolationError(p, LINK_OUT);
  }

  /** Opens an existing regular file for reading. FIFOs, sockets, devices and directories are refused. */
  async openFile(p: string): Promise<OpenFile> {
    const { realRoot, abs } = await this.#lexical(p);
    const pathFh = await fs.open(abs, O_PATH).catch((err: unknown) => this.#openFailure(p, abs, err, 'file'));
    try {
      const st = await pathFh.stat();
      const real = await fdRealPath(pathFh);
      this.#checkInside(realRoot, real, p);
      this.#checkRegular(st, this.relative(real));
      return { fh: await reopen(pathFh, st, READ_FLAGS), abs: real, rel: this.relative(real), size: st.size };
    } finally {
      await pathFh.close();
    }
  }

  #checkRegular(st: import('node:fs').Stats, rel: string): void {
    if (st.isDirectory()) throw new WorkspaceFileError('is_directory', `${rel} is a directory; use Glob to list its files, or give a file path.`);
    if (!st.isFile()) throw new WorkspaceFileError('not_regular', `${rel} is ${describeType(st)}, not a regular file; file tools only open regular files.`);
  }

  /**
   * Opens a regular file for writing, never truncating it. With `create`, a missing file is created
   * (O_EXCL, inside a verified parent directory) and missing parent directories are made, one at a
   * time relative to verified descriptors. A symlink at the last component is followed by hand, one
   * verified hop at a time. `append` opens with O_APPEND.
   */
  async openFileForWrite(p: string, opts: { create: boolean; append?: boolean }): Promise<OpenFile & { created: boolean }> {
    const lexical = await this.#lexical(p);
    const realRoot = lexical.realRoot;
    let abs = lexical.abs;
    const flags = opts.append ? C.O_WRONLY | C.O_APPEND | C.O_NONBLOCK | C.O_NOCTTY : RDWR_FLAGS;
    for (let hop = 0; hop <= MAX_LINK_HOPS; hop++) {
      if (abs === realRoot) throw new WorkspaceFileError('is_directory', `${p} is the workspace directory; give a file path.`);
      const parent = await this.#dirAt(path.dirname(abs), p, opts.create).catch((err: unknown) => {
        if (err instanceof WorkspaceFileError && err.kind === 'not_found') {
          throw new WorkspaceFileError('not_found', `file not found: ${this.relative(abs)}`, { cause: err });
        }
        throw err;
      });
      try {
        const leaf = path.basename(abs);
        const leafPath = procFd(parent.fh, leaf);
        const leafFh = await fs.open(leafPath, O_PATH | C.O_NOFOLLOW).catch((err: unknown) => {
          if (errCode(err) === 'ENOENT') return null;
          return this.#openFailure(p, abs, err, 'file');
        });
        if (leafFh === null) {
          if (!opts.create) throw new WorkspaceFileError('not_found', `file not found: ${this.relative(abs)}`);
          const made = await this.#create(leafPath, flags, realRoot, p);
          if (made === null) continue; // something appeared there meanwhile: look again
          return { ...made, rel: this.relative(made.abs), size: 0, created: true };
        }
        try {
          const st = await leafFh.stat();
          if (st.isSymbolicLink()) {
            const next = path.resolve(parent.abs, await fs.readlink(leafPath));
            this.#checkInside(realRoot, next, p);
            abs = next;
            continue;
          }
          const real = await fdRealPath(leafFh);
          this.#checkInside(realRoot, real, p);
          this.#checkRegular(st, this.relative(real));
          return { fh: await reopen(leafFh, st, flags), abs: real, rel: this.relative(real), size: st.size, created: false };
        } finally {
          await leafFh.close();
        }
      } finally {
        await parent.fh.close();
      }
    }
    throw new WorkspaceFileError('link_loop', `too many levels of symbolic links resolving "${p}"`);
  }

  /** Creates `leafPath` exclusively; a file that turns out to lie outside is removed again. */
  async #create(leafPath: string, flags: number, realRoot: string, p: string): Promise<{ fh: fs.FileHandle; abs: string } | null> {
    let fh: fs.FileHandle;
    try {
      fh = await fs.open(leafPath, flags | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o666);
    } catch (err) {
      if (errCode(err) === 'EEXIST') return null;
      throw err;
    }
    const real = await fdRealPath(fh).catch(() => '');
    if (!isInside(realRoot, real) || !(await fh.stat()).isFile()) {
      await fh.close();
      await fs.unlink(leafPath).catch(() => undefined); // O_EXCL: we made it, so it is ours to remove
      throw new WorkspaceViolationError(p, LINK_OUT);
    }
    return { fh, abs: real };
  }

  /** A verified directory descriptor; with `create`, missing directories are made below the root. */
  async #dirAt(abs: string, p: string, create: boolean): Promise<OpenDir> {
    const realRoot = await this.realRoot();
    try {
      return await this.#verifiedDir(abs, realRoot, p);
    } catch (err) {
      if (!create || errCode(err) !== 'ENOENT') return this.#openFailure(p, abs, err, 'directory');
    }
    let cur = await this.#verifiedDir(realRoot, realRoot, p);
    try {
      for (const part of path.relative(realRoot, abs).split(path.sep).filter(Boolean)) {
        const next = procFd(cur.fh, part);
        await fs.mkdir(next).catch((err: unknown) => {
          if (errCode(err) !== 'EEXIST') throw err;
        });
        const child = await this.#verifiedDir(next, realRoot, p).catch((err: unknown) => this.#openFailure(p, abs, err, 'directory'));
        await cur.fh.close();
        cur = child;
      }
      return cur;
    } catch (err) {
      await cur.fh.close();
      throw err;
    }
  }

  async #verifiedDir(p: string, realRoot: string, requested: string): Promise<OpenDir> {
    const { fh, info } = await openVerified(p, O_PATH | C.O_DIRECTORY, async (h) => {
      const real = await fdRealPath(h);
      this.#checkInside(realRoot, real, requested);
      return real;
    });
    return { fh, abs: info, rel: this.relative(info) };
  }

  /** A verified directory inside the workspace (the caller closes `fh`). */
  async openDir(p: string): Promise<OpenDir> {
    const { abs } = await this.#lexical(p);
    return this.#dirAt(abs, p, false);
  }

  /** Text of a regular file of at most maxBytes. */
  async readText(p: string, maxBytes: number): Promise<string> {
    const f = await this.openFile(p);
    try {
      if (f.size > maxBytes) throw new WorkspaceFileError('too_large', `${f.rel} is ${f.size} bytes, over the ${maxBytes}-byte limit`);
      return (await readUpTo(f.fh, f.size)).toString('utf8');
    } finally {
      await f.fh.close();
    }
  }

  /** Appends to a file, creating it (and its directories) inside the workspace. */
  async appendText(p: string, text: string): Promise<void> {
    const f = await this.openFileForWrite(p, { create: true, append: true });
    try {
      await f.fh.appendFile(text, 'utf8');
    } finally {
      await f.fh.close();
    }
  }

  /** Regular files under directory `p`, workspace-relative, never through a symlink. */
  async listFiles(p: string, opts: WalkOptions): Promise<{ files: string[]; complete: boolean }> {
    const dir = await this.openDir(p);
    try {
      const { files, complete } = await walkFiles(dir.fh, opts);
      return { files: files.map((f) => (dir.rel === '.' ? f : `${dir.rel}/${f}`)), complete };
    } finally {
      await dir.fh.close();
    }
  }

  /** Path relative to the workspace root ('.' for the root itself), for messages to the model. */
  relative(abs: string): string {
    const base = isInside(this.root, abs) ? this.root : this.#given;
    return path.relative(base, abs) || '.';
  }
}

/** The folders every workspace has: input/ (given files), output/ (deliverables), logs/. */
export const WORKSPACE_LAYOUT = ['input', 'output', 'logs'] as const;

/** Creates the workspace layout a job expects (new workspaces: createWorkspaceBeneath). */
export async function prepareWorkspace(dir: string): Promise<Workspace> {
  const root = path.resolve(dir);
  await fs.mkdir(root, { recursive: true });
  await Promise.all(WORKSPACE_LAYOUT.map((d) => fs.mkdir(path.join(root, d), { recursive: true })));
  return new Workspace(root);
}

/** The error result for a refused path, or null when `err` is something else. */
export function refusal(err: unknown): { isError: true; content: string } | null {
  if (err instanceof WorkspaceViolationError || err instanceof WorkspaceFileError) return { isError: true, content: err.message };
  return null;
}
