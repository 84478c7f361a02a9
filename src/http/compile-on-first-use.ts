import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import { defaultSerializerFactory } from './serializer-factory.cjs';

/**
 * Route schemas compiled when a route is first used rather than when the server starts.
 * Fastify compiles a validator for every part of every route's request and a serializer for
 * every response status at start-up; the server has dozens of routes, most of which a run
 * never calls, and compiling them all (and loading the serializer compiler with its own
 * validator library) was most of the time from spawn to the first answer. What a route does
 * is the same either way: the very compiler Fastify would run, on the same schema, once.
 */

/** A validator compiler that compiles a route's schema on the route's first request. */
export function validatorOnFirstUse<T>(compile: FastifySchemaCompiler<T>): FastifySchemaCompiler<T> {
  return (routeSchema) => {
    let validate: ReturnType<FastifySchemaCompiler<T>> | undefined;
    return (data) => (validate ??= compile(routeSchema))(data);
  };
}

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type SerializerFactory = NonNullable<CompilersFactory['buildSerializer']>;

/**
 * `compiler` as the validator factory of `schemaController.compilersFactory`: Fastify then
 * never loads its default one (Ajv). Its type is Ajv's; Fastify calls it with
 * (externalSchemas, options) and uses what it returns as the validator compiler.
 */
export function validatorFactory<T>(compiler: FastifySchemaCompiler<T>): CompilersFactory['buildValidator'] {
  return (() => compiler) as unknown as CompilersFactory['buildValidator'];
}

/**
 * Fastify's default serializer factory (what it uses when given none), building each
 * response serializer on its first use. For `schemaController.compilersFactory.buildSerializer`.
 */
export const serializerOnFirstUse: SerializerFactory = (externalSchemas, serializerOptions) => {
  let compiler: ReturnType<SerializerFactory> | undefined;
  return (routeSchema) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data) => {
      if (serialize === undefined) {
        compiler ??= defaultSerializerFactory()(externalSchemas, serializerOptions);
        serialize = compiler(routeSchema);
      }
      return serialize(data);
    };
  };
};

/**
 * Loads the serializer compiler (fast-json-stringify and the Ajv it brings) and compiles one
 * small serializer, in a turn of the event loop of its own just after the server listens. Left
 * to the first response that needs it, this one-time load (about 30 ms from the bundle, 70 ms
 * from node_modules) adds to whatever that request holds the loop for; the first list of a
 * large repository type then held it for about 40 ms instead of 10. It waits LOAD_DELAY_MS, so
 * that the first requests of a start-up (a health check that waits for the server) are
 * answered first.
 */
export function loadSerializerCompilerSoon(): void {
  setTimeout(() => {
    type Compile = (route: { schema: unknown; method: string; url: string; httpStatus: string }) => (data: unknown) => string;
    const compile = defaultSerializerFactory()({}, {}) as unknown as Compile;
    compile({ schema: { type: 'object', properties: { loaded: { type: 'boolean' } } }, method: 'GET', url: '/', httpStatus: '200' })({ loaded: true });
  }, LOAD_DELAY_MS).unref();
}

/** How long after listening the serializer compiler is loaded. */
const LOAD_DELAY_MS = 25;
