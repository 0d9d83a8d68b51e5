// Schemas of approval requests (RequestTool, RequestPackage, SpinOffTask toward another workspace)
// and their decisions; they drive validation and the OpenAPI document.
import { z } from '@hono/zod-openapi';
import { REQUEST_KINDS, REQUEST_STATUSES } from '../core/types.js';
import { JobDetailSchema, uuid } from './schemas.js';

export const MAX_NOTE_CHARS = 2000;

export const RequestIdParams = z.object({
  id: uuid().openapi({ param: { name: 'id', in: 'path' }, example: '9c1d7e52-0b8a-4f6e-8d3c-2a4b6c8d0e1f' }),
});

export const RequestSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid' }),
    jobId: z.string().openapi({ format: 'uuid' }),
    kind: z.enum(REQUEST_KINDS),
    args: z.record(z.string(), z.unknown()).openapi({ description: 'tool: {tool}; package: {manager, name, version?}; spawn: {instruction, piece?, workspace}' }),
    reason: z.string(),
    movement: z.string(),
    status: z.enum(REQUEST_STATUSES),
    note: z.string().nullable(),
    result: z.string().nullable().openapi({ description: 'for an approved package: the install outcome and the tail of its log' }),
    createdAt: z.string(),
    decidedAt: z.string().nullable(),
  })
  .openapi('Request');

export const DecisionBody = z
  .object({
    decision: z.enum(['approved', 'declined']),
    note: z.string().max(MAX_NOTE_CHARS).optional().openapi({ description: 'shown to the model when the movement runs again' }),
  })
  .strict()
  .openapi('Decision');

export const JobWithRequestsSchema = JobDetailSchema.extend({ requests: z.array(RequestSchema) }).openapi('JobWithRequests');
