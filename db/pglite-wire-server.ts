// Serves one PGlite instance over the Postgres wire protocol to several client connections safely.
//
// Why not PGLiteSocketServer from @electric-sql/pglite-socket: it queues work per protocol *message*,
// so two connections using the extended protocol (Parse/Bind/Execute/Sync, which pg uses for every
// parameterised query) interleave, and one connection's Bind meets the other's unnamed statement.
// We measured it: with a pg pool of 4 a count(*) came back with no row at all. Here a connection
// holds the single backend from its first message until the backend is idle again: after a Sync
// or simple Query (or the startup) with no transaction open. Transactions therefore serialise
// across connections, exactly as one PGlite session demands.
//
// Limits that remain (PGlite is ONE session): session state is shared by all connections (SET,
// temporary tables, named prepared statements), and a client that waits for another connection
// while holding a transaction open deadlocks, as it would with a pool of one.
import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

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

export interface PgliteWireServer {
  host: string;
  port: number;
  stop(): Promise<void>;
}

export async function startPgliteWireServer(db: PGlite, opts: { host: string; port: number }): Promise<PgliteWireServer> {
  const backend = new Mutex();
  const connections = new Set<WireConnection>();
  const server = net.createServer((socket) => {
    const conn = new WireConnection(socket, db, backend, () => connections.delete(conn));
    connections.add(conn);
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
      await Promise.all([...connections].map((c) => c.close()));
      await closed;
    },
  };
}

class WireConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private queue: Buffer[] = [];
  private started = false;
  private running: Promise<void> | undefined;
  private release: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly socket: net.Socket,
    private readonly db: PGlite,
    private readonly backend: Mutex,
    private readonly onGone: () => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (d) => this.onData(d));
    socket.on('error', () => void this.close());
    socket.on('close', () => void this.close());
  }

  private onData(d: Buffer): void {
    if (this.closed) return;
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, d]) : d;
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 8) return;
        const len = this.buffer.readInt32BE(0);
        const code = this.buffer.readInt32BE(4);
        if (this.buffer.length < len) return;
        const msg = this.buffer.subarray(0, len);
        this.buffer = this.buffer.subarray(len);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          this.socket.write('N'); // no encryption on a loopback socket; the client goes on in plain text
        } else if (code === CANCEL_REQUEST) {
          this.socket.end(); // one session, nothing to cancel
          return;
        } else if (code === PROTOCOL_3) {
          this.started = true;
          this.queue.push(msg);
        } else {
          this.socket.destroy();
          return;
        }
        continue;
      }
      if (this.buffer.length < 5) break;
      const len = 1 + this.buffer.readInt32BE(1);
      if (this.buffer.length < len) break;
      this.queue.push(this.buffer.subarray(0, len));
      this.buffer = this.buffer.subarray(len);
    }
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      const msg = this.queue.shift()!;
      const isStartup = msg[0] === 0; // a startup message begins with its length, whose top byte is 0
      const type = isStartup ? '' : String.fromCharCode(msg[0]);
      if (type === 'X') {
        this.shutdown();
        break;
      }
      this.release ??= await this.backend.lock();
      if (this.closed) break;
      try {
        await this.db.runExclusive(() =>
          this.db.execProtocolRawStream(new Uint8Array(msg), {
            onRawData: (data) => {
              if (!this.closed && this.socket.writable) this.socket.write(Buffer.from(data));
            },
          }),
        );
      } catch {
        // PGlite reports SQL errors inside the protocol; a throw means the backend itself broke.
        this.socket.destroy();
        this.shutdown();
        break;
      }
      if ((isStartup || type === 'S' || type === 'Q') && !this.db.isInTransaction()) this.unlock();
    }
    if (this.closed) await this.abandonBackend();
  }

  private unlock(): void {
    const release = this.release;
    this.release = undefined;
    release?.();
  }

  /** Stops reading and writing; idempotent. */
  private shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    if (!this.socket.destroyed) this.socket.end();
    this.onGone();
  }

  /**
   * The client left while holding the backend (mid extended-query or mid-transaction): end the
   * extended-query sequence with a Sync and roll back, so the next connection starts clean.
   */
  private async abandonBackend(): Promise<void> {
    const release = this.release;
    if (!release) return;
    this.release = undefined;
    try {
      await this.db.runExclusive(() => this.db.execProtocolRaw(new Uint8Array([0x53, 0, 0, 0, 4])));
      if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    } catch {
      // the backend is unusable anyway; the next client will see its errors
    } finally {
      release();
    }
  }

  async close(): Promise<void> {
    this.shutdown();
    await this.running?.catch(() => undefined);
    await this.abandonBackend();
  }
}
