// Typed search-attribute keys, registered on the dev server at start (infra/temporal-dev-server.ts)
// and in docker-compose; operators query them in the Temporal UI (docs/operations.md). Declared only
// here: the API sets them when it starts a job, the workflow upserts them as the job moves.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from './types.js';

export const MaestroStatus = defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, SearchAttributeType.KEYWORD);
export const MaestroPiece = defineSearchAttributeKey(SEARCH_ATTRIBUTES.piece, SearchAttributeType.KEYWORD);
export const MaestroMovement = defineSearchAttributeKey(SEARCH_ATTRIBUTES.movement, SearchAttributeType.KEYWORD);
export const MaestroWaitReason = defineSearchAttributeKey(SEARCH_ATTRIBUTES.waitReason, SearchAttributeType.KEYWORD);
