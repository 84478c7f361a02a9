import type { FastifyRequest } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import { ErrorBodySchema, installErrorHandling, notFound } from '../http/errors.js';
import { refuseOtherMethods, type StoreOf } from '../http/routing.js';
import { registerRateLimit } from '../http/rate-limit.js';
import { EMPTY_QUERY_TYPES, QUERY_TYPES, type QueryStore, type QueryType } from './store.js';
import { QueryParamsSchema, QueryQuerySchema, type QueryQuery } from './schemas.js';

export const QUERY_PREFIX = '/concerto/mpulse/api/v2';

/** The code the service puts beside the message of a refused parameter; clients branch on it. */
export const INVALID_PARAMETER = 'MPulseAPIException.InvalidParameter';

/** A refused query: the shared error body, plus the service's code for a bad parameter. */
const QueryErrorBodySchema = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String(),
  message: Type.String(),
  code: Type.Optional(Type.String({ description: `${INVALID_PARAMETER} for a refused parameter` })),
});

const nullableString = Type.Union([Type.String(), Type.Null()]);
const SummarySchema = Type.Object(
  { median: nullableString, moe: nullableString, n: nullableString, p95: nullableString, p98: nullableString },
  { additionalProperties: false, description: 'numbers as strings; all null when there is no data' },
);
const SeriesSchema = Type.Union([Type.String(), Type.Null(), Type.Object({ series: Type.Array(Type.Object({}, { additionalProperties: true })) })], {
  description: 'a JavaScript literal in a string (series-format=js, the default), or the object itself (series-format=json)',
});
const ChartSchema = Type.Object(
  {
    chartTitle: Type.String(),
    chartTitleSuffix: nullableString,
    datasetName: Type.String(),
    reportType: Type.String(),
    resultName: Type.Null(),
    series: SeriesSchema,
  },
  { additionalProperties: false },
);
const TableSchema = Type.Object(
  { columnNames: Type.Array(Type.String()), data: Type.Array(Type.Array(Type.Union([Type.String(), Type.Number(), Type.Null()]))) },
  { additionalProperties: false },
);
const TimersMetricsSchema = Type.Object(
  {
    dataTimeZone: Type.String(),
    values: Type.Array(Type.Object({ history: Type.Array(Type.Number()), id: Type.String(), latest: Type.Number() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
const GeographySchema = Type.Object(
  {
    data: Type.Array(
      Type.Object({ country: Type.String(), timerN: Type.String(), timerMedian: Type.String(), timerID: Type.String() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
const DimensionValuesSchema = Type.Object({ values: Type.Array(Type.String()) }, { additionalProperties: false });

const RESPONSES: Record<QueryType, TSchema> = {
  summary: SummarySchema,
  histogram: ChartSchema,
  'by-minute': ChartSchema,
  'timers-metrics': TimersMetricsSchema,
  'page-groups': TableSchema,
  browsers: TableSchema,
  'ab-tests': TableSchema,
  geography: GeographySchema,
  bandwidth: ChartSchema,
  'metrics-by-dimension': TableSchema,
  'dimension-values': DimensionValuesSchema,
  'sessions-per-page-load-time': ChartSchema,
  'metric-per-page-load-time': ChartSchema,
};
const SUMMARIES: Record<QueryType, string> = {
  summary: 'Median, margin of error, count, 95th and 98th percentiles of a timer',
  histogram: 'The distribution of a timer in load-time buckets',
  'by-minute': "A timer's median per minute (per hour, per day for longer ranges)",
  'timers-metrics': 'Timers and metrics over time, with their value over the whole range',
  'page-groups': 'A timer per page group',
  browsers: 'A timer per browser',
  'ab-tests': 'A timer per A/B test',
  geography: 'A timer per country',
  bandwidth: 'Beacons per bandwidth block',
  'metrics-by-dimension': 'Metrics per value of a dimension',
  'dimension-values': 'The values of a dimension that have beacons',
  'sessions-per-page-load-time': 'Sessions per load-time bucket',
  'metric-per-page-load-time': 'A metric (BounceRate, a custom metric) per load-time bucket',
};

export interface QueryOptions {
  store: StoreOf<QueryStore>;
  config: Pick<Config, 'rateLimitMax' | 'rateLimitWindowMs'>;
}

/** The session token as the Query API takes it: `Authentication` (as the clients send it) or `X-Auth-Token`. */
function tokenOf(request: FastifyRequest): string {
  const header = request.headers.authentication ?? request.headers['x-auth-token'];
  return request.session?.token ?? String(header);
}

/** The Query API: `GET <app key>/<query type>` answers real-user data of the app's domain. */
export const queryRoutes: FastifyPluginAsyncTypebox<QueryOptions> = async (app, { store, config }) => {
  const refuseOthers = refuseOtherMethods(app);
  // A refused parameter carries the service's code beside the shared body: clients branch on it.
  installErrorHandling(app, { unsupportedMediaType: 400, domainErrorFields: (e) => (e.kind === 'invalid' ? { code: INVALID_PARAMETER } : undefined) });

  registerRateLimit(app, {
    max: config.rateLimitMax,
    windowMs: config.rateLimitWindowMs,
    per: 'user',
    // Per user (a new log-in must not reset the budget), in the request's world. The root guard
    // has already refused requests without a valid token.
    key: (request) => request.session?.userName ?? `token ${tokenOf(request)}`,
    counters: (request) => store(request).rateLimits,
  });

  const tags = ['Query API'];
  const errors = { 400: QueryErrorBodySchema, 401: ErrorBodySchema, 403: ErrorBodySchema, 404: ErrorBodySchema, 429: ErrorBodySchema };
  const tenant = (request: FastifyRequest) => request.session?.tenant;

  for (const type of QUERY_TYPES) {
    /** GET /<app key>/<type>: one query type, with its own body. */
    app.get(
      `/:apiKey/${type}`,
      {
        schema: {
          tags,
          summary: SUMMARIES[type],
          params: Type.Object({ apiKey: QueryParamsSchema.properties.apiKey }),
          querystring: QueryQuerySchema,
          response: { 200: RESPONSES[type], ...errors },
        },
      },
      async (request) => store(request).query(request.params.apiKey, type, request.query as QueryQuery, tenant(request)),
    );
  }

  /** GET /<app key>/<type>: the other documented types answer "no data"; an unknown type is 404. */
  app.get(
    '/:apiKey/:queryType',
    {
      schema: {
        tags,
        summary: 'Other documented query types: app-error-summary (the JavaScript errors and their counts), dimension-over-time (the beacons of each value of a dimension over time)',
        params: QueryParamsSchema,
        querystring: QueryQuerySchema,
        response: { 200: Type.Union([ChartSchema, TableSchema]), ...errors },
      },
    },
    async (request) => {
      const { apiKey, queryType } = request.params;
      const known = (EMPTY_QUERY_TYPES as readonly string[]).includes(queryType);
      if (!known) {
        throw notFound(`'${queryType}' is not a query type; known: ${[...QUERY_TYPES, ...EMPTY_QUERY_TYPES].join(', ')}`);
      }
      return store(request).emptyQuery(apiKey, queryType as (typeof EMPTY_QUERY_TYPES)[number], request.query as QueryQuery, tenant(request)) as never;
    },
  );
  refuseOthers();
};
