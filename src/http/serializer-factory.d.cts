import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

/** The serializer factory Fastify builds when given none (fast-json-stringify), loaded on the first call. */
export declare function defaultSerializerFactory(): SerializerFactory;
