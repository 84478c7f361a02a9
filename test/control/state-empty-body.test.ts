import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp, PATHS } from '../helpers/app.js';

let app: FastifyInstance;
afterEach(async () => app?.close());

describe('state import without a body', () => {
  it('PUT /_emulator/state with no body and no Content-Type is a 400, not a 500', async () => {
    ({ app } = await makeDemoApp());
    const res = await app.inject({ method: 'PUT', url: `${PATHS.CONTROL}/state`, payload: '' });
    expect(res.statusCode, res.body).toBe(400);
  });
});
