import fastJson from 'fast-json-stringify';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { literals, serializationSchema } from '../../src/core/schema.js';
import { HealthSchema, SeedStatusSchema } from '../../src/control/schemas.js';

describe('a response schema as its serializer is given it', () => {
  it('writes every valid value of a union of scalars as the union itself does', () => {
    const schema = Type.Object({
      status: literals(['ok', 'degraded']),
      unlisted: Type.Union([Type.Integer({ minimum: 0 }), Type.Boolean()]),
      to: Type.Union([Type.Literal('next'), Type.Integer({ minimum: 0 }), Type.String({ minLength: 1 })]),
      maybe: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      list: Type.Array(Type.Object({ kind: literals(['a', 'b']) })),
    });
    const declared = fastJson(schema);
    const rewritten = fastJson(serializationSchema(schema));
    for (const value of [
      { status: 'ok', unlisted: 0, to: 'next', list: [] },
      { status: 'degraded', unlisted: true, to: 12, maybe: null, list: [{ kind: 'a' }, { kind: 'b' }] },
      { status: 'ok', unlisted: false, to: 'a "quoted" \u2028 text', maybe: 'x', list: [{ kind: 'b' }] },
    ]) {
      expect(rewritten(value)).toBe(declared(value));
    }
  });

  it('leaves the declared schema as it is, and unions of objects or of an integer and a number alone', () => {
    const objects = Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Integer() })]);
    const numbers = Type.Union([Type.Integer(), Type.Number()]);
    const formatted = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
    expect(serializationSchema(objects)).toBe(objects);
    expect(serializationSchema(numbers)).toBe(numbers);
    expect(serializationSchema(formatted)).toBe(formatted);
    const before = JSON.stringify(HealthSchema);
    const rewritten = serializationSchema(HealthSchema);
    expect(JSON.stringify(HealthSchema)).toBe(before);
    expect(rewritten).not.toBe(HealthSchema);
    // Parts without such a union are the same objects.
    expect(rewritten.properties.counts).toBe(HealthSchema.properties.counts);
    expect(JSON.stringify(rewritten)).not.toContain('anyOf');
  });

  it('writes a health answer with a seed the same as the declared schema does', () => {
    const seed = { status: 'error', problems: [{ file: 'a.json', line: 1, column: 2, path: '$.x', message: 'm', text: 't' }], unlisted: true, loadedAt: '2026-01-01T00:00:00.000Z', checkedAt: '2026-01-01T00:00:00.000Z', watching: true, serving: 'fixtures' };
    expect(fastJson(serializationSchema(SeedStatusSchema))(seed)).toBe(fastJson(SeedStatusSchema)(seed));
  });
});
