// The throughput cases of the benchmark (bench/run.mjs) and of the profile recipe
// (bench/profile.mjs): what each requests on the large seed, how it proves it measures what it
// claims, and its goal.
import { request } from './lib.mjs';
import { ALERT_UID, ANNOTATION_BASE, ANNOTATION_STEP_MS, BENCH_TOKEN, FIRST_GRID_ID, HOUR_LOAD, LARGE_SEED, filteredQuery } from './seeds.mjs';

const LARGE = LARGE_SEED;
const REST = '/concerto/services/rest';
const CLOUD = `${REST}/CloudService/v1`;
const REPOSITORY = `${REST}/RepositoryService/v1`;
const INSTANCES = `${REST}/composition/instances/v1`;
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const AUTH = { 'x-auth-token': BENCH_TOKEN };
/** RATE_LIMIT_MAX of the server under load: no call is refused. */
export const NO_LIMIT = String(1_000_000_000);

const query = filteredQuery({ domains: LARGE.domains });
/** Every benchmark POST starts after the last seeded annotation, as a client annotating "now" would. */
const postedStart = ANNOTATION_BASE + (LARGE.annotations + 1000) * ANNOTATION_STEP_MS;

/** Plays the large seed's composition once per server (the first play makes result 4001). */
async function playOnce(port) {
  const list = await request(port, { path: `${INSTANCES}/`, headers: AUTH });
  const playing = JSON.parse(list.text).instances?.[0];
  if (playing) return playing.instanceID;
  const played = await request(port, {
    method: 'POST',
    path: `${INSTANCES}?command=play`,
    headers: AUTH,
    body: JSON.stringify({ compositionName: HOUR_LOAD }),
  });
  if (played.status !== 200) throw new Error(`play answered ${played.status}: ${played.text.slice(0, 300)}`);
  // Move the emulated clock an hour on: the result has an hour of play to fold.
  await request(port, { method: 'POST', path: '/_emulator/clock/advance', body: JSON.stringify({ ms: 3_630_000 }) });
  return JSON.parse(played.text).instanceID;
}

/** The goal of a read of a newer interface: its server CPU a request within 10% of a grid read's. */
const LIKE_A_GRID = { kind: 'cpuOf', of: 'grid-read', max: 1.1, text: '<= 1.10x CPU a request of GET a grid' };

/**
 * The throughput cases. `check` proves the emulator answers what the case claims to measure
 * (a CHECKED grid, 1,000 servers, ~100 annotations) before anything is timed; `prepare` may
 * return the path to request when it is known only once the server runs.
 * Targets: `cpu` compares requests per server CPU-second with the bare baseline's (min),
 * `cpuOf` the server CPU a request with another case's (max, a factor), `p99` the latency.
 */
export const CASES = [
  {
    id: 'grid-read',
    title: 'GET a grid (CHECKED)',
    path: `${CLOUD}/grid/${FIRST_GRID_ID}`,
    headers: AUTH,
    check: (body) => body.state === 'CHECKED' || `grid is ${body.state}, not CHECKED`,
    target: { kind: 'cpu', min: 0.9, text: '>= 0.90x baseline req per CPU-s' },
  },
  {
    id: 'cloudserver-list',
    title: 'GET cloud-server list (1,000)',
    path: `${CLOUD}/cloudserver/`,
    headers: AUTH,
    check: (body) => body.length === LARGE.grids || `list has ${body.length} servers, not ${LARGE.grids}`,
    target: { kind: 'cpu', min: 0.95, text: '>= 0.95x baseline req per CPU-s' },
  },
  {
    id: 'annotation-list',
    title: `GET annotations, date range + domain (${query.expected} of ${LARGE.annotations.toLocaleString('en-US')})`,
    path: `${ANNOTATIONS}${query.path}`,
    headers: AUTH,
    check: (body) => body.length === query.expected || `filter returned ${body.length}, not ${query.expected}`,
    target: { kind: 'cpu', min: 0.8, text: '>= 0.80x baseline req per CPU-s' },
  },
  {
    id: 'annotation-create',
    title: 'POST an annotation',
    method: 'POST',
    path: ANNOTATIONS,
    headers: AUTH,
    body: JSON.stringify({ title: 'Deploy', text: 'Release rolled out - ref OPS-1', start: postedStart, domainIds: [9001] }),
    check: (body) => Number.isInteger(body.id) || 'no id in the answer',
    target: { kind: 'cpu', min: 0.8, text: '>= 0.80x baseline req per CPU-s' },
  },
  {
    id: 'alert-fire',
    title: 'POST alert fire (rate limit raised)',
    method: 'POST',
    path: `/concerto/mpulse/api/alerts/${ALERT_UID}/fire`,
    body: JSON.stringify({ message: 'Checkout error rate above 5%', subject: 'Checkout alert' }),
    status: 204,
    target: { kind: 'cpu', min: 0.8, text: '>= 0.80x baseline req per CPU-s' },
  },
  {
    id: 'repository-object',
    title: 'GET a repository object by id',
    path: `${REPOSITORY}/Objects/composition/401`,
    headers: AUTH,
    check: (body) => body.id === 401 || `object ${body.id}, not 401`,
    target: LIKE_A_GRID,
  },
  {
    id: 'repository-list',
    title: 'GET repository objects filtered by name',
    path: `${REPOSITORY}/Objects/composition?name=Hour%20Load`,
    headers: AUTH,
    check: (body) => body.objects?.length === 1 || `${body.objects?.length} objects, not 1`,
    target: LIKE_A_GRID,
  },
  {
    id: 'composition-instance',
    title: 'GET a composition instance (playing)',
    path: `${INSTANCES}/`,
    headers: AUTH,
    prepare: async (port) => `${INSTANCES}/${await playOnce(port)}`,
    check: (body) => body.state === 'Playing' || `instance is ${body.state}, not Playing`,
    target: LIKE_A_GRID,
  },
  {
    id: 'result-clip-element',
    title: 'GET clip-element of a result playing for 1 h with 10,000 VUs',
    path: `${REST}/Results/v1/4001/clip-element?elementType=message`,
    headers: AUTH,
    prepare: async (port) => {
      await playOnce(port);
    },
    check: (body) => body.elementTypes?.[0]?.metrics?.count > 1_000_000 || `only ${body.elementTypes?.[0]?.metrics?.count} messages`,
    target: LIKE_A_GRID,
  },
  {
    id: 'query-summary',
    title: 'GET Query API summary, Last30Days (generated per minute)',
    path: '/concerto/mpulse/api/v2/BENCH-APP-0/summary?format=json&date-comparator=Last30Days',
    headers: AUTH,
    check: (body) => Number(body.n) > 0 || `summary has n ${body.n}`,
    target: LIKE_A_GRID,
  },
];
