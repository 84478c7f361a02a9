import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Checks every response a test receives against the OpenAPI document's schema for its
 * route and status. Mismatches are collected here and turned into a failure of the test
 * that received them by the afterEach hook in conformance-setup.ts.
 */

type Json = Record<string, unknown>;
interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: Json }> }>;
}

const mismatches: string[] = [];
const documents = new WeakMap<FastifyInstance, Promise<Json>>();
const validators = new Map<string, ValidateFunction>();
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

/** The mismatches found since the last call. */
export function takeMismatches(): string[] {
  return mismatches.splice(0);
}

/** Fastify's `/grid/:id/action` is the document's `/grid/{id}/action`. */
export function documentPath(routeUrl: string): string {
  return routeUrl.replace(/:([A-Za-z0-9_]+)(\([^)]*\))?/g, '{$1}');
}

function dereferenced(app: FastifyInstance): Promise<Json> {
  let doc = documents.get(app);
  if (!doc) {
    doc = SwaggerParser.dereference(structuredClone(app.swagger()) as never) as unknown as Promise<Json>;
    documents.set(app, doc);
  }
  return doc;
}

function validatorFor(schema: Json): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  return validate;
}

/** What is wrong with one response, or undefined when it matches the document. */
export async function checkResponse(
  app: FastifyInstance,
  route: { method: string; url: string | undefined; hidden: boolean },
  statusCode: number,
  body: string,
): Promise<string | undefined> {
  if (route.url === undefined || route.hidden || route.method === 'HEAD' || route.method === 'OPTIONS') return undefined;
  const doc = await dereferenced(app);
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Operation>>;
  const path = documentPath(route.url);
  const where = `${route.method} ${path} -> ${statusCode}`;
  const operation = (paths[path] ?? paths[path.replace(/\/$/, '')] ?? paths[`${path}/`])?.[route.method.toLowerCase()];
  if (!operation) return `${where}: the route is not in the OpenAPI document`;
  const responses = operation.responses ?? {};
  const response = responses[String(statusCode)] ?? responses[`${String(statusCode)[0]}XX`] ?? responses.default;
  if (!response) return `${where}: status ${statusCode} is not documented (documented: ${Object.keys(responses).join(', ')})`;
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return body === '' ? undefined : `${where}: the document promises no body, got ${JSON.stringify(body.slice(0, 200))}`;
  let value: unknown;
  try {
    value = body === '' ? null : JSON.parse(body);
  } catch {
    return `${where}: the body is not JSON: ${JSON.stringify(body.slice(0, 200))}`;
  }
  const validate = validatorFor(schema);
  if (validate(value)) return undefined;
  const problems = (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '(body)'} ${e.message ?? 'is invalid'}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`);
  return `${where}: the body does not match the documented schema: ${problems.join('; ')}; body: ${body.slice(0, 300)}`;
}

/** Watches every response `app` sends (call before the first request). */
export function watchResponses(app: FastifyInstance): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload == null ? '' : undefined;
    if (body === undefined) return payload; // a stream (static files of the docs page)
    // Fastify drops the payload of a 204/304 after onSend: what the client gets is empty.
    const sent = reply.statusCode === 204 || reply.statusCode === 304 ? '' : body;
    const schema = request.routeOptions.schema as { hide?: boolean } | undefined;
    const route = { method: request.method, url: request.routeOptions.url, hidden: schema?.hide === true };
    try {
      const problem = await checkResponse(app, route, reply.statusCode, sent);
      if (problem) mismatches.push(problem);
    } catch (err) {
      mismatches.push(`${request.method} ${request.url}: cannot check the response: ${(err as Error).message}`);
    }
    return payload;
  });
}
