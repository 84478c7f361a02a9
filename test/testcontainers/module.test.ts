import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CloudEmulatorContainer, type StartedCloudEmulatorContainer } from '../../src/testcontainers/index.js';

/**
 * Starts real containers, so it runs only where an image and an engine are given: `npm run
 * test:container` builds the image and sets CLOUD_EMULATOR_IMAGE (and, with Podman,
 * DOCKER_HOST to Podman's Docker-compatible socket).
 */
const image = process.env.CLOUD_EMULATOR_IMAGE;
if (!image) console.log('test/testcontainers: skipped, CLOUD_EMULATOR_IMAGE is not set (npm run test:container sets it)');

const started: StartedCloudEmulatorContainer[] = [];
afterAll(async () => {
  await Promise.all(started.map((c) => c.stop()));
});

/** Podman 4's Docker API gives containers open-files and process limits some hosts refuse; real Docker needs none of this. */
const withHostLimits = (container: CloudEmulatorContainer) => container.withUlimits({ nofile: { soft: 1024, hard: 4096 }, nproc: { soft: 1024, hard: 2048 } });

describe.skipIf(!image)('CloudEmulatorContainer', () => {
  it('starts the image, waits for health, and hands out its URL and a client', { timeout: 120_000 }, async () => {
    const container = await withHostLimits(new CloudEmulatorContainer()).withTimeScale(0).withEnvironment({ JOURNAL_SIZE: '50' }).start();
    started.push(container);
    expect(container.getBaseUrl()).toMatch(/^http:\/\/[^/]+:\d+$/);
    const client = container.client();
    const health = await client.health();
    expect(health.status).toBe('ok');
    expect(health.counts.grids).toBeGreaterThan(0);
    // TIME_SCALE=0: a start lands at once.
    const headers = { 'X-Auth-Token': 'demo-token', 'Content-Type': 'application/json' };
    await fetch(`${client.urls.provisioning}/grid/101/action`, { method: 'POST', headers, body: '{"action":"start"}' });
    expect((await client.lifecycle('grid', 101)).isFinal).toBe(true);
    expect((await client.journal()).size).toBe(50);
  });

  it('seeds from a fixture folder and protects the control API with the admin token', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tc-fixtures-'));
    try {
      await writeFile(join(dir, 'users.json'), JSON.stringify({ users: [{ userName: 'tc@example.com', password: 'pw' }], tokens: [{ token: 'tc-token', userName: 'tc@example.com', neverExpires: true }] }));
      const container = await withHostLimits(new CloudEmulatorContainer(image)).withFixtures(dir).withAdminToken('tc-admin').start();
      started.push(container);
      const client = container.client();
      const state = await client.exportState();
      expect(state.users.map((u) => u.userName)).toEqual(['tc@example.com']);
      expect(state.grids).toEqual([]);
      const anonymous = await fetch(`${container.getBaseUrl()}/_emulator/state`);
      expect(anonymous.status).toBe(401);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
