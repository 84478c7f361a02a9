'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS module on purpose, see below */
// Packages a start does not need, each loaded on the first call of its function: the API
// reference, the OpenAPI document and the dashboard's files are served by them, and a start
// answers none of these. Plain CommonJS, copied as it is into both builds (see
// core/package-root.cjs), so that loading is a synchronous require() everywhere: the document
// is asked for synchronously (app.swagger()). The process bundle (scripts/build.mjs) leaves
// them out, so a start neither compiles nor runs their code. Types: deferred-packages.d.cts.

/** @fastify/swagger's plugin function (not wrapped by fastify-plugin). */
exports.swaggerPlugin = () => require('@fastify/swagger').fastifySwagger;

/** @fastify/swagger-ui's plugin function (not wrapped by fastify-plugin). */
exports.swaggerUiPlugin = () => require('@fastify/swagger-ui').fastifySwaggerUi;

/** @fastify/static's plugin function (not wrapped by fastify-plugin). */
exports.staticPlugin = () => require('@fastify/static').fastifyStatic;
