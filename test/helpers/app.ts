import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { emptyState, loadFixtures, parseState, type State } from '../../src/state.js';
import { PROVISIONING_PREFIX } from '../../src/provisioning/routes.js';
import { REPOSITORY_PREFIX } from '../../src/repository/routes.js';
import { ANNOTATIONS_PREFIX } from '../../src/annotations/routes.js';
import { ALERTS_PREFIX } from '../../src/alerts/routes.js';
import { CONTROL_PREFIX } from '../../src/control/routes.js';

/** The base path of each interface. */
export const PATHS = {
  CLOUD: PROVISIONING_PREFIX,
  REPO: REPOSITORY_PREFIX,
  ANNOTATIONS: ANNOTATIONS_PREFIX,
  ALERTS: ALERTS_PREFIX,
  CONTROL: CONTROL_PREFIX,
};
import { watchResponses } from './conformance.js';

export const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);

export interface TestApp {
  app: FastifyInstance;
  clock: ManualClock;
}

/** A fresh app on a frozen clock at T0, seeded with `fixtures` (a partial State). */
export async function makeApp(
  fixtures: Partial<State> = {},
  config: Partial<Config> = {},
): Promise<TestApp> {
  const clock = new ManualClock(T0);
  const app = await buildApp({ config, clock, fixtures: parseState({ ...emptyState(), ...fixtures }, 'test seed') });
  // Every response a test receives must match the OpenAPI document (see conformance.ts).
  watchResponses(app);
  return { app, clock };
}

let demo: State | undefined;
/** A fresh app seeded with the bundled demo fixtures (read once per test file). */
export async function makeDemoApp(config: Partial<Config> = {}): Promise<TestApp> {
  demo ??= await loadFixtures(BUNDLED_FIXTURES_DIR);
  return makeApp(demo, config);
}

/** A seed user with a ready token, for tests that only need to be authenticated. */
export const TEST_USER = { userName: 'tester@example.com', password: 'pw', apiToken: 'tester-api-token', tenant: 'Default' };
export const TEST_TOKEN = 'test-token';
export const authSeed = (): Pick<State, 'users' | 'tokens'> => ({
  users: [{ ...TEST_USER }],
  tokens: [{ token: TEST_TOKEN, userName: TEST_USER.userName, neverExpires: false }],
});
export const AUTH = { 'x-auth-token': TEST_TOKEN };
