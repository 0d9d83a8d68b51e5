// The agent loop's Checkpointer backed by Postgres: resume state lives in the database, and only the
// checkpoint id and iteration go into heartbeats (Temporal payloads stay small).
import type { Db } from '../db/database.js';
import { loadLatestCheckpoint, saveCheckpoint } from '../db/repositories/checkpoints.repo.js';
import type { Checkpointer, LoopState } from '../engine/agent-loop.js';
import type { ChatMessage } from '../engine/llm-client.js';

export function createCheckpointer(db: Db, movementRunId: string): Checkpointer {
  let stored = 0;
  return {
    async load() {
      const cp = await loadLatestCheckpoint<ChatMessage, LoopState>(db, movementRunId);
      if (!cp) return undefined;
      stored = cp.messages.length;
      return cp;
    },
    async save(messages, state) {
      const id = await saveCheckpoint(db, movementRunId, messages, stored, state);
      stored = messages.length;
      return id;
    },
  };
}
