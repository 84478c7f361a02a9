// Generates large fixture folders for the benchmarks and the soak script, in the fixture
// format (src/state.ts): one file per section, so a failing file is easy to find.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const BENCH_USER = 'bench@example.com';
export const BENCH_TOKEN = 'bench-token';
/** Every generated annotation starts on this minute grid, one a minute from this instant. */
export const ANNOTATION_BASE = Date.UTC(2026, 0, 1);
export const ANNOTATION_STEP_MS = 60_000;
export const FIRST_GRID_ID = 100_001;
export const FIRST_ANNOTATION_ID = 1_000_001;
export const FIRST_DOMAIN_ID = 9_001;
export const ALERT_UID = 'bench-alert';
/** An alert of the large seed without channels: a fire of it makes no delivery (the hooks table's `stored deliveries` row). */
export const QUIET_ALERT_UID = 'bench-alert-quiet';
/** The composition the result-read case plays. */
export const HOUR_LOAD = '/Bench/Hour Load';
/** The benchmark's large seed. */
export const LARGE_SEED = { grids: 1000, annotations: 100_000, domains: 10 };

const CLOUD_TYPES = ['EC2', 'AZURE', 'COMPUTE_ENGINE'];
const REGIONS = [
  { region: 'us-east-1', zone: 'us-east-1a', location: { id: 1, name: 'Amazon US East (Virginia)' } },
  { region: 'eu-west-1', zone: 'eu-west-1b', location: { id: 2, name: 'Amazon EU (Ireland)' } },
  { region: 'ap-southeast-2', zone: 'ap-southeast-2a', location: { id: 3, name: 'Amazon Asia Pacific (Sydney)' } },
];

/**
 * A grid with `servers` load generators. `startedAgoMs` makes the seed start it on load, as if
 * that long ago: an hour is far past every default duration, so the grid reads CHECKED.
 */
export function grid(id, { servers = 1, startedAgoMs } = {}) {
  const where = REGIONS[id % REGIONS.length];
  return {
    id,
    name: `Bench Grid ${id}`,
    servers: [
      {
        name: `amazon - EC2 Test Server (Large) ${id}`,
        serverClassName: 'EC2 Test Server (Large)',
        role: 'LOAD_GENERATOR',
        count: servers,
        cloudType: CLOUD_TYPES[id % CLOUD_TYPES.length],
        launchCPA: 'SOASTA EC2',
        location: where.location,
        region: where.region,
        zone: where.zone,
        securityGroup: 'sg-cffb2fab',
      },
    ],
    ...(startedAgoMs !== undefined ? { startedAgoMs } : {}),
  };
}

/**
 * Annotation i starts at ANNOTATION_BASE + i minutes and is on domain (i % domains): so any
 * window of W minutes holds W annotations, W / domains of them on one domain.
 */
export function annotation(i, domains) {
  return {
    id: FIRST_ANNOTATION_ID + i,
    title: `Deployment ${i}`,
    text: `Release train ${i} rolled out to production - ref ticket OPS-${100000 + i}`,
    start: ANNOTATION_BASE + i * ANNOTATION_STEP_MS,
    ...(i % 3 === 0 ? { end: ANNOTATION_BASE + i * ANNOTATION_STEP_MS + 30 * 60_000 } : {}),
    domainIds: [FIRST_DOMAIN_ID + (i % domains)],
    user: BENCH_USER,
  };
}

/** The query of the filtered-list case: a window holding `window` annotations, one domain. */
export function filteredQuery({ domains, window = 1000, offset = 50_000 }) {
  const from = ANNOTATION_BASE + offset * ANNOTATION_STEP_MS;
  const to = from + (window - 1) * ANNOTATION_STEP_MS;
  return { path: `?date-start=${from}&date-end=${to}&domain=${FIRST_DOMAIN_ID}`, expected: Math.ceil(window / domains) };
}

/**
 * Writes a fixture folder: a user with a never-expiring token, `grids` grids of which
 * `startedGrids` are started on load with `serversPerGrid` servers each, `annotations`
 * annotations over `domains` domains, and two alerts (one with a
 * webhook channel, one without channels).
 */
export function writeSeed(dir, { grids = 1000, startedGrids = grids, serversPerGrid = 1, annotations = 100_000, domains = 10, extraUsers = 0 } = {}) {
  mkdirSync(dir, { recursive: true });
  const write = (name, data) => writeFileSync(join(dir, name), JSON.stringify(data));
  write('users.json', {
    users: [
      { userName: BENCH_USER, password: 'bench', apiToken: 'bench-api-token', tenant: 'Default' },
      ...Array.from({ length: extraUsers }, (_, i) => ({ userName: `user${i}@example.com`, password: `pw${i}`, tenant: 'Default' })),
    ],
    tokens: [{ token: BENCH_TOKEN, userName: BENCH_USER, neverExpires: true }],
  });
  write('grids.json', {
    grids: Array.from({ length: grids }, (_, i) =>
      grid(FIRST_GRID_ID + i, { servers: serversPerGrid, ...(i < startedGrids ? { startedAgoMs: 3_600_000 } : {}) }),
    ),
  });
  write('domains.json', {
    domains: Array.from({ length: domains }, (_, i) => ({ id: FIRST_DOMAIN_ID + i, name: `www.shop${i}.example.com`, apiKey: `BENCH-APP-${i}` })),
  });
  write('annotations.json', { annotations: Array.from({ length: annotations }, (_, i) => annotation(i, domains)) });
  // One composition of 10,000 virtual users on one load server, for the result read.
  write('compositions.json', {
    compositions: [
      {
        id: 401,
        path: HOUR_LOAD,
        durationMs: 7_200_000,
        tracks: [
          {
            name: 'Shoppers',
            clip: 'Checkout Clip',
            virtualUsers: 10_000,
            loadServers: 1,
            rampUpMs: 300_000,
            thinkTimeMs: 5000,
            collections: [
              { name: 'Home', type: 'page', medianMs: 420, errorRate: 0.002, messages: 12 },
              { name: 'Login', medianMs: 350, errorRate: 0.01, messages: 3, errors: [{ message: 'HTTP 401 Unauthorized' }] },
              { name: 'Search', medianMs: 280, errorRate: 0.005, messages: 4 },
              { name: 'Add to Cart', medianMs: 610, errorRate: 0.02, messages: 4, errors: [{ message: 'HTTP 503 Service Unavailable', weight: 3 }, { message: 'HTTP 504 Gateway Timeout' }] },
              { name: 'Checkout', medianMs: 1250, errorRate: 0.04, messages: 6 },
            ],
          },
        ],
      },
    ],
  });
  write('alerts.json', {
    alerts: [
      { uid: ALERT_UID, name: 'Bench alert', channels: [{ type: 'webhook', target: 'https://hooks.example.com/bench' }] },
      { uid: QUIET_ALERT_UID, name: 'Bench alert without channels', channels: [] },
    ],
  });
  return dir;
}
