// Who holds the single PGlite backend. PGlite is ONE session, so one connection holds it from its
// first message until the backend is idle again outside a transaction (see pglite-wire-server.ts).
// Connections that want it wait in FIFO order; a waiter that leaves is dropped at once, so it can
// never be handed a backend nobody will give back.
import type { PGlite } from '@electric-sql/pglite';

const SYNC_MESSAGE = new Uint8Array([0x53, 0, 0, 0, 4]);

export class BackendGoneError extends Error {
  override name = 'BackendGoneError';
}

interface Waiter {
  owner: object;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class BackendScheduler {
  private holder: object | null = null;
  private readonly waiters: Waiter[] = [];

  constructor(private readonly db: PGlite) {}

  isHeldBy(owner: object): boolean {
    return this.holder === owner;
  }

  get queueLength(): number {
    return this.waiters.length;
  }

  /** Resolves once `owner` holds the backend; rejects with BackendGoneError if it is cancelled first. */
  acquire(owner: object): Promise<void> {
    if (this.holder === owner) return Promise.resolve();
    if (this.holder === null) {
      this.holder = owner;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiters.push({ owner, resolve, reject }));
  }

  /** The owner left the queue (its client disconnected, the server stops): forget it now. */
  cancel(owner: object): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i].owner !== owner) continue;
      const [w] = this.waiters.splice(i, 1);
      w.reject(new BackendGoneError('the connection left while waiting for the database'));
    }
  }

  release(owner: object): void {
    if (this.holder !== owner) return;
    const next = this.waiters.shift();
    this.holder = next?.owner ?? null;
    next?.resolve();
  }

  /** Runs one protocol message for the holder; replies go to onData as PGlite produces them. */
  async run(owner: object, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<void> {
    if (this.holder !== owner) throw new BackendGoneError('run() by a connection that does not hold the backend');
    await this.db.runExclusive(() => this.db.execProtocolRawStream(message, { onRawData: onData }));
  }

  inTransaction(): boolean {
    return this.db.isInTransaction();
  }

  /**
   * The holder is going away: end any half-sent extended query (Sync) and roll back what it left
   * open, then hand the backend on. Errors are swallowed: the backend must be handed on regardless.
   */
  async abandon(owner: object): Promise<void> {
    this.cancel(owner);
    if (this.holder !== owner) return;
    try {
      await this.db.runExclusive(() => this.db.execProtocolRaw(SYNC_MESSAGE));
      if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    } catch {
      // an unusable backend shows up in the next client's errors
    } finally {
      this.release(owner);
    }
  }
}
