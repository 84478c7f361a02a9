// A test of a project that installed the packed cloud-emulator (npm run test:container copies
// this folder into an empty project and runs it twice: with LOAD_WITH=import, and with
// LOAD_WITH=require, which loads the package the way CommonJS code such as a Jest suite does).
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deployAndAnnotate } from './notify.mjs';

const viaRequire = process.env.LOAD_WITH === 'require';
const require = createRequire(import.meta.url);
const load = (name) => (viaRequire ? require(name) : import(name));
const { CloudEmulatorContainer } = await load('cloud-emulator/testcontainers');
const { EmulatorClient } = await load('cloud-emulator/client');
const { ManualClock } = await load('cloud-emulator');

let emulator;
let client;
beforeAll(async () => {
  // The image built by the container test (CLOUD_EMULATOR_IMAGE). The limits are for Podman 4's
  // Docker API only; a real Docker engine needs none.
  emulator = await new CloudEmulatorContainer()
    .withAdminToken('consumer-admin')
    .withTimeScale(1)
    .withUlimits({ nofile: { soft: 1024, hard: 4096 }, nproc: { soft: 1024, hard: 2048 } })
    .start();
  client = emulator.client();
}, 120_000);
afterAll(async () => {
  await emulator?.stop();
});

it(`loads the package with ${viaRequire ? 'require (its CommonJS build)' : 'import (its ES modules)'}`, () => {
  const entry = require.resolve('cloud-emulator/client');
  if (viaRequire) expect(entry).toMatch(/[/\\]dist[/\\]cjs[/\\]client[/\\]index\.js$/);
  expect(typeof ManualClock).toBe('function');
  expect(client).toBeInstanceOf(EmulatorClient);
});

it('our deploy starts the grid and sends exactly one annotation with its title', async () => {
  await client.reset();
  await client.freeze();
  await deployAndAnnotate({ baseUrl: emulator.getBaseUrl(), token: 'demo-token', gridId: 101, title: 'Deploy 42' });

  const advanced = await client.advanceUntilSettled('grid', 101);
  expect(advanced.advancedMs).toBeGreaterThan(0);
  expect((await client.lifecycle('grid', 101)).state).toBe('CHECKED');

  const annotation = { method: 'POST', path: '/concerto/mpulse/api/annotations/v1', bodyJson: { title: 'Deploy 42' } };
  expect(await client.countRequests(annotation)).toBe(1);
  expect(await client.countRequests({ ...annotation, bodyJson: { title: 'Deploy 43' } })).toBe(0);
  const [sent] = await client.findRequests(annotation);
  expect(sent.status).toBe(200);
  expect(sent.headers['x-auth-token']).toBe('***');
});
