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
 * The body of a call that reads none: left out, null or `{}`. A field is refused (400 naming
 * it), never taken and ignored: a client sending one expects it to do something.
 */
export function noBody(description: string) {
  return Type.Union([Type.Object({}, { additionalProperties: false }), Type.Null()], { description });
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


/** The JSON types a member of a union must have to be written without choosing among the members. */
const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'null']);
/** What a scalar member may hold: keywords that decide whether a value is valid, never how it is written. */
const SCALAR_KEYWORDS = new Set(['type', 'const', 'enum', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'pattern', 'description', 'title', 'examples']);
/** What a union of scalars may hold beside its members. */
const NOTE_KEYWORDS = new Set(['anyOf', 'description', 'title', 'examples']);

const isSchemaObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The type of a scalar union member, or undefined when the member is anything else. */
function scalarType(member: unknown): string | undefined {
  if (!isSchemaObject(member) || typeof member.type !== 'string' || !SCALAR_TYPES.has(member.type)) return undefined;
  return Object.keys(member).every((key) => SCALAR_KEYWORDS.has(key)) ? member.type : undefined;
}

/** A union of scalars of distinct types, as one schema of those types; undefined when it is not one. */
function scalarUnion(schema: Record<string, unknown>): Record<string, unknown> | undefined {
  const members = schema.anyOf;
  if (!Array.isArray(members) || members.length === 0 || !Object.keys(schema).every((key) => NOTE_KEYWORDS.has(key))) return undefined;
  const types: string[] = [];
  for (const member of members) {
    const type = scalarType(member);
    if (type === undefined) return undefined;
    if (!types.includes(type)) types.push(type);
  }
  // Members of one type are written alike; of different types, a value's JSON type tells them
  // apart, except an integer, which both of these accept.
  if (types.includes('integer') && types.includes('number')) return undefined;
  const { anyOf: _members, ...notes } = schema;
  return { ...notes, type: types.length === 1 ? types[0] : types };
}

const SUBSCHEMA_MAPS = ['properties', 'patternProperties'] as const;
const SUBSCHEMAS = ['additionalProperties', 'items'] as const;
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf'] as const;

/**
 * A response schema as its serializer needs it: each union of scalars (string literals, an
 * integer or a boolean) becomes one schema of their types. fast-json-stringify writes a
 * union by asking a validator which member a value matches, which loads and compiles Ajv on
 * the route's first response (most of the first GET /_emulator/health); a value of such a
 * union is written the same whatever member it matches, from its JSON type alone. The schema
 * given is not changed (the OpenAPI document shows it as declared); parts without such a
 * union are shared, not copied.
 */
export function serializationSchema<T>(schema: T): T {
  if (!isSchemaObject(schema)) return schema;
  // Schemas are shared among routes (the error body by every one): each is rewritten once.
  let rewritten = rewrites.get(schema);
  if (rewritten === undefined) rewrites.set(schema, (rewritten = rewrite(schema)));
  return rewritten as T;
}

const rewrites = new WeakMap<object, Record<string, unknown>>();

function rewrite(schema: Record<string, unknown>): Record<string, unknown> {
  const union = scalarUnion(schema);
  if (union) return union;
  let copy: Record<string, unknown> | undefined;
  const set = (key: string, value: unknown) => {
    if (value !== schema[key]) (copy ??= { ...schema })[key] = value;
  };
  for (const key of SUBSCHEMA_MAPS) {
    const map = schema[key];
    if (!isSchemaObject(map)) continue;
    let mapCopy: Record<string, unknown> | undefined;
    for (const [name, sub] of Object.entries(map)) {
      const next = serializationSchema(sub);
      if (next !== sub) (mapCopy ??= { ...map })[name] = next;
    }
    if (mapCopy) set(key, mapCopy);
  }
  for (const key of SUBSCHEMAS) set(key, serializationSchema(schema[key]));
  for (const key of SUBSCHEMA_LISTS) {
    const list = schema[key];
    if (!Array.isArray(list)) continue;
    const next = list.map((sub: unknown) => serializationSchema(sub));
    if (next.some((sub, i) => sub !== list[i])) set(key, next);
  }
  return copy ?? schema;
}
