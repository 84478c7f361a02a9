import { Type, type Static, type TObject, type TOptional, type TString } from '@sinclair/typebox';
import { ClockAnchorSchema } from '../core/clock.js';
import type { TimelineStateSchema } from './timeline-schemas.js';

/**
 * The schemas of the state format that are no section of it: the demo a state makes, and the
 * shape of a whole state around its sections. Schemas and types only (world/state.ts reads,
 * checks and merges states), so that a type of the state names nothing of the server.
 */

/**
 * What the fixtures say about the demo they make: its title (and a subtitle), which the
 * dashboard's presenter view shows. Not a section: one per state, and no interface's.
 */
export const DemoSchema = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200, description: "the demo's title, shown by the dashboard's presenter view" }),
    subtitle: Type.Optional(Type.String({ maxLength: 500, description: 'a line under the title' })),
  },
  { additionalProperties: false, description: 'the demo these fixtures make, for the dashboard (?presenter); at most one fixture file gives it' },
);
export type Demo = Static<typeof DemoSchema>;

/** The schema of a whole state with these sections: `$schema`, `demo` and `clock`, then the sections. */
export type StateSchemaWith<Sections> = TObject<
  {
    $schema: TOptional<TString>;
    demo: TOptional<typeof DemoSchema>;
    clock: TOptional<typeof ClockAnchorSchema>;
    timeline: TOptional<typeof TimelineStateSchema>;
  } & Sections
>;
