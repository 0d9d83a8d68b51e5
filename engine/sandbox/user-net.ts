// Network for a sandbox a piece grants it to: slirp4netns gives the sandbox's own network namespace a
// user-mode route to the outside while refusing the host's loopback (--disable-host-loopback), so
// the worker's local services (API, database, Temporal, LLM endpoint) stay out of reach.
import { spawn, type ChildProcess } from 'node:child_process';

export class UserNetError extends Error {
  override name = 'UserNetError';
}

/** slirp4netns's built-in DNS forwarder inside the sandbox. */
export const SLIRP_DNS = '10.0.2.3';

export async function startUserNet(pid: number, timeoutMs = 10_000): Promise<{ stop(): void }> {
  const child: ChildProcess = spawn(
    'slirp4netns',
    ['--configure', '--mtu=65520', '--disable-host-loopback', '--enable-sandbox', '--ready-fd', '3', String(pid), 'tap0'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
  );
  for (const s of child.stdio.slice(2)) (s as NodeJS.ReadableStream | null)?.on('error', () => undefined);
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-2000)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new UserNetError(`slirp4netns did not become ready within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.once('error', (err) =>
      fail(new UserNetError(`cannot start slirp4netns (install Debian's slirp4netns package): ${err.message}`, { cause: err })),
    );
    child.once('exit', (code) => fail(new UserNetError(`slirp4netns exited (${code}) before it was ready: ${stderr.trim()}`)));
    (child.stdio[3] as NodeJS.ReadableStream).once('data', () => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve();
    });
  });
  return { stop: () => void child.kill('SIGKILL') };
}
