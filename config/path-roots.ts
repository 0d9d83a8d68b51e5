// Where a path really lands, for "must lie under one of these folders" rules (workspace roots,
// pieces dirs). A path that does not exist yet is judged by its deepest existing ancestor, realpath'd,
// so a symlink anywhere on the way cannot lead out; the missing rest cannot hold a symlink.
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';

/** Longest path accepted (Linux PATH_MAX) and longest name in it (NAME_MAX), in bytes. */
export const MAX_PATH_BYTES = 4096;
export const MAX_NAME_BYTES = 255;

export class DanglingLinkError extends Error {
  override name = 'DanglingLinkError';
}

/**
 * The absolute path `abs` with its deepest existing ancestor replaced by that ancestor's realpath.
 * A dangling symlink on the way is refused: creating the folder would follow it wherever it points.
 */
export async function realpathOfDeepest(abs: string): Promise<string> {
  const rest: string[] = [];
  let cur = path.resolve(abs);
  for (;;) {
    let exists = true;
    try {
      await lstat(cur);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      exists = false;
    }
    if (exists) {
      try {
        return path.join(await realpath(cur), ...rest);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ELOOP') throw new DanglingLinkError(`${cur} is a symlink to nowhere`, { cause: err });
        throw err;
      }
    }
    const parent = path.dirname(cur);
    if (parent === cur) return path.join(cur, ...rest);
    rest.unshift(path.basename(cur));
    cur = parent;
  }
}

export function isInsideOrEqual(root: string, p: string): boolean {
  if (p === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return p.startsWith(prefix);
}

export function isStrictlyInside(root: string, p: string): boolean {
  return p !== root && isInsideOrEqual(root, p);
}

/** Why a client-given path string is refused before touching the disk, or null when it is acceptable. */
export function pathSyntaxProblem(raw: string): string | null {
  if (raw.includes('\0')) return 'contains a NUL byte';
  if (Buffer.byteLength(raw, 'utf8') > MAX_PATH_BYTES) return `is longer than ${MAX_PATH_BYTES} bytes`;
  const parts = raw.split(/[\\/]+/);
  if (parts.some((p) => p === '..')) return 'contains a ".." segment';
  if (parts.some((p) => Buffer.byteLength(p, 'utf8') > MAX_NAME_BYTES)) return `has a name longer than ${MAX_NAME_BYTES} bytes`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) return 'contains a control character';
  return null;
}
