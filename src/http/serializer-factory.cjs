'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS module on purpose, see below */
// Plain CommonJS, copied as it is into both builds (like core/package-root.cjs): `require` here
// runs when called, so that fast-json-stringify and the Ajv it loads are read on the first
// response that needs a serializer, not at start-up (an import would load them with the
// module). A bundler sees the require and keeps the module, unevaluated until then.
// Types: serializer-factory.d.cts.

let factory;

/** The serializer factory Fastify builds when given none: fast-json-stringify through its Fastify compiler. */
function defaultSerializerFactory() {
  if (factory === undefined) factory = require('@fastify/fast-json-stringify-compiler')();
  return factory;
}

module.exports = { defaultSerializerFactory };
