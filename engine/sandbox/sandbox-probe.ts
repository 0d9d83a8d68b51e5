// Whether bubblewrap can make a sandbox on this machine, checked once per process by making one: a
// missing package and a container runtime that blocks user namespaces fail differently, and the
// person reading the error needs to know which.
import { execFile } from 'node:child_process';

export const BWRAP_INSTALL_HINT =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or set MAESTRO_SANDBOX=none if Maestro already runs inside a container of your own (then tools run unsandboxed)';

const probes = new Map<string, Promise<string | null>>();

function tryRun(bwrap: string, args: string[]): Promise<{ ok: boolean; missing: boolean; stderr: string }> {
  return new Promise((resolve) => {
    execFile(bwrap, args, { timeout: 10_000 }, (err, _stdout, stderr) => {
      const code = (err as NodeJS.ErrnoException | null)?.code;
      resolve({ ok: !err, missing: code === 'ENOENT', stderr: String(stderr).trim() });
    });
  });
}

/** null when bwrap works here; otherwise why not and what to do. */
export function probeBwrap(bwrap = 'bwrap'): Promise<string | null> {
  let probe = probes.get(bwrap);
  if (probe) return probe;
  probe = (async () => {
    const r = await tryRun(bwrap, ['--unshare-all', '--unshare-user', '--cap-drop', 'ALL', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'true']);
    if (r.ok) return null;
    if (r.missing) return `the tool sandbox (MAESTRO_SANDBOX=bwrap) needs bubblewrap, which is not installed: ${BWRAP_INSTALL_HINT}`;
    return (
      `bubblewrap is installed but cannot create a sandbox here (${r.stderr || 'no error text'}). ` +
      'In a container, allow user namespaces (see docs/security.md: the worker seccomp profile), or ' +
      BWRAP_INSTALL_HINT.slice(BWRAP_INSTALL_HINT.indexOf('set MAESTRO_SANDBOX'))
    );
  })();
  probes.set(bwrap, probe);
  return probe;
}
