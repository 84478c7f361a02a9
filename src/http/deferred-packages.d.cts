import type { FastifyPluginAsync, FastifyPluginCallback } from 'fastify';
import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyStaticOptions } from '@fastify/static';

/** @fastify/swagger's plugin function (not wrapped by fastify-plugin), loaded on the first call. */
export declare function swaggerPlugin(): FastifyPluginCallback<SwaggerOptions>;
/** @fastify/swagger-ui's plugin function (not wrapped by fastify-plugin), loaded on the first call. */
export declare function swaggerUiPlugin(): FastifyPluginAsync<FastifySwaggerUiOptions>;
/** @fastify/static's plugin function (not wrapped by fastify-plugin), loaded on the first call. */
export declare function staticPlugin(): FastifyPluginAsync<FastifyStaticOptions>;
