import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, authSeed, makeApp } from '../helpers/app.js';

const REPO = '/concerto/services/rest/RepositoryService/v1';

let app: FastifyInstance;
afterEach(async () => app?.close());

const journal = async (query = '') => {
  const res = await app.inject({ url: `/_emulator/journal${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('request journal', () => {
  it('records method, path, query, status, duration and emulated time, newest first', async () => {
    let clock;
    ({ app, clock } = await makeApp(authSeed()));
    await app.inject({ url: `${REPO}/Objects/grid?name=Demo%20grid`, headers: AUTH });
    clock.advance(5000);
    await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { userName: 'nobody', password: 'x' } });
    const { size, total, entries } = await journal();
    expect(size).toBe(1000);
    expect(total).toBe(2);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ method: 'PUT', path: `${REPO}/Tokens`, status: 401, time: T0 + 5000 });
    expect(entries[0].query).toBeUndefined();
    expect(entries[1]).toMatchObject({ method: 'GET', path: `${REPO}/Objects/grid`, query: 'name=Demo%20grid', status: 200, time: T0 });
    expect(entries[0].id).toBeGreaterThan(entries[1].id);
    expect(entries[1].durationMs).toBeGreaterThanOrEqual(0);
    expect(entries[1].faulted).toBeUndefined();
  });

  it('filters by method, path prefix, exact status or status class, and limits', async () => {
    ({ app } = await makeApp(authSeed()));
    await app.inject({ url: `${REPO}/Objects/grid`, headers: AUTH });
    await app.inject({ url: `${REPO}/Objects/grid` });
    await app.inject({ url: '/nowhere' });
    await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: {} });
    expect((await journal('?method=get')).entries).toHaveLength(3);
    expect((await journal(`?pathPrefix=${REPO}/Objects`)).entries.map((e: { status: number }) => e.status)).toEqual([401, 200]);
    expect((await journal('?status=404')).entries.map((e: { path: string }) => e.path)).toEqual(['/nowhere']);
    expect((await journal('?status=4xx')).entries).toHaveLength(3);
    expect((await journal('?status=2xx')).entries).toHaveLength(1);
    const limited = await journal('?limit=2');
    expect(limited.entries.map((e: { method: string }) => e.method)).toEqual(['PUT', 'GET']);
  });

  it('refuses bad filters with 400 naming the parameter', async () => {
    ({ app } = await makeApp(authSeed()));
    for (const [query, field] of [['?status=abc', 'status'], ['?limit=0', 'limit'], ['?limit=x', 'limit'], ['?method=G%20T', 'method'], ['?colour=red', 'colour']]) {
      const res = await app.inject({ url: `/_emulator/journal${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().message, query).toContain(`'${field}'`);
    }
  });

  it('keeps only the last JOURNAL_SIZE requests, and counts the ones pushed out', async () => {
    ({ app } = await makeApp(authSeed(), { journalSize: 5 }));
    for (let i = 0; i < 12; i++) await app.inject({ url: `/nowhere/${i}` });
    const { size, total, entries } = await journal();
    expect(size).toBe(5);
    expect(total).toBe(12);
    expect(entries.map((e: { path: string }) => e.path)).toEqual(['/nowhere/11', '/nowhere/10', '/nowhere/9', '/nowhere/8', '/nowhere/7']);
  });

  it('records nothing with JOURNAL_SIZE=0', async () => {
    ({ app } = await makeApp(authSeed(), { journalSize: 0 }));
    await app.inject({ url: '/nowhere' });
    expect(await journal()).toEqual({ size: 0, total: 0, entries: [] });
  });

  it('leaves out calls to the control API itself', async () => {
    ({ app } = await makeApp(authSeed()));
    await app.inject({ url: '/_emulator/health' });
    await app.inject({ url: '/_emulator/faults' });
    await journal();
    await app.inject({ url: '/nowhere' });
    expect((await journal()).entries.map((e: { path: string }) => e.path)).toEqual(['/nowhere']);
  });

  it('is emptied by DELETE and by a reset', async () => {
    ({ app } = await makeApp(authSeed()));
    await app.inject({ url: '/nowhere' });
    expect((await app.inject({ method: 'DELETE', url: '/_emulator/journal' })).statusCode).toBe(204);
    expect((await journal()).entries).toEqual([]);
    await app.inject({ url: '/nowhere' });
    expect((await journal()).entries).toHaveLength(1);
    expect((await app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode).toBe(200);
    expect(await journal()).toMatchObject({ total: 0, entries: [] });
  });
});
