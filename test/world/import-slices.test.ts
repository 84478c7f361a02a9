import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { ManualClock } from '../../src/core/clock.js';
import { FixtureError } from '../../src/core/fixtures.js';
import { emptyState, parseState, type State } from '../../src/state.js';
import { T0 } from '../helpers/app.js';
import { turnsDuring } from '../helpers/loop.js';

/**
 * A large imported state is taken in without holding the event loop: what building its
 * stores takes long for (the annotations sorted and indexed) is worked out beforehand in
 * slices (World.prepare), so that the replace itself is one short step, and an import it
 * refuses changes nothing.
 */

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const DOMAIN = { id: 9001, name: 'www.example.com', apiKey: 'KEY-1' };

/** A state of `n` annotations, in reverse start order (so that sorting has work to do), as sent. */
function rawStateOf(n: number, extra: object[] = []) {
  const annotations = Array.from({ length: n }, (_, i) => ({
    id: 2_000_000 + i,
    title: `Deploy ${i}`,
    text: 'rolled out',
    start: T0 - i * 60_000,
    domainIds: [DOMAIN.id],
    user: 'someone@example.com',
  }));
  return { ...emptyState(), domains: [DOMAIN], annotations: [...annotations, ...extra] };
}

/** The same state, checked (as an import checks it). */
const stateOf = (n: number): State => parseState(rawStateOf(n), 'test');

async function app(): Promise<FastifyInstance> {
  const built = await buildApp({ clock: new ManualClock(T0), fixtures: emptyState() });
  apps.push(built);
  return built;
}

describe('importing a large state', () => {
  it('prepares it in slices that let the event loop turn, and changes nothing until the replace', async () => {
    const a = await app();
    const state = stateOf(150_000);
    const { turns } = await turnsDuring(() => a.world.prepare(state));
    expect(turns).toBeGreaterThan(1);
    // Nothing changed yet.
    expect(a.world.counts().annotations).toBe(0);
    a.world.replace(state);
    expect(a.world.counts().annotations).toBe(150_000);
    const list = a.world.stores.annotations.list({ from: T0 - 2 * 60_000 });
    expect(list.map((x) => x.id)).toEqual([2_000_002, 2_000_001, 2_000_000]);
  });

  it('refuses a state the stores cannot be built from before anything changes', async () => {
    const a = await app();
    const before = a.world.stores;
    // Past the loader's checks (which refuse it first), the stores' own refusal is the safety net.
    const bad = stateOf(20_000);
    (bad.annotations as object[]).push({ id: 9_999_999, title: 'Bad', text: 'x', start: T0, end: T0 - 1, domainIds: [DOMAIN.id], user: 'u', source: 'manual' });
    await expect(a.world.prepare(bad)).rejects.toBeInstanceOf(FixtureError);
    expect(a.world.stores).toBe(before);
  });

  it('PUT /_emulator/state and a sandbox PUT with a large state answer as before', async () => {
    const a = await app();
    const payload = JSON.stringify(stateOf(30_000));
    const put = await a.inject({ method: 'PUT', url: '/_emulator/state', payload, headers: { 'content-type': 'application/json' } });
    expect(put.statusCode).toBe(200);
    expect(put.json().counts.annotations).toBe(30_000);
    const sandbox = await a.inject({ method: 'PUT', url: '/_emulator/sandboxes/big', payload, headers: { 'content-type': 'application/json' } });
    expect(sandbox.statusCode).toBe(201);
    expect(sandbox.json().counts.annotations).toBe(30_000);
    const bad = JSON.stringify(rawStateOf(30_000, [{ id: 9_999_999, title: 'Bad', text: 'x', start: T0, end: T0 - 1, domainIds: [DOMAIN.id], user: 'u' }]));
    const refused = await a.inject({ method: 'PUT', url: '/_emulator/state', payload: bad, headers: { 'content-type': 'application/json' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/end .* is before start/);
    expect(a.world.counts().annotations).toBe(30_000);
  });

  it('a world built from a seed of absolute times indexes its annotations on their first use, once for every world', async () => {
    const seed = stateOf(5_000);
    const built = await buildApp({ clock: new ManualClock(T0), fixtures: seed });
    apps.push(built);
    const store = () => built.world.stores.annotations;
    expect(store().indexed).toBe(false);
    expect(built.world.counts().annotations).toBe(5_000);
    expect(store().list({ from: T0 - 60_000 }).map((x) => x.id)).toEqual([2_000_001, 2_000_000]);
    expect(store().indexed).toBe(true);
    built.world.reset();
    // The seed's index is built: the new store takes it at once.
    expect(store().indexed).toBe(true);
    expect(store().get(2_000_004).title).toBe('Deploy 4');
  });
});
