// Open-then-verify primitives behind Workspace. A path string says nothing about what open(2) will
// reach a moment later (a symlink can be swapped in between), so nothing here checks a path and
// then opens it: it opens first, then asks the kernel what the descriptor really is (fstat) and
// where it really lives (readlink /proc/self/fd/N), and then does all I/O through that descriptor.
//
// Descriptors are first taken with O_PATH, which performs no I/O on the target: a symlink to a FIFO,
// a device or a socket outside is never really opened, so it cannot block or have side effects.
// A verified O_PATH descriptor of a directory then stands in for openat(2), which Node lacks:
// `/proc/self/fd/<dirfd>/<name>` names <name> inside exactly that directory inode, whatever its
// path has become since.
import { constants as C, type Dirent, type Stats } from 'node:fs';
import fs from 'node:fs/promises';

/** Linux O_PATH (not exported by Node). */
export const O_PATH = 0o10000000;
const O_NONBLOCK = C.O_NONBLOCK;
const O_NOCTTY = C.O_NOCTTY;
export const READ_FLAGS = C.O_RDONLY | O_NONBLOCK | O_NOCTTY;
export const RDWR_FLAGS = C.O_RDWR | O_NONBLOCK | O_NOCTTY;

export type FileRefusal = 'not_found' | 'is_directory' | 'not_a_directory' | 'not_regular' | 'too_large' | 'link_loop' | 'denied';

/** A workspace path that exists (or not) but cannot be used as asked; the message says what to do. */
export class WorkspaceFileError extends Error {
  override name = 'WorkspaceFileError';
  constructor(
    readonly kind: FileRefusal,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function errCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

/** The one containment check (config/path-roots.ts), under the name the file tools use. */
export { isInsideOrEqual as isInside } from '../../config/path-roots.js';

export function procFd(fh: fs.FileHandle, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fh.fd}` : `/proc/self/fd/${fh.fd}/${name}`;
}

/** Where the kernel says an open descriptor lives. A file removed since shows as "<path> (deleted)". */
export async function fdRealPath(fh: fs.FileHandle): Promise<string> {
  const p = await fs.readlink(procFd(fh));
  return p.endsWith(' (deleted)') ? p.slice(0, -' (deleted)'.length) : p;
}

/** What a non-regular file is, for messages. */
export function describeType(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/** Opens, closing the handle again if `verify` throws. */
export async function openVerified<T>(p: string, flags: number, verify: (fh: fs.FileHandle) => Promise<T>, mode?: number): Promise<{ fh: fs.FileHandle; info: T }> {
  const fh = await fs.open(p, flags, mode);
  try {
    return { fh, info: await verify(fh) };
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Reopens an O_PATH descriptor of a regular file for I/O. Through /proc/self/fd the kernel reopens
 * the very inode the O_PATH descriptor holds; the dev/ino comparison makes that explicit.
 */
export async function reopen(pathFh: fs.FileHandle, st: Stats, flags: number): Promise<fs.FileHandle> {
  const { fh } = await openVerified(procFd(pathFh), flags, async (h) => {
    const again = await h.stat();
    if (again.ino !== st.ino || again.dev !== st.dev || !again.isFile()) throw new Error('the file changed while it was being opened; try again');
  });
  return fh;
}

/** Reads at most `size` bytes from position 0 (a file growing meanwhile cannot make it read more). */
export async function readUpTo(fh: fs.FileHandle, size: number): Promise<Buffer> {
  const buf = Buffer.alloc(size);
  let got = 0;
  while (got < size) {
    const { bytesRead } = await fh.read(buf, got, size - got, got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === size ? buf : buf.subarray(0, got);
}

/** Replaces the whole content of an open file: truncate, then positional writes. */
export async function replaceContent(fh: fs.FileHandle, data: Buffer): Promise<void> {
  await fh.truncate(0);
  await writeAt(fh, data, 0);
}

export async function writeAt(fh: fs.FileHandle, data: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done, position + done);
    done += bytesWritten;
  }
}

export interface WalkOptions {
  /** Stop collecting after this many files (the walk then reports `complete: false`). */
  cap: number;
  /** Directory depth below the start (1: only its own entries). */
  maxDepth?: number;
  /** Directory names never entered. */
  skipDirs?: ReadonlySet<string>;
}

/**
 * Regular files below a verified directory descriptor, as paths relative to it. Every subdirectory is
 * entered by O_NOFOLLOW|O_DIRECTORY relative to its parent's descriptor, so a symlink (or one swapped
 * in mid-walk) is never followed; symlinks, FIFOs, sockets and devices are not listed.
 */
export async function walkFiles(dir: fs.FileHandle, opts: WalkOptions): Promise<{ files: string[]; complete: boolean }> {
  const files: string[] = [];
  const maxDepth = opts.maxDepth ?? Number.POSITIVE_INFINITY;
  const queue: Array<{ fh: fs.FileHandle; rel: string; depth: number; owned: boolean }> = [{ fh: dir, rel: '', depth: 1, owned: false }];
  try {
    while (queue.length > 0) {
      const cur = queue.shift()!;
      try {
        let entries: Dirent[];
        try {
          entries = await fs.readdir(procFd(cur.fh), { withFileTypes: true });
        } catch {
          continue; // unreadable or gone: listed as empty
        }
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        for (const e of entries) {
          const rel = cur.rel === '' ? e.name : `${cur.rel}/${e.name}`;
          if (e.isFile()) {
            if (files.length >= opts.cap) return { files, complete: false };
            files.push(rel);
          } else if (e.isDirectory() && cur.depth < maxDepth && !opts.skipDirs?.has(e.name)) {
            const child = await fs.open(procFd(cur.fh, e.name), O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW).catch(() => null);
            if (child) queue.push({ fh: child, rel, depth: cur.depth + 1, owned: true });
          }
        }
      } finally {
        if (cur.owned) await cur.fh.close().catch(() => undefined);
      }
    }
    return { files, complete: true };
  } finally {
    for (const q of queue) if (q.owned) await q.fh.close().catch(() => undefined);
  }
}
