import { Type, type Static } from '@sinclair/typebox';

export const DomainSeedSchema = Type.Object(
  { id: Type.Integer({ minimum: 1 }), name: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);
export type DomainSeed = Static<typeof DomainSeedSchema>;

export const AnnotationSeedSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    title: Type.String(),
    text: Type.String(),
    start: Type.Integer({ description: 'UTC epoch ms' }),
    end: Type.Optional(Type.Integer({ description: 'UTC epoch ms; only for ranges' })),
    domainIds: Type.Array(Type.Integer({ minimum: 1 }), { default: [] }),
    lastModified: Type.Optional(Type.Integer()),
    source: Type.String({ default: 'REST API' }),
    type: Type.String({ default: 'USER_ENTERED' }),
    user: Type.String(),
  },
  { additionalProperties: false },
);
export type AnnotationSeed = Static<typeof AnnotationSeedSchema>;
