import { describe, expect, it, vi } from 'vitest';

/**
 * Route schemas are compiled on a route's first use (src/http/compile-on-first-use.ts), so a
 * schema that fast-json-stringify or the strict validator cannot compile no longer stops the
 * server from starting: it would answer 500 on that route's first request instead. Here both
 * compilers are made eager again, as Fastify's default is, and every route of the app must
 * compile, each request part and each response status.
 */
const compiled = { validators: 0, serializers: 0 };

vi.mock('../../src/http/compile-on-first-use.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/http/compile-on-first-use.js')>();
  const { defaultSerializerFactory } = await import('../../src/http/serializer-factory.cjs');
  return {
    ...real,
    validatorOnFirstUse: ((compile) => (routeSchema) => {
      compiled.validators++;
      return compile(routeSchema);
    }) as typeof real.validatorOnFirstUse,
    serializerOnFirstUse: ((externalSchemas, options) => {
      const compile = defaultSerializerFactory()(externalSchemas, options);
      return (routeSchema) => {
        compiled.serializers++;
        return compile(routeSchema);
      };
    }) as typeof real.serializerOnFirstUse,
  };
});

describe('every route schema', () => {
  it('compiles, as it would have at start-up, in each sandbox mode', async () => {
    const { buildApp } = await import('../../src/app.js');
    for (const sandboxes of ['auto', 'off'] as const) {
      const app = await buildApp({ config: { sandboxes, adminToken: 'admin', stateFile: undefined } });
      await expect(app.ready()).resolves.toBe(app);
      await app.close();
    }
    // Dozens of each: the compilers above were the ones in use.
    expect(compiled.validators).toBeGreaterThan(50);
    expect(compiled.serializers).toBeGreaterThan(50);
  });
});
