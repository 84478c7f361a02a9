import { Type, type Static, type TPartial } from '@sinclair/typebox';
import { literals } from './core/schema.js';
import type { StateSchemaWith } from './world/state-schemas.js';
import { FaultRuleInputSchema } from './world/fault-schemas.js';
import type { RepositorySectionsSchema } from './repository/schemas.js';
import { NextStartBodySchema, STARTABLE_KINDS, type ProvisioningSectionsSchema } from './provisioning/schemas.js';
import type { AnnotationSectionsSchema } from './annotations/schemas.js';
import type { AlertSectionsSchema } from './alerts/schemas.js';
import type { CompositionSectionsSchema } from './compositions/schemas.js';
import type { QuerySectionsSchema } from './query/schemas.js';

/**
 * The state format's schemas and types, from the interfaces' section schemas alone: what the
 * typed client names (a state to import, an export) without a type of the server's routes,
 * stores or Fastify. state.ts makes the format itself from the list of interfaces, and fails
 * to compile when the sections named here are not the list's.
 */

/**
 * A scenario: what the control API's PUT /_emulator/lifecycles/<kind>/<id>/next-start sets,
 * written down, with the path's kind and id as fields and the body as `nextStart`. Applied
 * whenever the world is built from the state: at start, after every reset, in a new sandbox.
 */
export const ScenarioSchema = Type.Object(
  {
    kind: literals(STARTABLE_KINDS, { description: 'the kind of resource, as in the path of next-start' }),
    id: Type.Integer({ minimum: 1, description: 'the id of a grid, test environment or RSDB of the state' }),
    nextStart: NextStartBodySchema,
  },
  { additionalProperties: false, description: 'the outcome of the resource’s next start, as PUT /_emulator/lifecycles/<kind>/<id>/next-start sets it' },
);
export type Scenario = Static<typeof ScenarioSchema>;

/**
 * The world's own sections, after the interfaces': `faults`, the fault rules a world starts
 * with (in the shape POST /_emulator/faults accepts), and `scenarios`.
 */
export const WORLD_SECTION_SCHEMAS = {
  faults: Type.Array(FaultRuleInputSchema, {
    default: [],
    description: 'fault rules, as POST /_emulator/faults takes them; added at start and after every reset',
  }),
  scenarios: Type.Array(ScenarioSchema, { default: [], description: 'next-start outcomes, applied at start and after every reset' }),
};

/** The sections of every interface of src/interfaces.ts, by section name (state.ts checks them against the list). */
export type InterfaceSectionSchemas = typeof RepositorySectionsSchema &
  typeof ProvisioningSectionsSchema &
  typeof AnnotationSectionsSchema &
  typeof AlertSectionsSchema &
  typeof CompositionSectionsSchema &
  typeof QuerySectionsSchema;

/** The schema of the whole state: the interfaces' sections, then the world's own. */
export type FullStateSchema = StateSchemaWith<InterfaceSectionSchemas & typeof WORLD_SECTION_SCHEMAS>;

/** The whole state: what GET /_emulator/state exports. */
export type State = Static<FullStateSchema>;

/** One fixture file, or a state to import: any subset of the sections of a state. */
export type FixtureFile = Static<TPartial<FullStateSchema>>;
