import { Type, type TLiteral, type TUnion, type SchemaOptions } from '@sinclair/typebox';

/** A union of string literals: one schema for an enumeration, typed as the union of its values. */
export function literals<T extends string>(values: readonly T[], options: SchemaOptions = {}): TUnion<TLiteral<T>[]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
}
