/** Fastify's internal symbols module (no declarations of its own); see route-context.ts. */
declare module 'fastify/lib/symbols.js' {
  const symbols: Record<string, symbol>;
  export default symbols;
}
