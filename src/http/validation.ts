import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { Kind, Type, type IntegerOptions, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { ApiError } from './errors.js';
import { validatorOnFirstUse } from './compile-on-first-use.js';
import { DECIMAL_DIGITS } from '../core/schema.js';
export { firstValue, integerOrDigits, repeatable } from '../core/schema.js';

/**
 * Strict request validation. Fastify's default Ajv settings coerce every scalar into every
 * other (`true` into 1, `12.5` into "12.5") and silently drop unknown fields in bodies; a
 * client that sends `{"domainId":5}` would then be accepted here and refused by the real
 * service, and a typo in a control call such as `{"sclae": 2}` would be a silent no-op.
 * Bodies are taken exactly as sent; the one leniency of the real service's JSON reader that
 * clients rely on, digits in a string for an integer, is declared per field with
 * `integerOrDigits`. Path and query values arrive as text, so they are converted to the
 * schema's types. Defaults the schema declares are filled in.
 *
 * Failures are returned in Ajv's error shape so the shared error handler words them:
 * "body: missing required field 'title'", "body: unknown field 'domainId'",
 * "body field 'start' must be an integer >= 0".
 */

type Schema = TSchema & Record<string, unknown>;

/** The number an `integerOrDigits` field holds, checked against its range; 400 naming the field otherwise. */
export function integerOf(value: number | string, field: string, options: IntegerOptions): number {
  const n = typeof value === 'number' ? value : Number(value);
  const { minimum, maximum } = options;
  if ((minimum !== undefined && n < minimum) || (maximum !== undefined && n > maximum)) {
    throw new ApiError(400, `body field '${field}' must be ${describe(Type.Integer(options) as Schema)}, got ${JSON.stringify(value)}`);
  }
  return n;
}

function plural(schema: Schema): string {
  switch (schema[Kind]) {
    case 'Integer':
      return 'integers';
    case 'Number':
      return 'numbers';
    case 'String':
      return 'strings';
    case 'Object':
      return 'JSON objects';
    case 'Union':
      if ((schema.anyOf as Schema[]).some((v) => v.pattern === DECIMAL_DIGITS)) return 'integers or strings of decimal digits';
      return `values that are ${describe(schema)}`;
    default:
      return `values that are ${describe(schema)}`;
  }
}

/** What a schema expects, in words: "an integer >= 0", "an integer or an array of integers". */
export function describe(schema: Schema): string {
  switch (schema[Kind]) {
    case 'Integer':
    case 'Number': {
      const range = [
        schema.minimum !== undefined ? `>= ${schema.minimum}` : '',
        schema.maximum !== undefined ? `<= ${schema.maximum}` : '',
      ].filter(Boolean);
      return `${schema[Kind] === 'Integer' ? 'an integer' : 'a number'}${range.length ? ` ${range.join(' and ')}` : ''}`;
    }
    case 'String':
      if (schema.pattern === DECIMAL_DIGITS) return 'a string of decimal digits';
      return (schema.minLength as number | undefined) ? 'a non-empty string' : 'a string';
    case 'Boolean':
      return 'true or false';
    case 'Null':
      return 'null';
    case 'Object':
      return 'a JSON object';
    case 'Array':
      return `an array of ${plural(schema.items as Schema)}`;
    case 'Literal':
      return JSON.stringify(schema.const);
    case 'Union': {
      const variants = schema.anyOf as Schema[];
      if (variants.every((v) => v[Kind] === 'Literal')) return `one of ${variants.map((v) => JSON.stringify(v.const)).join(', ')}`;
      return variants.map(describe).join(' or ');
    }
    default:
      return 'valid';
  }
}

const jsonTypeOfKind: Record<string, string> = {
  Integer: 'number',
  Number: 'number',
  String: 'string',
  Boolean: 'boolean',
  Null: 'null',
  Object: 'object',
  Array: 'array',
};

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * The error worth reporting. A union that fails names every alternative, which hides the
 * real problem when the value plainly meant one of them: for `[1, "x"]` against
 * "integer or array of integers", the useful answer is "domainIds.1 must be an integer".
 */
function innermost(error: ValueError): ValueError {
  if (error.type !== ValueErrorType.Union) return error;
  const variants = (error.schema as Schema).anyOf as Schema[];
  // An integerOrDigits field is one idea: "must be a string of decimal digits" alone would
  // hide that an integer was the point.
  if (variants.some((v) => v.pattern === DECIMAL_DIGITS)) return error;
  const kind = jsonType(error.value);
  const matching = variants.map((v, i) => ({ v, i })).filter(({ v }) => jsonTypeOfKind[v[Kind] as string] === kind);
  if (matching.length !== 1) return error;
  const inner = error.errors[matching[0].i]?.First();
  return inner ? innermost(inner) : error;
}

function unescape(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** One TypeBox error in the shape of an Ajv error, which the shared error handler reads. */
function toAjvError(error: ValueError): FastifySchemaValidationError {
  const tokens = error.path.split('/').slice(1).map(unescape);
  const last = tokens.pop() ?? '';
  const parent = tokens.length ? `/${tokens.join('/')}` : '';
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return { keyword: 'required', instancePath: parent, schemaPath: '', params: { missingProperty: last }, message: 'is required' };
    case ValueErrorType.ObjectAdditionalProperties:
      return { keyword: 'additionalProperties', instancePath: parent, schemaPath: '', params: { additionalProperty: last }, message: 'is not allowed' };
    default:
      return { keyword: 'type', instancePath: error.path, schemaPath: '', params: {}, message: `must be ${describe(error.schema as Schema)}` };
  }
}

/** Whether a `default` (or a reference, which might lead to one) appears anywhere in the schema. */
function mayFillDefaults(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return false;
  if (Array.isArray(schema)) return schema.some(mayFillDefaults);
  return Object.entries(schema).some(([key, value]) => key === 'default' || key === '$ref' || mayFillDefaults(value));
}

/**
 * A field whose text from the URL or a header (a string, or an array of strings when
 * repeated) TypeBox's conversion returns unchanged, so it need not walk it: a string, or a
 * repeatable parameter (core/schema.ts `repeatable`), the union of a string and an array of
 * that same string. A value that fits a member of a union is kept as it is; a string that
 * fits neither would be tried as `[string]`, which fails the array's items just as it failed
 * the string, and the value is kept too. (A lone array of strings is not: it makes `[string]`
 * of a single value.)
 */
function takesText(schema: Schema): boolean {
  if (schema[Kind] === 'String') return true;
  if (schema[Kind] !== 'Union') return false;
  const members = schema.anyOf as Schema[];
  if (members.length !== 2 || members[0][Kind] !== 'String' || members[1][Kind] !== 'Array') return false;
  const items = members[1].items as Schema;
  return items[Kind] === 'String' && JSON.stringify(items) === JSON.stringify(members[0]);
}

/**
 * An object of text fields only (a path id, the Query API's repeatable parameters, the
 * repository's attribute filters, any parameter a text): text from the URL needs no
 * conversion to fit it.
 */
function onlyStrings(schema: Schema): boolean {
  if (schema[Kind] !== 'Object' || schema.patternProperties !== undefined) return false;
  if (typeof schema.additionalProperties === 'object' && !takesText(schema.additionalProperties as Schema)) return false;
  return Object.values(schema.properties as Record<string, Schema>).every(takesText);
}

/** The fields of an object schema that allows no others, and the ones it requires. */
interface ClosedObject {
  known: Set<string>;
  required: string[];
}

/**
 * An object schema with additionalProperties false whose first error, for a value holding an
 * unknown field and every required one, is that unknown field (TypeBox reports missing
 * fields, then unknown ones, then the known fields' values); undefined for any other schema.
 */
function closedObject(schema: Schema): ClosedObject | undefined {
  if (schema[Kind] !== 'Object' || schema.additionalProperties !== false) return undefined;
  if (schema.minProperties !== undefined || schema.maxProperties !== undefined || schema.patternProperties !== undefined) return undefined;
  return { known: new Set(Object.keys(schema.properties as object)), required: (schema.required as string[] | undefined) ?? [] };
}

/**
 * The error for the first field a closed object schema does not know, found without walking
 * the rest of the value: a body of a hundred thousand unknown fields is refused at the first,
 * where the full check and its error report would each walk (and copy) every key.
 */
function firstUnknownField(closed: ClosedObject, value: unknown): FastifySchemaValidationError | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  for (const key of closed.required) if (!Object.hasOwn(value, key)) return undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (closed.known.has(key)) continue;
    return { keyword: 'additionalProperties', instancePath: '', schemaPath: '', params: { additionalProperty: key }, message: 'is not allowed' };
  }
  return undefined;
}

/** Validates bodies without coercion or removal: what is accepted is what was sent. */
const compileStrictValidator: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const checker = TypeCompiler.Compile(schema);
  // Converting and filling defaults each walk the whole value on every request; most path
  // schemas need neither.
  const convert = httpPart !== 'body' && !onlyStrings(schema as Schema);
  const fillDefaults = mayFillDefaults(schema);
  const closed = closedObject(schema as Schema);
  return (data: unknown) => {
    try {
      // The parsed request is this request's own copy, so filling defaults in place is safe.
      let value = convert ? Value.Convert(schema, data) : data;
      if (value !== undefined && fillDefaults) value = Value.Default(schema, value);
      const unknown = closed && firstUnknownField(closed, value);
      if (unknown) return { error: [unknown] };
      // Fastify stores a returned `value` in place of the request's part; a value taken as
      // it came needs no store (`true` passes). No body at all arrives as null and is stored
      // so, as before.
      if (checker.Check(value)) return value === data && data !== null ? true : { value };
      const first = checker.Errors(value).First();
      const error = first
        ? toAjvError(innermost(first))
        : { keyword: 'type', instancePath: '', schemaPath: '', params: {}, message: 'is invalid' };
      return { error: [error] };
    } catch (err) {
      // Converting, filling and checking recurse: a body nested thousands deep overflows the stack.
      if (!(err instanceof RangeError)) throw err;
      return { error: [{ keyword: 'type', instancePath: '', schemaPath: '', params: {}, message: 'is nested too deeply' }] };
    }
  };
};

/** The strict validator of a route's schema, compiled on the route's first request (start-up compiles none). */
export const strictValidatorCompiler = validatorOnFirstUse(compileStrictValidator);
