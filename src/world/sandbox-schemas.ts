import { Type, type Static } from '@sinclair/typebox';
import { SANDBOX_MODES } from '../config.js';
import { literals } from '../core/schema.js';

/**
 * The sandboxes' schemas: what the control API answers, and what the world's Sandboxes
 * registry hands out. Here, beside the registry, so that the world needs nothing from the HTTP face.
 */

export const SandboxSummarySchema = Type.Object(
  {
    name: Type.String(),
    createdAt: Type.Integer({ description: 'real time the sandbox was created, epoch ms' }),
    lastUsedAt: Type.Integer({ description: 'real time of the last request to it, epoch ms' }),
    counts: Type.Record(Type.String(), Type.Integer(), { description: 'entries per state section' }),
  },
  { additionalProperties: false, $id: 'SandboxSummary' },
);
export type SandboxSummary = Static<typeof SandboxSummarySchema>;

export const SandboxListSchema = Type.Object(
  {
    sandboxes: Type.Array(SandboxSummarySchema),
    max: Type.Integer({ description: 'MAX_SANDBOXES' }),
    mode: literals(SANDBOX_MODES, { description: 'SANDBOXES' }),
  },
  { additionalProperties: false },
);
