import type { FastifyInstance, InjectOptions } from 'fastify';
import type { State } from '../../src/world/state.js';
import type { CompositionSeed } from '../../src/compositions/schemas.js';
import { AUTH, authSeed } from '../helpers/app.js';
import { grid, template } from '../provisioning/seed.js';

export const INSTANCES = '/concerto/services/rest/composition/instances/v1';
export const RESULTS = '/concerto/services/rest/Results/v1';
export const CLOUD = '/concerto/services/rest/CloudService/v1';
export const CONTROL = '/_emulator';

/** Every state around a play lasts one second; a play lasts a minute. */
export const SECOND_DURATIONS = {
  loading: 1000,
  starting: 1000,
  pausing: 1000,
  resuming: 1000,
  stopping: 1000,
  aborting: 1000,
  closing: 1000,
  writing: 1000,
  settle: 1000,
};

export function composition(overrides: Partial<CompositionSeed> = {}): CompositionSeed {
  return {
    id: 301,
    path: '/Tests/Unit Load',
    description: 'a unit-test composition',
    durationMs: 60_000,
    seed: 7,
    durations: { ...SECOND_DURATIONS },
    tracks: [
      {
        name: 'Track 1',
        clip: 'Clip A',
        virtualUsers: 100,
        loadServers: 1,
        rampUpMs: 0,
        thinkTimeMs: 1000,
        collections: [
          { name: 'Login', type: 'transaction', medianMs: 200, sigma: 0.3, errorRate: 0.05, messages: 2, errors: [{ message: 'HTTP 503 Service Unavailable', weight: 1 }] },
          { name: 'Home', type: 'page', medianMs: 400, sigma: 0.4, errorRate: 0, messages: 5, errors: [] },
        ],
      },
    ],
    ...overrides,
  };
}

/** A grid of `loadServers` load generators (started CHECKED when the seed loads), and compositions. */
export function seed(compositions: CompositionSeed[] = [composition()], loadServers = 2): Partial<State> {
  return {
    ...authSeed(),
    grids: [grid({ servers: [template({ count: loadServers })], startedAgoMs: 3_600_000 })],
    compositions,
  };
}

export const authed = (app: FastifyInstance, options: InjectOptions) =>
  app.inject({ ...options, headers: { ...AUTH, ...(options.headers ?? {}) } });

export async function create(app: FastifyInstance, command: 'load' | 'play', path = '/Tests/Unit Load', extra: object = {}) {
  return authed(app, { method: 'POST', url: `${INSTANCES}?command=${command}`, payload: { compositionName: path, ...extra } });
}

export async function act(app: FastifyInstance, id: string, command: string, payload: object = {}) {
  return authed(app, { method: 'PUT', url: `${INSTANCES}/${encodeURIComponent(id)}?command=${command}`, payload });
}

export async function read(app: FastifyInstance, id: string) {
  return (await authed(app, { url: `${INSTANCES}/${encodeURIComponent(id)}` })).json();
}
