import { Type, type Static } from '@sinclair/typebox';

export const AlertSeedSchema = Type.Object(
  {
    uid: Type.String({ minLength: 1, description: 'opaque id used in the webhook path' }),
    name: Type.String({ minLength: 1 }),
    enabled: Type.Boolean({ default: true }),
  },
  { additionalProperties: false },
);
export type AlertSeed = Static<typeof AlertSeedSchema>;
