// Serves one PGlite instance over the Postgres wire protocol with @electric-sql/pglite-socket, safely
// for several client connections.
//
// The wire protocol (startup, SSL refusal, message framing, replies) is pglite-socket's
// PGLiteSocketHandler. What we replace is its scheduling: PGLiteSocketServer queues work per protocol
// *message*, so two connections using the extended protocol (Parse/Bind/Execute/Sync, which pg uses
// for every parameterised query) interleave, and one connection's Bind meets the other's unnamed
// statement. We measured it: with a pg pool of 4 a count(*) came back with no row at all. Here a
// connection holds the single backend from its first message until the backend is idle again (after
// a Sync or a simple Query, or the startup, with no transaction open), so transactions serialise
// across connections, as one PGlite session demands.
//
// Limits that remain (PGlite is ONE session): session state is shared by all connections (SET,
// temporary tables, named prepared statements), and a client that waits for another connection
// while holding a transaction open deadlocks, as it would with a pool of one.
import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'

/** A FIFO async mutex: the backend belongs to one connection at a time. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const acquired = this.tail.then(() => release);
    this.tail = this.tail.then(() => next);
    return acquired;
  }
}

/**
 * Stands in for pglite-socket's QueryQueueManager (same three methods the handler calls), with
 * connection-level ownership of the backend instead of message-level interleaving.
 */
class ExclusiveBackend {
  private readonly mutex = new Mutex();
  private readonly owners = new Map<number, () => void>();
  /** Messages of one connection run strictly in order, each after the previous one finished. */
  private readonly chains = new Map<number, Promise<unknown>>();

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    const run = (this.chains.get(handlerId) ?? Promise.resolve()).catch(() => undefined).then(() => this.execute(handlerId, message, onData));
    this.chains.set(handlerId, run);
    return run;
  }

  private async execute(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    if (!this.owners.has(handlerId)) this.owners.set(handlerId, await this.mutex.lock());
    let bytes = 0;
    await this.db.runExclusive(() =>
      this.db.execProtocolRawStream(message, {
        onRawData: (data) => {
          bytes += data.length;
          onData(data);
        },
      }),
    );
    const isStartup = message[0] === 0; // a startup message begins with its length, whose top byte is 0
    if ((isStartup || message[0] === SYNC || message[0] === QUERY) && !this.db.isInTransaction()) this.release(handlerId);
    return bytes;
  }

  private release(handlerId: number): void {
    const release = this.owners.get(handlerId);
    this.owners.delete(handlerId);
    release?.();
  }

  getQueueLength(): number {
    return 0;
  }

  clearQueueForHandler(handlerId: number): void {
    this.chains.delete(handlerId);
  }

  /** The client left while holding the backend: end its extended query and roll back. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    await this.chains.get(handlerId)?.catch(() => undefined);
    this.chains.delete(handlerId);
    if (!this.owners.has(handlerId)) return;
    try {
      await this.db.runExclusive(() => this.db.execProtocolRaw(new Uint8Array([SYNC, 0, 0, 0, 4])));
      if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    } catch {
      // the backend is unusable anyway; the next client will see its errors
    } finally {
      this.release(handlerId);
    }
  }
}

export interface PgliteWireServer {
  host: string;
  port: number;
  stop(): Promise<void>;
}

export async function startPgliteWireServer(db: PGlite, opts: { host: string; port: number }): Promise<PgliteWireServer> {
  const backend = new ExclusiveBackend(db);
  const handlers = new Set<PGLiteSocketHandler>();
  const server = net.createServer((socket) => {
    // pglite-socket types its queue as its own class; ExclusiveBackend provides the same methods.
    const handler = new PGLiteSocketHandler({ queryQueue: backend as any, closeOnDetach: true });
    handlers.add(handler);
    handler.addEventListener('close', () => handlers.delete(handler));
    handler.addEventListener('error', () => handlers.delete(handler));
    void handler.attach(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: opts.host, port: opts.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as net.AddressInfo;
  return {
    host: opts.host,
    port: addr.port,
    async stop() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      await Promise.all([...handlers].map((h) => h.detach(true)));
      handlers.clear();
      await closed;
    },
  };
}
