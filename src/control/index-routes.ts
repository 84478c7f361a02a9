import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { refuseOtherMethods } from '../http/routing.js';
import { PATHS } from '../http/paths.js';

export const ControlIndexSchema = Type.Object(
  {
    operations: Type.Array(
      Type.Object(
        { method: Type.String(), path: Type.String({ description: 'under /_emulator, with {param} for a parameter' }), summary: Type.String() },
        { additionalProperties: false },
      ),
      { description: 'every operation of the control API, in the order the routes are registered' },
    ),
    openapi: Type.String({ description: 'the OpenAPI document, with every body and answer' }),
    docs: Type.String({ description: 'the API reference, to try the operations out' }),
  },
  { additionalProperties: false },
);

export type Operation = { method: string; path: string; summary: string };

/**
 * Collects the control API's operations as `app` registers them (each route's own summary),
 * so that the index lists exactly what is served. Call it before the routes are registered.
 */
export function collectOperations(app: FastifyInstance): Operation[] {
  const operations: Operation[] = [];
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { hide?: boolean; summary?: string } | undefined;
    if (schema?.hide || route.url === PATHS.control || !route.url.startsWith(`${PATHS.control}/`)) return;
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    for (const method of ([] as string[]).concat(route.method)) {
      if (method === 'HEAD' || operations.some((o) => o.method === method && o.path === path)) continue;
      operations.push({ method, path, summary: schema?.summary ?? '' });
    }
  });
  return operations;
}

/** GET /_emulator: an index of the control API, from collectOperations. */
export const controlIndexRoutes: FastifyPluginAsyncTypebox<{ operations: readonly Operation[] }> = async (app, { operations }) => {
  const refuseOthers = refuseOtherMethods(app);
  /** GET /_emulator: what the control API offers. */
  app.get(
    '/',
    { schema: { tags: ['Control'], operationId: 'controlIndex', summary: 'An index of the control API: every operation with its summary', response: { 200: ControlIndexSchema } } },
    async () => ({ operations: [...operations], openapi: PATHS.openapi, docs: PATHS.docs }),
  );
  refuseOthers();
};
