import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { badRequest } from '../core/errors.js';

/** "/action/status" -> "action.status" */
function fieldOf(path: string): string {
  return path.split('/').slice(1).join('.');
}

function describe(part: string, error: ValueError): string {
  const field = fieldOf(error.path);
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return `${part}: missing required field '${field}'`;
    case ValueErrorType.ObjectAdditionalProperties:
      return `${part}: unknown field '${field}'`;
    default: {
      const what = error.message.charAt(0).toLowerCase() + error.message.slice(1);
      return field ? `${part} field '${field}': ${what}` : `${part}: ${what}`;
    }
  }
}

/**
 * Strict validation for the control API. Fastify's default Ajv settings drop unknown fields
 * and coerce "5" into 5 in bodies; for a control API a typo such as {"sclae": 2} must be a
 * 400 naming the field, not a silent no-op. Path and query values arrive as text, so they
 * are converted first; bodies are taken as sent. Defaults of the schema are filled in.
 */
export const strictValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const checker = TypeCompiler.Compile(schema);
  const part = httpPart === 'querystring' ? 'query' : (httpPart ?? 'request');
  const convert = httpPart !== 'body';
  return (data: unknown) => {
    try {
      let value = data === undefined || data === null ? data : Value.Clone(data);
      if (convert) value = Value.Convert(schema, value);
      if (value !== undefined) value = Value.Default(schema, value);
      if (checker.Check(value)) return { value };
      const first = checker.Errors(value).First();
      return { error: badRequest(first ? describe(part, first) : `${part} is invalid`) };
    } catch (err) {
      // Cloning and checking recurse: a body nested thousands deep overflows the stack.
      if (err instanceof RangeError) return { error: badRequest(`${part} is nested too deeply`) };
      throw err;
    }
  };
};
