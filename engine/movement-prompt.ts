// Lays out a movement's first user message. Order runs from most to least stable (invariant: byte-stable prompt prefix):
// what never changes in a job comes first so that, after a transition, the request shares the
// longest possible prefix with the previous one and the LLM server's prompt cache stays warm.
import type { PieceMovement } from '../core/types.js';
import type { EnrichedInstruction } from './enriched-instruction.js';
import { movementTargets } from './piece/piece-targets.js';

export interface MovementPromptInput {
  enriched: EnrichedInstruction;
  movement: PieceMovement;
  /** Already capped (engine/lessons.ts), oldest first. */
  lessons?: string[];
  checklists?: string | null;
  feedback?: Array<{ fromMovement: string; text: string }>;
  gitStatus?: string | null;
  /** This job's approval requests and how they were decided. */
  requests?: string | null;
  /** This job's child jobs with their status and summary. */
  subtasks?: string | null;
  /** A note from the engine for this run of the movement (e.g. the ask-limit deflection). */
  note?: string;
}

export function buildMovementPrompt(input: MovementPromptInput): string {
  const { enriched, movement, lessons = [], feedback = [] } = input;
  const parts = [
    `## Task\n${enriched.instruction.trim()}`,
    `## Recent comments (last 5, oldest first)\n${enriched.comments}`,
  ];
  if (lessons.length) parts.push(`## Lessons from previous steps\n${lessons.map((l) => `- ${l}`).join('\n')}`);
  if (input.checklists) parts.push(`## Checklists\n${input.checklists}`);
  if (feedback.length) {
    parts.push(`## Feedback for this step\n${feedback.map((f) => `From ${f.fromMovement}:\n${f.text.trim()}`).join('\n\n')}`);
  }
  if (input.requests) parts.push(`## Your requests\n${input.requests}`);
  if (input.subtasks) parts.push(`## Subtasks\n${input.subtasks}`);
  parts.push(`## Workspace files\n${enriched.workspace}`);
  if (input.gitStatus) parts.push(`## Workspace changes (git)\n${input.gitStatus}`);
  parts.push(`## Current step: ${movement.name}\n${movement.instruction.trim()}\n\n${describeExits(movement)}`);
  if (input.note) parts.push(`## Note from the engine\n${input.note}`);
  parts.push(`## Time\n${enriched.time}`);
  return parts.join('\n\n');
}

function describeExits(movement: PieceMovement): string {
  const lines = [`Tools you may use in this step: ${movement.allowed_tools.join(', ') || '(none)'}.`];
  const targets = movementTargets(movement).filter((t) => t !== 'COMPLETE' && t !== 'ABORT');
  if (movement.rules.length) {
    lines.push('When you are done with this step, call `transition` with one of:');
    for (const rule of movement.rules) lines.push(`- next: "${rule.next}" when ${rule.condition}`);
  } else if (targets.length) {
    lines.push(`When you are done with this step, call \`transition\` with next: ${targets.map((t) => `"${t}"`).join(' or ')}.`);
  }
  lines.push('When the whole task is finished, call `complete`.');
  return lines.join('\n');
}
