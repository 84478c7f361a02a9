import type { FastifyInstance, InjectOptions } from 'fastify';
import type { State } from '../../src/state.js';
import type { GridSeed, EnvironmentSeed, RsdbSeed, ServerTemplate } from '../../src/provisioning/schemas.js';
import { AUTH, authSeed } from '../helpers/app.js';

export const CLOUD = '/concerto/services/rest/CloudService/v1';

/** Short, distinct durations so every step of a lifecycle can be hit exactly. */
export const GRID_DURATIONS = {
  allocating: 10_000,
  allocated: 1_000,
  startingMonitors: 3_000,
  checking: 5_000,
  pendingServers: 8_000,
  terminating: 4_000,
  cancelling: 2_000,
  serverShutdown: 6_000,
};

export function template(overrides: Partial<ServerTemplate> = {}): ServerTemplate {
  return {
    name: 'amazon - EC2 Test Server (Large)',
    serverClassName: 'EC2 Test Server (Large)',
    role: 'LOAD_GENERATOR',
    count: 1,
    cloudType: 'EC2',
    launchCPA: 'SOASTA EC2',
    location: { id: 1, name: 'amazon - us-east-1' },
    region: 'us-east-1',
    zone: 'us-east-1a',
    securityGroup: 'sg-cffb2fab',
    usingReservedAddress: false,
    ...overrides,
  };
}

/** A grid of 3 servers in 2 locations (2 load generators in us-east-1, 1 results server in eu-west-1). */
export function grid(overrides: Partial<GridSeed> = {}): GridSeed {
  return {
    id: 101,
    name: 'Test Grid',
    monitors: false,
    servers: [
      template({ count: 2 }),
      template({
        name: 'amazon - EC2 Results Server (Large)',
        serverClassName: 'EC2 Results Server (Large)',
        role: 'RESULTS',
        location: { id: 2, name: 'amazon - eu-west-1' },
        region: 'eu-west-1',
        zone: 'eu-west-1b',
      }),
    ],
    startOutcome: 'CHECKED',
    terminateOutcome: 'TERMINATED',
    failingServers: 1,
    durations: { ...GRID_DURATIONS },
    ...overrides,
  };
}

export const RSDB_DURATIONS = { allocating: 20_000, terminating: 5_000 };

export function rsdb(overrides: Partial<RsdbSeed> = {}): RsdbSeed {
  return {
    id: 201,
    name: 'Results DB',
    cloudType: 'EC2',
    instanceSize: 'EC2 Results Database (Large)',
    launchCPAName: "Lance's EC2",
    region: 'us-east-1',
    zone: 'us-east-1a',
    durations: { ...RSDB_DURATIONS },
    ...overrides,
  };
}

export const ENV_DURATIONS = {
  allocatingDatabase: 10_000,
  allocatedDatabase: 2_000,
  checkedDatabase: 1_000,
  volumeNotAvailable: 7_000,
  allocatingMain: 10_000,
  allocatedMain: 2_000,
  checkedMain: 1_000,
  running: 30_000,
  terminating: 5_000,
  cancelling: 3_000,
};

export function environment(overrides: Partial<EnvironmentSeed> = {}): EnvironmentSeed {
  return {
    id: 301,
    name: 'Staging Environment',
    databaseInstance: { cloudType: 'EC2', instanceSize: 'EC2 Results Database (Large)' },
    mainInstance: { cloudType: 'EC2', instanceSize: 'EC2 Main Server (Large)' },
    startOutcome: 'RUNNING',
    terminateOutcome: 'TERMINATED',
    durations: { ...ENV_DURATIONS },
    ...overrides,
  };
}

export function seed(parts: Partial<State> = {}): Partial<State> {
  return { ...authSeed(), ...parts };
}

/** An authenticated request against the provisioning interface. */
export async function call(app: FastifyInstance, method: InjectOptions['method'], path: string, payload?: unknown) {
  const res = await app.inject({ method, url: `${CLOUD}${path}`, headers: AUTH, ...(payload === undefined ? {} : { payload: payload as object }) });
  return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
}

export const get = (app: FastifyInstance, path: string) => call(app, 'GET', path);
export const act = (app: FastifyInstance, path: string, action: string) => call(app, 'POST', `${path}/action`, { action });
