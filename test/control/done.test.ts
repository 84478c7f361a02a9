/**
 * The control API's promise, shown the way an integration test in another project would use
 * it: only HTTP calls, against the bundled demo seed, authenticated with the demo token.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp } from '../helpers/app.js';

const CLOUD = '/concerto/services/rest/CloudService/v1';
const REPO = '/concerto/services/rest/RepositoryService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const DEMO = { 'x-auth-token': 'demo-token' };

let app: FastifyInstance;
afterEach(async () => app?.close());

async function http(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  const res = await app.inject({ method, url, headers: DEMO, ...(payload === undefined ? {} : { payload: payload as object }) });
  return { status: res.statusCode, body: res.body ? res.json() : undefined };
}

/** The first grid of the demo seed, found the way a real client finds one. */
async function demoGridId(): Promise<number> {
  const { body } = await http('GET', `${REPO}/Objects/grid`);
  expect(body.objects.length).toBeGreaterThan(0);
  return body.objects[0].id;
}

const annotation = (title: string) => ({ title, text: 'deploy', start: Date.UTC(2026, 10, 22, 8, 0, 0) });

describe('an integration test steering the emulator over HTTP', () => {
  it('resets to the demo seed after changes', async () => {
    ({ app } = await makeDemoApp());
    const seed = (await http('GET', '/_emulator/state')).body;
    const gridId = await demoGridId();

    expect((await http('POST', `${CLOUD}/grid/${gridId}/action`, { action: 'start' })).status).toBe(202);
    expect((await http('POST', ANNOTATIONS, annotation('Release 42'))).status).toBe(200);
    expect((await http('POST', `${ALERTS}/demo-alert/fire`, { message: 'changed' })).status).toBe(204);
    expect((await http('PUT', `${REPO}/Tokens`, { userName: 'demo@example.com', password: 'demo' })).status).toBe(200);
    expect((await http('GET', '/_emulator/state')).body).not.toEqual(seed);

    expect((await http('POST', '/_emulator/reset')).status).toBe(200);
    expect((await http('GET', '/_emulator/state')).body).toEqual(seed);
  });

  it('fast-forwards a started demo grid to CHECKED in one call', async () => {
    ({ app } = await makeDemoApp());
    const gridId = await demoGridId();
    await http('PUT', `/_emulator/lifecycles/grid/${gridId}/next-start`, { outcome: 'CHECKED' });
    expect((await http('POST', `${CLOUD}/grid/${gridId}/action`, { action: 'start' })).body.state).toBe('ALLOCATING');

    const advanced = await http('POST', '/_emulator/clock/advance', { until: { kind: 'grid', id: gridId } });
    expect(advanced.status).toBe(200);
    expect(advanced.body.advancedMs).toBeGreaterThan(0);
    const grid = (await http('GET', `${CLOUD}/grid/${gridId}`)).body;
    expect(grid).toMatchObject({ state: 'CHECKED', isFinal: true });
  });

  it('forces the next start of a grid to fail', async () => {
    ({ app } = await makeDemoApp());
    const gridId = await demoGridId();
    expect((await http('PUT', `/_emulator/lifecycles/grid/${gridId}/next-start`, { outcome: 'ALLOCATE_FAILED' })).status).toBe(200);
    await http('POST', `${CLOUD}/grid/${gridId}/action`, { action: 'start' });
    await http('POST', '/_emulator/clock/advance', { until: { kind: 'grid', id: gridId } });
    expect((await http('GET', `${CLOUD}/grid/${gridId}`)).body).toMatchObject({ state: 'ALLOCATE_FAILED', isFinal: true });
  });

  it('injects a 503 on the next two annotation posts; the third succeeds', async () => {
    ({ app } = await makeDemoApp());
    const rule = await http('POST', '/_emulator/faults', { method: 'POST', path: `${ANNOTATIONS}*`, action: { status: 503 }, times: 2 });
    expect(rule.status).toBe(201);

    const statuses = [];
    for (const title of ['one', 'two', 'three']) statuses.push((await http('POST', ANNOTATIONS, annotation(title))).status);
    expect(statuses).toEqual([503, 503, 200]);
    // Reads were never affected, and only the third annotation exists.
    const titles = (await http('GET', ANNOTATIONS)).body.map((a: { title: string }) => a.title);
    expect(titles).toContain('three');
    expect(titles).not.toContain('one');

    const journal = (await http('GET', `/_emulator/journal?method=POST&pathPrefix=${ANNOTATIONS}`)).body.entries;
    expect(journal.map((e: { status: number }) => e.status)).toEqual([200, 503, 503]);
  });

  it('reads what an alert received', async () => {
    ({ app } = await makeDemoApp());
    const fired = await http('POST', `${ALERTS}/demo-alert/fire`, { message: 'Checkout errors at 7%', subject: 'Checkout' });
    expect(fired.status).toBe(204);
    const alert = (await http('GET', '/_emulator/alerts/demo-alert')).body;
    expect(alert.state).toBe('firing');
    expect(alert.history).toContainEqual(expect.objectContaining({ action: 'fire', message: 'Checkout errors at 7%', subject: 'Checkout' }));
  });

  it('exports the state, and re-imports it after changes to get the old state back', async () => {
    ({ app } = await makeDemoApp());
    const exported = (await http('GET', '/_emulator/state')).body;
    const gridId = await demoGridId();
    await http('POST', `${CLOUD}/grid/${gridId}/action`, { action: 'start' });
    await http('POST', ANNOTATIONS, annotation('after the export'));
    await http('PATCH', '/_emulator/alerts/demo-alert', { enabled: false });

    expect((await http('PUT', '/_emulator/state', exported)).status).toBe(200);
    expect((await http('GET', '/_emulator/state')).body).toEqual(exported);
    expect((await http('GET', `${CLOUD}/grid/${gridId}`)).body.state).toBe('LOADED');
    expect((await http('POST', `${ALERTS}/demo-alert/fire`)).status).toBe(204);
  });

  it('refuses a bad import with 400 naming the JSON path, and keeps the old state', async () => {
    ({ app } = await makeDemoApp());
    const before = (await http('GET', '/_emulator/state')).body;
    const broken = structuredClone(before);
    broken.annotations[3].start = 'yesterday';
    const res = await http('PUT', '/_emulator/state', broken);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('$.annotations[3].start');
    expect((await http('GET', '/_emulator/state')).body).toEqual(before);
  });
});
