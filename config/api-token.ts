// The API's bearer token when the operator sets none: generated once into MAESTRO_HOME/api-token
// (0600, in a folder only its owner can read) and reused, so no API is ever served without a token
// and the local CLI finds it without being told.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, link, lstat, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { homePaths } from './config.js';

export class ApiTokenFileError extends Error {
  override name = 'ApiTokenFileError';
}

const MIN_TOKEN_CHARS = 16;

export interface ApiTokenInfo {
  token: string;
  /** Where it came from: MAESTRO_API_TOKEN, the file as found, or the file just written. */
  source: 'env' | 'file' | 'generated';
  file: string;
}

/** MAESTRO_API_TOKEN when set; otherwise the token file, created on first use. */
export async function ensureApiToken(home: string, envToken?: string): Promise<ApiTokenInfo> {
  const file = homePaths(home).apiToken;
  if (envToken) return { token: envToken, source: 'env', file };
  await mkdir(home, { recursive: true, mode: 0o700 });
  // Other users on the machine must not read the token; MAESTRO_HOME is Maestro's own folder.
  const st = await stat(home);
  if ((st.mode & 0o077) !== 0 && typeof process.getuid === 'function' && st.uid === process.getuid()) {
    await chmod(home, st.mode & 0o700);
  }
  const existing = await readTokenFile(file);
  if (existing) return { token: existing, source: 'file', file };
  const token = randomBytes(32).toString('base64url');
  // Written aside, then hard-linked into place: the file appears whole or not at all, and link()
  // fails when it exists, so two processes starting at once agree on one token.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${token}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(tmp, file);
    return { token, source: 'generated', file };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const raced = await readTokenFile(file);
    if (!raced) throw new ApiTokenFileError(`${file} exists but holds no token; delete it to make a new one`, { cause: err });
    return { token: raced, source: 'file', file };
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function readTokenFile(file: string): Promise<string | undefined> {
  let st;
  try {
    st = await lstat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (!st.isFile()) throw new ApiTokenFileError(`${file} is not a regular file (a symlink?); remove it`);
  if ((st.mode & 0o077) !== 0) await chmod(file, 0o600);
  const token = (await readFile(file, 'utf8')).trim();
  if (token.length < MIN_TOKEN_CHARS) {
    throw new ApiTokenFileError(`${file} holds a token shorter than ${MIN_TOKEN_CHARS} characters; delete it to make a new one`);
  }
  return token;
}

/** The token file's content for a client, or undefined when there is none (never creates it). */
export function readApiTokenFileSync(home: string): string | undefined {
  try {
    const token = readFileSync(homePaths(home).apiToken, 'utf8').trim();
    return token.length >= MIN_TOKEN_CHARS ? token : undefined;
  } catch {
    return undefined;
  }
}
