import type { TSchema } from '@sinclair/typebox';

/**
 * Emulated times in the state format: the instants the emulator itself wrote (a lifecycle's
 * steps, a journal line, when a token was last used, when an alert fired), as opposed to the
 * times a caller gave as absolute (an annotation's `start`). An export carries its clock;
 * loaded on another clock, its emulated times move by the difference between the two, so
 * that every lifecycle is where it was and every age reads the same. A section's schema
 * marks them (`emulatedTime`), and `timeShifter` is made from the marks.
 */

/** Marks a schema: its value is an emulated instant, epoch ms. A symbol: no JSON Schema keyword, no OpenAPI noise. */
const EMULATED_TIME = Symbol.for('cloud-emulator.emulatedTime');

/** The schema, marked as an emulated instant (see above). */
export function emulatedTime<T extends TSchema>(schema: T): T {
  (schema as unknown as Record<symbol, boolean>)[EMULATED_TIME] = true;
  return schema;
}

export const isEmulatedTime = (schema: TSchema): boolean => (schema as unknown as Record<symbol, boolean | undefined>)[EMULATED_TIME] === true;

/** A value with its emulated times moved by `delta` ms: a copy of what holds one, the rest shared. */
export type Shifter = (value: unknown, delta: number) => unknown;

/**
 * The shifter of values of `schema`, made once from its marks; undefined when nothing in it is
 * an emulated time. Walks objects and arrays (the only shapes that hold one in the state
 * format); a value that does not have the schema's shape is left as it is.
 */
export function timeShifter(schema: TSchema): Shifter | undefined {
  if (isEmulatedTime(schema)) return (value, delta) => (typeof value === 'number' ? value + delta : value);
  const s = schema as { type?: unknown; properties?: Record<string, TSchema>; items?: TSchema };
  if (s.type === 'array' && s.items && !Array.isArray(s.items)) {
    const item = timeShifter(s.items);
    if (!item) return undefined;
    return (value, delta) => (Array.isArray(value) ? value.map((v) => item(v, delta)) : value);
  }
  if (s.type === 'object' && s.properties) {
    const fields: Array<[string, Shifter]> = [];
    for (const [key, property] of Object.entries(s.properties)) {
      const shift = timeShifter(property);
      if (shift) fields.push([key, shift]);
    }
    if (fields.length === 0) return undefined;
    return (value, delta) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      let copy: Record<string, unknown> | undefined;
      for (const [key, shift] of fields) {
        const field = (value as Record<string, unknown>)[key];
        if (field === undefined) continue;
        copy ??= { ...(value as Record<string, unknown>) };
        copy[key] = shift(field, delta);
      }
      return copy ?? value;
    };
  }
  return undefined;
}
