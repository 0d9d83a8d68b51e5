// Free-port helpers. Asking the OS for port 0 and closing again is racy by nature (another
// process may take the port before we bind it), so callers that can retry on EADDRINUSE should.
import net from 'node:net';

/** A TCP port that was free on `host` a moment ago. */
export async function getFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const addr = server.address();
      if (addr === null || typeof addr === 'string') {
        server.close();
        reject(new Error(`could not read the address of a probe socket on ${host}`));
        return;
      }
      server.close(() => resolve(addr.port));
    });
  });
}

/** Whether a TCP port can be bound on `host` right now. */
export async function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A free port P whose companion P + offset is free too (the Temporal dev server puts its Web UI on
 * gRPC port + 1000). Only ports whose companion fits below 65536 are considered.
 */
export async function getFreePortPair(offset: number, host = '127.0.0.1', attempts = 50): Promise<number> {
  for (let i = 0; i < attempts; i++) {
    const port = await getFreePort(host);
    if (port + offset > 65535) continue;
    if (await isPortFree(port + offset, host)) return port;
  }
  throw new Error(`no free port pair (offset ${offset}) found on ${host} after ${attempts} attempts`);
}
