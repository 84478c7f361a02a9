import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import { ErrorBodySchema, badRequest, installErrorHandling } from '../http/errors.js';
import { registerRateLimit } from '../http/rate-limit.js';
import { keepJournalText } from '../http/bodies.js';
import { noContent, type StoreOf } from '../http/routing.js';
import type { AlertStore } from './store.js';
import { AlertParamsSchema, ClearBodySchema, FireBodySchema } from './schemas.js';
import { PATHS } from '../http/paths.js';

/** Where the routes are served: its entry of the path table the client and the dashboard read. */
export const ALERTS_PREFIX = PATHS.alerts;

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorBodySchema]));

/**
 * The body is optional: an empty one, whatever its Content-Type (`curl -d ''` sends a form
 * type), means "no body". A non-empty body must be JSON; anything else is a 400.
 */
function acceptOptionalJson(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    keepJournalText(request, body as string);
    parseJson(request, body as string, done);
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string) === '') return done(null, undefined);
    const type = request.headers['content-type'];
    done(badRequest(type ? `unsupported Content-Type '${type}': send the body as application/json` : 'the body has no Content-Type: send it as application/json'), undefined);
  });
}

/** The alert interface: an external application fires or clears a configured alert. */
export interface AlertOptions {
  store: StoreOf<AlertStore>;
  config: Pick<Config, 'rateLimitMax' | 'rateLimitWindowMs'>;
}

export const alertRoutes: FastifyPluginAsyncTypebox<AlertOptions> = async (app, { store, config }) => {
  installErrorHandling(app, { unsupportedMediaType: 400 });
  acceptOptionalJson(app);

  registerRateLimit(app, {
    max: config.rateLimitMax,
    windowMs: config.rateLimitWindowMs,
    per: 'alert',
    // The counters are the alert store's own: the uid alone is the key.
    key: (request) => (request.params as { uid: string }).uid,
    uncounted: (request) => !store(request).has((request.params as { uid: string }).uid),
    counters: (request) => store(request).rateLimits,
  });

  const tags = ['Alerts'];

  /** POST /<uid>/fire: trigger the alert with the given or the default message and subject. */
  app.post(
    '/:uid/fire',
    {
      schema: {
        tags,
        summary: 'Trigger an alert',
        params: AlertParamsSchema,
        body: FireBodySchema,
        response: { 204: Type.Null(), ...errors(400, 401, 404, 409, 429, 507) },
      },
    },
    async (request, reply) => {
      store(request).fire(request.params.uid, request.body ?? undefined);
      return noContent(reply);
    },
  );

  /** POST /<uid>/clear: clear the alert. */
  app.post(
    '/:uid/clear',
    {
      schema: {
        tags,
        summary: 'Clear an alert',
        params: AlertParamsSchema,
        body: ClearBodySchema,
        response: { 204: Type.Null(), ...errors(400, 401, 404, 409, 429, 507) },
      },
    },
    async (request, reply) => {
      store(request).clear(request.params.uid);
      return noContent(reply);
    },
  );
};
