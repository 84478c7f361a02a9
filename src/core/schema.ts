import { Type, type IntegerOptions, type StringOptions, type TLiteral, type TUnion, type SchemaOptions } from '@sinclair/typebox';

/** A union of string literals: one schema for an enumeration, typed as the union of its values. */
export function literals<T extends string>(values: readonly T[], options: SchemaOptions = {}): TUnion<TLiteral<T>[]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
}

/** Up to 16 decimal digits: enough for every time a date can hold (8640000000000000). */
export const DECIMAL_DIGITS = '^[0-9]{1,16}$';

/**
 * An integer field that also takes its decimal digits as a JSON string (`"1631282415000"`),
 * as Jackson reads a string into an integer field. Strings pass on unconverted: the route
 * turns them into numbers with `integerOf` (http/validation.ts), which applies the range a string cannot express.
 * Only this field is lenient; nothing else in a body is coerced.
 */
export function integerOrDigits(options: IntegerOptions) {
  const { description, ...range } = options;
  return Type.Union([Type.Integer(range), Type.String({ pattern: DECIMAL_DIGITS })], {
    description: `${description ? `${description}; ` : ''}an integer, or a string of its decimal digits`,
  });
}

/**
 * A query parameter a client may repeat. Fastify hands a repeated one over as an array;
 * `firstValue` takes the first, as a JAX-RS `@QueryParam` of a single value does.
 */
export function repeatable(options: StringOptions = {}) {
  const { description, ...rest } = options;
  return Type.Union([Type.String(rest), Type.Array(Type.String(rest))], { description });
}

export function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

