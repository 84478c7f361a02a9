import { Type, type Static } from '@sinclair/typebox';

/**
 * The one error body every interface answers with. A module of its own, with no Fastify in
 * it: the typed client names this type, and its declarations must not reach the server's.
 */
export const ErrorBodySchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String({ description: 'HTTP reason phrase' }),
    message: Type.String({ description: 'what was wrong' }),
  },
  { $id: 'ErrorBody' },
);
export type ErrorBody = Static<typeof ErrorBodySchema>;
