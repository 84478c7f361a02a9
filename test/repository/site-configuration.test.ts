import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp } from '../helpers/app.js';
import { REPOSITORY_PREFIX as R } from '../../src/repository/routes.js';

let app: FastifyInstance;
afterEach(() => app?.close());

const T = { 'x-auth-token': 'demo-token' };

async function logIn(userName: string, password: string): Promise<Record<string, string>> {
  const res = await app.inject({ method: 'PUT', url: `${R}/Tokens`, payload: { userName, password } });
  return { 'x-auth-token': res.json().token };
}

describe('the site configuration object', () => {
  it('is there in a seed that gives none (id 1), with the default boomerang version, and left out of an export until changed', async () => {
    ({ app } = await makeDemoApp());
    const res = await app.inject({ url: `${R}/Objects/siteconfiguration/1`, headers: T });
    expect(res.statusCode).toBe(200);
    const object = res.json();
    expect(object).toMatchObject({ id: 1, type: 'siteconfiguration', name: 'Site Configuration' });
    expect(object.attributes).toContainEqual({ name: 'boomerangDefaultVersion', value: '1.737.0' });
    const listed = (await app.inject({ url: `${R}/Objects/siteconfiguration`, headers: T })).json().objects;
    expect(listed.map((o: { id: number }) => o.id)).toEqual([1]);
    const exported = (await app.inject({ url: '/_emulator/state' })).json();
    expect(exported.objects.some((o: { type: string }) => o.type === 'siteconfiguration')).toBe(false);
  });

  it("takes the boomerang version a tool sets, keeps it through an export and import, and every tenant reads the site's one", async () => {
    ({ app } = await makeDemoApp());
    const set = await app.inject({
      method: 'POST',
      url: `${R}/Objects/siteconfiguration/1`,
      headers: T,
      payload: { attributes: [{ name: 'boomerangDefaultVersion', value: '1.803.70' }] },
    });
    expect(set.statusCode).toBe(204);
    const read = async (headers: Record<string, string>) =>
      (await app.inject({ url: `${R}/Objects/siteconfiguration/1`, headers })).json().attributes.find((a: { name: string }) => a.name === 'boomerangDefaultVersion')?.value;
    expect(await read(T)).toBe('1.803.70');
    // A user of another tenant of the demo seed sees the same object.
    expect(await read(await logIn('ops@acme.example', 'acme-ops'))).toBe('1.803.70');
    const state = (await app.inject({ url: '/_emulator/state' })).json();
    await app.inject({ method: 'POST', url: '/_emulator/reset' });
    expect(await read(T)).toBe('1.737.0');
    expect((await app.inject({ method: 'PUT', url: '/_emulator/state', payload: state })).statusCode).toBe(200);
    expect(await read(T)).toBe('1.803.70');
  });

  it('is neither made a second time nor deleted (409 saying why)', async () => {
    ({ app } = await makeDemoApp());
    const made = await app.inject({ method: 'PUT', url: `${R}/Objects`, headers: T, payload: { type: 'siteconfiguration', name: 'Another' } });
    expect(made.statusCode).toBe(409);
    expect(made.json().message).toContain('the site has one siteconfiguration object');
    const gone = await app.inject({ method: 'DELETE', url: `${R}/Objects/siteconfiguration/1`, headers: T });
    expect(gone.statusCode).toBe(409);
    expect((await app.inject({ url: `${R}/Objects/siteconfiguration/1`, headers: T })).statusCode).toBe(200);
  });
});
