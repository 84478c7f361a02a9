// Load and faults against the built server: `npm run soak` (builds first). Bounded in time and
// count; exits non-zero when a check fails. Never part of `npm test`.
//
//   race    50 clients race start/terminate/restart on the same grids, servers, RSDBs and test
//           environments: no 5xx, every answer and every final state one its lifecycle allows;
//           then bursts of simultaneous starts of one resource: exactly one is accepted.
//   memory  a sustained mixed load: resident memory after warm-up grows by less than 10%.
//   kill    with STATE_FILE, kill -9 at random moments during writes and restart: the file
//           always loads, and nothing acknowledged before the last completed flush is lost.
//   paths   the path-spelling corpus (scripts/path-corpus.mjs) against every protected
//           operation of the OpenAPI document, without credentials, with ADMIN_TOKEN and
//           ALERTS_REQUIRE_TOKEN set: every answer is 400, 401 or 404 and the state is unchanged.
//   slow    hundreds of clients trickle request bodies: each is cut off by REQUEST_TIMEOUT_MS,
//           and the health check answers throughout.
//   sandboxes  with ADMIN_TOKEN set, requests without credentials to hundreds of new sandbox names
//           make none, and the admin's PUT still succeeds (scripts/soak/sandboxes.mjs).
//   journal large bodies and headers into many sandboxes keep the journal within its byte
//           bounds, and reading it never holds the health check (scripts/soak/journal.mjs).
//   state   the state file with 20 untouched sandboxes (size, idle CPU) and imports into two
//           sandboxes at once (scripts/soak/state-file.mjs).
//   events  100 readers of the event stream during a flood of alert fires (bytes per stream,
//           health p99), a resume with more to replay than a client may hold, and 1,000 streams
//           over 10 sandboxes beside the default world's own (scripts/soak/events.mjs).
//   stall   the single requests that once held the event loop (bench/stall.mjs, its requests
//           part): a 10,000-object repository list, the first read of a two-day run's results,
//           a journal count over long URLs: none holds the server's loop 50 ms or more.
//   fires   without a token, alert fires with 1 MB messages, then thousands with 8 KiB ones over
//           100 new sandboxes, STATE_FILE set, twice: resident memory stays flat once the bounds are
//           reached, health stays 200
//           (scripts/soak/bounds.mjs).
//   fill    with the demo token, 1 MB repository objects and annotations over 100 sandboxes, twice:
//           resident memory stays flat (scripts/soak/bounds.mjs).
//
// Environment: SOAK_SECONDS (default 60, per timed part), SOAK_CLIENTS (50), SOAK_KILLS (20),
// SOAK_PARTS (race,memory,kill,paths,slow,sandboxes,journal,state,events,stall,fires,fill), SOAK_FLUSH_MS (50), SOAK_SLOW_CLIENTS (800),
// SOAK_SLOW_TIMEOUT_MS (2000), BENCH_SERVER (default dist/cli/server.js).
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOST, median, num, request, rssMiB, sleep, startProcess } from '../bench/lib.mjs';
import { spellings } from './path-corpus.mjs';
import { journalPart } from './soak/journal.mjs';
import { eventsPart } from './soak/events.mjs';
import { BENCH_TOKEN, FIRST_ANNOTATION_ID, grid, writeSeed } from '../bench/seeds.mjs';
import { stateFile } from './soak/state-file.mjs';
import { helpIfAsked } from '../bench/help.mjs';

helpIfAsked(import.meta.url);

const SECONDS = num('SOAK_SECONDS', 60);
const CLIENTS = Math.round(num('SOAK_CLIENTS', 50));
const KILLS = Math.round(num('SOAK_KILLS', 20));
const FLUSH_MS = Math.round(num('SOAK_FLUSH_MS', 50));
const SLOW_CLIENTS = Math.round(num('SOAK_SLOW_CLIENTS', 800));
const SLOW_TIMEOUT_MS = Math.round(num('SOAK_SLOW_TIMEOUT_MS', 2000));
const PARTS = new Set((process.env.SOAK_PARTS ?? 'race,memory,kill,paths,slow,sandboxes,journal,state,events,stall,fires,fill').split(',').map((s) => s.trim()));

const CLOUD = '/concerto/services/rest/CloudService/v1';
const REPO = '/concerto/services/rest/RepositoryService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const AUTH = { 'x-auth-token': BENCH_TOKEN };

// The lifecycle vocabulary (the specification's state tables and the emulator's decisions).
const GRID_STATES = new Set(['LOADED', 'ALLOCATING', 'ALLOCATED', 'ALLOCATED_WITH_FAILURES', 'ALLOCATE_FAILED', 'CHECKING', 'CHECKED', 'CHECKED_AND_TERMINATING', 'CHECKED_AND_DEPLOYING', 'CHECKED_WITH_FAILURES', 'STARTING_MONITORS', 'CANCELLING', 'CANCELLED', 'TERMINATING', 'TERMINATED', 'TERMINATED_WITH_FAILURES']);
const FINAL_GRID_STATES = new Set(['LOADED', 'ALLOCATED_WITH_FAILURES', 'ALLOCATE_FAILED', 'CHECKED', 'CHECKED_WITH_FAILURES', 'CANCELLED', 'TERMINATED', 'TERMINATED_WITH_FAILURES']);
const SERVER_STATES = new Set(['PENDING', 'BUSY', 'RUNNING', 'SHUTTING_DOWN', 'TERMINATED', 'FAILED', 'BIDDING']);
const RSDB_STATES = new Set(['LOADED', 'ALLOCATING_DATABASE', 'ALLOCATED_DATABASE', 'TERMINATING', 'TERMINATED']);
const ENVIRONMENT_STATES = new Set(['ERROR_BUILD_MISMATCH', 'TERMINATED_WITH_FAILURES', 'CANCELLING', 'CANCELLED', 'LOADED', 'ALLOCATING_DATABASE', 'ALLOCATED_DATABASE', 'CHECKED_DATABASE', 'ALLOCATING_MAIN', 'ALLOCATED_MAIN', 'CHECKED_MAIN', 'RUNNING', 'TERMINATED', 'TERMINATING', 'PROCESS_FAILED', 'VOLUME_NOT_FORMATTED', 'VOLUME_NOT_AVAILABLE', 'EXTERNALLY_TERMINATED']);

const log = (message) => process.stderr.write(`${message}\n`);
const pick = (list) => list[Math.floor(Math.random() * list.length)];

/** Collects failed checks; the first few of each kind are kept word for word. */
class Verdict {
  failures = new Map();
  fail(kind, detail) {
    const entry = this.failures.get(kind) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < 3) entry.examples.push(detail);
    this.failures.set(kind, entry);
  }
  check(ok, kind, detail) {
    if (!ok) this.fail(kind, typeof detail === 'function' ? detail() : detail);
    return ok;
  }
  get ok() {
    return this.failures.size === 0;
  }
  report(part) {
    if (this.ok) return log(`${part}: OK`);
    log(`${part}: FAILED`);
    for (const [kind, { count, examples }] of this.failures) log(`  ${count}x ${kind}\n${examples.map((e) => `      ${e}`).join('\n')}`);
  }
}

/** A keep-alive HTTP client with at most `sockets` connections; never throws for a status. */
function client(port, sockets = CLIENTS) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const call = (method, path, { body, headers = {}, fresh = false } = {}) =>
    new Promise((resolve) => {
      const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      const req = http.request(
        {
          host: HOST,
          port,
          method,
          path,
          agent: fresh ? false : agent,
          headers: { ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}), ...headers },
          timeout: 30_000,
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode, json, text });
          });
          res.on('error', (err) => resolve({ status: 0, error: err.message }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err) => resolve({ status: 0, error: err.message }));
      req.end(payload);
    });
  return { call, close: () => agent.destroy() };
}

/** Runs `clients` loops of `step` until `seconds` have passed. */
async function loops(clients, seconds, step) {
  const deadline = performance.now() + seconds * 1000;
  let requests = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      while (performance.now() < deadline) {
        await step(i);
        requests++;
      }
    }),
  );
  return requests;
}

// ---------------------------------------------------------------------------------------------
// race: start/terminate/restart from many clients at once
// ---------------------------------------------------------------------------------------------

const RACE_GRIDS = [201, 202, 203, 204, 205, 206];
const RACE_RSDBS = [301, 302];
const RACE_ENVIRONMENTS = [401, 402];

function raceSeed(dir) {
  writeSeed(dir, { grids: 0, annotations: 0, domains: 1 });
  const outcomes = ['CHECKED', 'CHECKED', 'CHECKED_WITH_FAILURES', 'CHECKED_AND_DEPLOYING', 'ALLOCATED_WITH_FAILURES', 'CHECKED'];
  writeFileSync(
    join(dir, 'grids.json'),
    JSON.stringify({
      grids: RACE_GRIDS.map((id, i) => ({ ...grid(id, { servers: 2 }), monitors: i % 2 === 0, startOutcome: outcomes[i], ...(i === 1 ? { terminateOutcome: 'TERMINATED_WITH_FAILURES' } : {}) })),
    }),
  );
  writeFileSync(
    join(dir, 'provisioning.json'),
    JSON.stringify({
      rsdbs: RACE_RSDBS.map((id) => ({ id, name: `Soak RSDB ${id}`, cloudType: 'EC2', instanceSize: 'EC2 Results Database (Large)', launchCPAName: 'SOASTA EC2', region: 'us-east-1', zone: 'us-east-1a' })),
      environments: RACE_ENVIRONMENTS.map((id, i) => ({
        id,
        name: `Soak environment ${id}`,
        databaseInstance: { cloudType: 'EC2', instanceSize: 'EC2 Results Database (Large)' },
        mainInstance: { cloudType: 'EC2', instanceSize: 'EC2 Main (Large)' },
        startOutcome: i === 0 ? 'RUNNING' : 'VOLUME_NOT_FORMATTED',
      })),
    }),
  );
}

/** Checks one answer of the provisioning interface against the rules of its operation. */
function checkAnswer(verdict, op, res) {
  const what = () => `${op}: ${res.status} ${(res.text ?? res.error ?? '').slice(0, 200)}`;
  if (!verdict.check(res.status !== 0, 'network error', what)) return;
  if (!verdict.check(res.status < 500, '5xx answer', what)) return;
  const action = op.includes(' action ');
  const allowed = action ? [202, 400] : [200];
  if (!verdict.check(allowed.includes(res.status), `unexpected status for ${op.split(' ')[0]} ${action ? 'action' : 'read'}`, what)) return;
  if (res.status === 400) {
    verdict.check(/ is [A-Z_]+[:]/.test(res.json?.message ?? ''), '400 without the current state in its message', what);
    return;
  }
  const body = res.json;
  if (op.startsWith('grid')) {
    const grids = Array.isArray(body) ? body : [body];
    for (const g of grids) {
      verdict.check(GRID_STATES.has(g.state), 'grid state outside its lifecycle', what);
      verdict.check(g.isFinal === FINAL_GRID_STATES.has(g.state), 'grid isFinal disagrees with its state', what);
    }
    if (op.includes('action start')) verdict.check(body.state === 'ALLOCATING', 'accepted grid start not ALLOCATING', what);
  } else if (op.startsWith('cloudserver')) {
    const servers = Array.isArray(body) ? body : [body];
    for (const s of servers) verdict.check(SERVER_STATES.has(s.state), 'cloud server state outside its lifecycle', what);
    if (op.includes('action restart')) verdict.check(body.state === 'RUNNING', 'accepted restart not RUNNING', what);
  } else if (op.startsWith('rsdb')) {
    verdict.check(RSDB_STATES.has(body.state), 'RSDB state outside its lifecycle', what);
    if (op.includes('action start')) verdict.check(body.state === 'ALLOCATING_DATABASE' && body.cloudServer.state === 'PENDING', 'accepted RSDB start not ALLOCATING_DATABASE/PENDING', what);
  } else if (op.startsWith('environment')) {
    verdict.check(ENVIRONMENT_STATES.has(body.state), 'environment state outside its lifecycle', what);
    if (op.includes('action start')) verdict.check(body.state === 'ALLOCATING_DATABASE', 'accepted environment start not ALLOCATING_DATABASE', what);
  }
}

/** Moves emulated time far past every schedule, so that every lifecycle has settled. */
async function settle(call) {
  const res = await call('POST', '/_emulator/clock/advance', { body: { ms: 24 * 3_600_000 } });
  if (res.status !== 200) throw new Error(`clock advance answered ${res.status}: ${res.text}`);
}

/** After settling: every resource rests in a final state, and servers agree with their grids. */
async function checkSettled(verdict, call) {
  const lifecycles = (await call('GET', '/_emulator/lifecycles')).json;
  for (const r of lifecycles.resources) verdict.check(r.isFinal && r.next === undefined, 'resource not settled after its schedule', () => JSON.stringify(r));
  const servers = new Map((await call('GET', `${CLOUD}/cloudserver/`, { headers: AUTH })).json.map((s) => [s.id, s]));
  verdict.check(servers.size === lifecycles.resources.filter((r) => r.kind === 'cloudServer').length, 'cloud-server list and lifecycles disagree', `${servers.size} listed`);
  const current = new Set();
  for (const id of RACE_GRIDS) {
    const g = (await call('GET', `${CLOUD}/grid/${id}`, { headers: AUTH })).json;
    verdict.check(FINAL_GRID_STATES.has(g.state), 'grid not final after settling', `${id}: ${g.state}`);
    for (const member of g.cloudServers) {
      current.add(member.id);
      const state = servers.get(member.id)?.state;
      const down = ['TERMINATED', 'TERMINATED_WITH_FAILURES', 'CANCELLED', 'ALLOCATE_FAILED'].includes(g.state);
      const allowed = down ? ['TERMINATED', 'FAILED'] : ['RUNNING', 'BUSY', 'FAILED', 'TERMINATED'];
      verdict.check(allowed.includes(state), `server of a ${down ? 'stopped' : 'running'} grid in a state it cannot rest in`, `grid ${id} ${g.state}, server ${member.id} ${state}`);
    }
  }
  // A new deployment shuts down the servers of the one before.
  for (const [id, s] of servers) {
    if (!current.has(id)) verdict.check(s.state === 'TERMINATED', 'server of an old deployment still up', `server ${id} ${s.state}`);
  }
  return { servers: servers.size };
}

async function race() {
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-soak-'));
  const verdict = new Verdict();
  raceSeed(work);
  // Lifecycles run at 1/200 of real durations: states change many times during the run.
  const server = await startProcess({ env: { FIXTURES_DIR: work, TIME_SCALE: '0.005', RATE_LIMIT_MAX: '1000000000' } });
  const { call, close } = client(server.port);
  const counts = new Map();
  try {
    let serverIds = [];
    let runningIds = [];
    const refresh = async () => {
      const res = await call('GET', `${CLOUD}/cloudserver/`, { headers: AUTH });
      checkAnswer(verdict, 'cloudserver list', res);
      if (res.status !== 200) return;
      serverIds = res.json.map((s) => s.id);
      runningIds = res.json.filter((s) => s.state === 'RUNNING').map((s) => s.id);
    };
    // Mostly servers that were RUNNING a moment ago, so that restarts race with terminations.
    const someServer = () => (runningIds.length && Math.random() < 0.8 ? pick(runningIds) : pick(serverIds));
    const ops = [
      [14, () => ['grid action start', 'POST', `${CLOUD}/grid/${pick(RACE_GRIDS)}/action`, { action: 'start' }]],
      // Rare next to everything else, so that grids get to run between terminations.
      [0.1, () => ['grid action terminate', 'POST', `${CLOUD}/grid/${pick(RACE_GRIDS)}/action`, { action: 'terminate' }]],
      [14, () => ['grid read', 'GET', `${CLOUD}/grid/${pick(RACE_GRIDS)}`]],
      [3, () => ['grid list', 'GET', `${CLOUD}/grid/`]],
      [10, () => serverIds.length && ['cloudserver action restart', 'POST', `${CLOUD}/cloudserver/${someServer()}/action`, { action: 'restart' }]],
      [1, () => serverIds.length && ['cloudserver action terminate', 'POST', `${CLOUD}/cloudserver/${someServer()}/action`, { action: 'terminate' }]],
      [10, () => serverIds.length && ['cloudserver read', 'GET', `${CLOUD}/cloudserver/${pick(serverIds)}`]],
      [4, () => ['rsdb action start', 'POST', `${CLOUD}/rsdb/${pick(RACE_RSDBS)}/action`, { action: 'start' }]],
      [0.2, () => ['rsdb action terminate', 'POST', `${CLOUD}/rsdb/${pick(RACE_RSDBS)}/action`, { action: 'terminate' }]],
      [4, () => ['rsdb read', 'GET', `${CLOUD}/rsdb/${pick(RACE_RSDBS)}`]],
      [4, () => ['environment action start', 'POST', `${CLOUD}/environment/${pick(RACE_ENVIRONMENTS)}/action`, { action: 'start' }]],
      [0.2, () => ['environment action terminate', 'POST', `${CLOUD}/environment/${pick(RACE_ENVIRONMENTS)}/action`, { action: 'terminate' }]],
      [4, () => ['environment read', 'GET', `${CLOUD}/environment/${pick(RACE_ENVIRONMENTS)}/`]],
    ];
    const total = ops.reduce((sum, [w]) => sum + w, 0);
    const draw = () => {
      let r = Math.random() * total;
      for (const [w, make] of ops) if ((r -= w) < 0) return make();
      return ops[0][1]();
    };
    log(`race: ${CLIENTS} clients for ${SECONDS} s ...`);
    await refresh();
    const requests = await loops(CLIENTS, SECONDS, async (i) => {
      if (i === 0) {
        await refresh();
        await sleep(50);
        return;
      }
      const op = draw();
      if (!op) return;
      const [name, method, path, body] = op;
      const res = await call(method, path, { headers: AUTH, body });
      const key = `${name} ${res.status}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      checkAnswer(verdict, `${name} ${path}`, res);
    });
    log(`  ${requests} requests (${Math.round(requests / SECONDS)}/s): ${[...counts].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`);

    // Everything stopped, time moved on: every resource rests where its lifecycle allows.
    const bursts = { grid: RACE_GRIDS, rsdb: RACE_RSDBS, environment: RACE_ENVIRONMENTS };
    const terminateAll = async () => {
      for (const [kind, ids] of Object.entries(bursts)) {
        for (const id of ids) checkAnswer(verdict, `${kind} action terminate`, await call('POST', `${CLOUD}/${kind}/${id}/action`, { headers: AUTH, body: { action: 'terminate' } }));
      }
    };
    await terminateAll();
    await settle(call);
    const settled = await checkSettled(verdict, call);
    log(`  settled: ${settled.servers} cloud servers, all resources final`);

    // Bursts of simultaneous starts of one resource: exactly one is accepted.
    const rounds = Math.max(3, Math.round(SECONDS / 6));
    let burstCount = 0;
    for (let round = 0; round < rounds; round++) {
      for (const [kind, ids] of Object.entries(bursts)) {
        for (const id of ids) {
          // One fresh connection per request, all opened at once: the starts arrive together.
          const answers = await Promise.all(
            Array.from({ length: CLIENTS }, () => call('POST', `${CLOUD}/${kind}/${id}/action`, { headers: AUTH, body: { action: 'start' }, fresh: true })),
          );
          burstCount++;
          const accepted = answers.filter((a) => a.status === 202).length;
          const refused = answers.filter((a) => a.status === 400).length;
          verdict.check(accepted === 1 && refused === CLIENTS - 1, `concurrent starts of one ${kind}: not exactly one accepted`, () => `${kind} ${id} round ${round}: ${accepted} accepted, ${refused} refused (${answers.find((a) => a.status === 400)?.json?.message}), others ${answers.filter((a) => a.status !== 202 && a.status !== 400).map((a) => a.status).join(',')}`);
          for (const a of answers) checkAnswer(verdict, `${kind} action start`, a);
        }
      }
      await terminateAll();
      await settle(call);
    }
    await checkSettled(verdict, call);
    log(`  ${burstCount} bursts of ${CLIENTS} simultaneous starts`);
    verdict.check(server.child.exitCode === null, 'server exited during the run', server.stderr());
  } finally {
    close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  verdict.report('race');
  return verdict.ok;
}

// ---------------------------------------------------------------------------------------------
// memory: a sustained mixed load
// ---------------------------------------------------------------------------------------------

async function memory() {
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-soak-'));
  const verdict = new Verdict();
  writeSeed(work, { grids: 20, startedGrids: 20, serversPerGrid: 5, annotations: 5000, domains: 10, extraUsers: 20 });
  // The default journal (1,000 requests) stays on, and every token and alert uid still gets a
  // rate-limit window: both must stay bounded. The limit itself is raised so that the writes
  // below are done rather than refused.
  const server = await startProcess({ env: { FIXTURES_DIR: work, TIME_SCALE: '0.02', RATE_LIMIT_MAX: '1000000000' } });
  const { call, close } = client(server.port);
  const samples = [];
  const warmup = Math.min(20, SECONDS / 3);
  try {
    const statuses = new Map();
    const count = (name, res) => {
      const key = `${name} ${res.status}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      verdict.check(res.status > 0 && res.status < 500, '5xx or network error', () => `${name}: ${res.status} ${(res.text ?? res.error ?? '').slice(0, 200)}`);
      return res;
    };
    const ops = [
      async () => count('grid read', await call('GET', `${CLOUD}/grid/${100_001 + Math.floor(Math.random() * 20)}`, { headers: AUTH })),
      async () => count('cloudserver list', await call('GET', `${CLOUD}/cloudserver/`, { headers: AUTH })),
      async () => count('annotation list', await call('GET', `${ANNOTATIONS}?date-start=${Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 4000) * 60_000}&domain=9001`, { headers: AUTH })),
      async () => {
        // Created, changed and deleted again: the load leaves the state as it found it.
        const res = count('annotation create', await call('POST', ANNOTATIONS, { headers: AUTH, body: { title: 'Soak', text: 'x'.repeat(200), start: Date.UTC(2026, 5, 1), domainIds: [9001] } }));
        if (res.status !== 200) return;
        count('annotation update', await call('PUT', `${ANNOTATIONS}/${res.json.id}`, { headers: AUTH, body: { text: 'changed' } }));
        count('annotation delete', await call('DELETE', `${ANNOTATIONS}/${res.json.id}`, { headers: AUTH }));
      },
      async () => {
        // A session per call, logged out again: one new rate-limit key each time.
        const user = Math.floor(Math.random() * 20);
        const login = count('log-in', await call('PUT', `${REPO}/Tokens`, { body: { userName: `user${user}@example.com`, password: `pw${user}` } }));
        if (login.status !== 200) return;
        const headers = { 'x-auth-token': login.json.token };
        count('annotation list (new session)', await call('GET', `${ANNOTATIONS}?date-start=${Date.UTC(2026, 0, 3)}&date-end=${Date.UTC(2026, 0, 3, 2)}`, { headers }));
        count('log-out', await call('DELETE', `${REPO}/Tokens/${login.json.token}`));
      },
      async () => count('alert fire', await call('POST', `${ALERTS}/bench-alert/fire`, { body: { message: 'm', subject: 's' } })),
      async () => count('alert clear', await call('POST', `${ALERTS}/bench-alert/clear`)),
      // Unknown alert uids and tokens: each one a rate-limit key, each a refusal.
      async () => count('alert unknown uid', await call('POST', `${ALERTS}/uid-${Math.random().toString(36).slice(2)}/fire`)),
      async () => count('bad token', await call('GET', `${CLOUD}/grid/`, { headers: { 'x-auth-token': Math.random().toString(36) } })),
      async () => count('unknown path', await call('GET', `${CLOUD}/nothing/${Math.random().toString(36).slice(2)}`, { headers: AUTH })),
      async () => count('bad body', await call('POST', ANNOTATIONS, { headers: AUTH, body: '{"title":' })),
      async () => count('journal', await call('GET', '/_emulator/journal?limit=50')),
    ];
    const sampler = setInterval(() => {
      try {
        samples.push({ t: performance.now(), rss: rssMiB(server.pid) });
      } catch {
        // The process is gone; the checks below say so.
      }
    }, 1000);
    const t0 = performance.now();
    log(`memory: ${CLIENTS} clients for ${SECONDS} s of mixed load (warm-up ${warmup} s) ...`);
    const requests = await loops(CLIENTS, SECONDS, async () => {
      await pick(ops)();
    });
    clearInterval(sampler);
    log(`  ${requests} operations (${Math.round(requests / SECONDS)}/s): ${[...statuses].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`);
    const after = samples.filter((s) => s.t - t0 >= warmup * 1000);
    verdict.check(after.length >= 6, 'too few memory samples after warm-up', `${after.length}`);
    if (after.length >= 6) {
      // Medians of the first and the last samples after warm-up, so that one collection does not decide.
      const head = median(after.slice(0, 5).map((s) => s.rss));
      const tail = median(after.slice(-5).map((s) => s.rss));
      const growth = (tail - head) / head;
      log(`  RSS after warm-up ${head.toFixed(1)} MiB, at the end ${tail.toFixed(1)} MiB: ${(growth * 100).toFixed(1)}% (peak ${Math.max(...samples.map((s) => s.rss)).toFixed(1)} MiB)`);
      verdict.check(growth < 0.1, 'RSS grew by 10% or more after warm-up', `${head.toFixed(1)} -> ${tail.toFixed(1)} MiB`);
    }
    const journal = (await call('GET', '/_emulator/journal')).json;
    verdict.check(journal.entries.length <= journal.size, 'journal holds more than its size', `${journal.entries.length} > ${journal.size}`);
    verdict.check(server.child.exitCode === null, 'server exited during the run', server.stderr());
  } finally {
    close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  verdict.report('memory');
  return verdict.ok;
}

// ---------------------------------------------------------------------------------------------
// kill: kill -9 during writes, with a state file
// ---------------------------------------------------------------------------------------------

/** The annotation ids in a state file's text, or an error if it does not parse. */
function annotationIdsOf(text) {
  const state = JSON.parse(text);
  return new Set(state.annotations.map((a) => a.id));
}

async function kill() {
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-soak-'));
  const verdict = new Verdict();
  const fixtures = join(work, 'fixtures');
  mkdirSync(fixtures);
  writeSeed(fixtures, { grids: 3, startedGrids: 0, annotations: 10, domains: 2 });
  const seeded = new Set(Array.from({ length: 10 }, (_, i) => FIRST_ANNOTATION_ID + i));
  const stateDir = join(work, 'state');
  mkdirSync(stateDir);
  const stateFile = join(stateDir, 'state.json');
  const env = { FIXTURES_DIR: fixtures, STATE_FILE: stateFile, STATE_FLUSH_INTERVAL_MS: String(FLUSH_MS), RATE_LIMIT_MAX: '1000000000', TIME_SCALE: '0.05' };
  const WRITERS = 2;
  /** Annotations the server acknowledged (200 with an id) and that are still expected to exist. */
  let acked = [];
  /** The annotation ids of the last whole state file read before the kill. */
  let lastFlush = new Set();
  let killedAt = 0;
  const lossWindows = [];
  let flushesSeen = 0;
  let survived = 0;
  log(`kill: ${KILLS} kill -9 during writes, state file flushed every ${FLUSH_MS} ms ...`);
  try {
    for (let round = 0; round <= KILLS; round++) {
      let server;
      try {
        server = await startProcess({ env });
      } catch (err) {
        verdict.fail('the server did not start on the state file', String(err.message).slice(0, 400));
        break;
      }
      const { call, close } = client(server.port, WRITERS + 2);
      // What the restart loaded: the last flush before the kill, or a later one.
      const loaded = new Set((await call('GET', '/_emulator/state')).json.annotations.map((a) => a.id));
      if (round > 0) {
        const missing = [...lastFlush].filter((id) => !loaded.has(id));
        verdict.check(missing.length === 0, 'an annotation in the last completed flush was lost', () => `after kill ${round}: ${missing.length} missing, e.g. ${missing.slice(0, 5).join(', ')}`);
        // The state is written as a whole: what was kept is every write up to some point.
        const maxKept = Math.max(0, ...acked.filter((a) => loaded.has(a.id)).map((a) => a.id));
        const holes = acked.filter((a) => a.id < maxKept && !loaded.has(a.id));
        verdict.check(holes.length === 0, 'a hole: an acknowledged write lost while a later one was kept', () => `after kill ${round}: ${holes.map((h) => h.id).slice(0, 5).join(', ')}`);
        // Beyond the acknowledged writes, at most the ones in flight at the kill.
        const known = new Set(acked.map((a) => a.id));
        const unacknowledged = [...loaded].filter((id) => !seeded.has(id) && !known.has(id));
        verdict.check(unacknowledged.length <= WRITERS, 'annotations that no acknowledged or in-flight write explains', () => unacknowledged.slice(0, 5).join(', '));
        const lost = acked.filter((a) => !loaded.has(a.id));
        if (lost.length) lossWindows.push(killedAt - Math.min(...lost.map((a) => a.at)));
        // Lost writes are gone for good; kept in-flight ones now exist.
        acked = [...acked.filter((a) => loaded.has(a.id)), ...unacknowledged.map((id) => ({ id, at: killedAt }))];
        survived = acked.length;
      }
      if (round === KILLS) {
        close();
        await server.stop();
        break;
      }

      let stop = false;
      let lastText = '';
      lastFlush = new Set(loaded);
      const watcher = (async () => {
        while (!stop) {
          try {
            const text = readFileSync(stateFile, 'utf8');
            if (text !== lastText) {
              // The file is replaced by a rename: a reader sees a whole flush or the one before.
              lastFlush = annotationIdsOf(text);
              lastText = text;
              flushesSeen++;
            }
          } catch (err) {
            verdict.fail('the state file could not be read or parsed during writes', err.message);
          }
          await sleep(5);
        }
      })();
      const writer = async (w) => {
        while (!stop) {
          const res = await call('POST', ANNOTATIONS, { headers: AUTH, body: { title: `Round ${round} writer ${w}`, text: 'persisted?', start: Date.UTC(2026, 6, 1) } });
          if (res.status === 200) acked.push({ id: res.json.id, at: performance.now() });
          else if (res.status !== 0) verdict.fail('annotation write refused', `${res.status} ${res.text?.slice(0, 200)}`);
        }
      };
      // Other writes beside them, so that the flushed state changes in every section.
      const actor = async () => {
        while (!stop) {
          await call('POST', `${CLOUD}/grid/${100_001 + Math.floor(Math.random() * 3)}/action`, { headers: AUTH, body: { action: pick(['start', 'terminate']) } });
          await call('POST', `${ALERTS}/bench-alert/fire`);
        }
      };
      const running = [...Array.from({ length: WRITERS }, (_, w) => writer(w)), actor()];
      await sleep(200 + Math.random() * 1300);
      server.child.kill('SIGKILL');
      killedAt = performance.now();
      await server.exit;
      stop = true;
      await Promise.all(running);
      await watcher;
      close();
      // The file the next start reads must parse as a whole state.
      try {
        annotationIdsOf(readFileSync(stateFile, 'utf8'));
      } catch (err) {
        verdict.fail('the state file does not parse after kill -9', err.message);
      }
    }
    const leftovers = readdirSync(stateDir).filter((n) => n !== 'state.json');
    log(`  ${survived} acknowledged annotations kept over ${KILLS} kills; ${flushesSeen} flushes seen; temporary files left by kills: ${leftovers.length}`);
    if (lossWindows.length) log(`  writes lost at a kill had been acknowledged at most ${Math.round(Math.max(...lossWindows))} ms before it (median ${Math.round(median(lossWindows))} ms)`);
    else log('  no acknowledged write was lost');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  verdict.report('kill');
  return verdict.ok;
}

// ---------------------------------------------------------------------------------------------
// paths: the attacker's corpus of path spellings, without credentials
// ---------------------------------------------------------------------------------------------

/** One request on a fresh socket with the request target written byte for byte. */
function rawStatus(port, method, target, body) {
  return new Promise((resolve) => {
    const socket = net.connect(port, HOST);
    const lines = [`${method} ${target} HTTP/1.1`, `Host: ${HOST}`, 'Connection: close'];
    if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
    socket.on('connect', () => socket.end(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`));
    let head = '';
    socket.on('data', (c) => (head += c.toString('latin1').slice(0, 64)));
    socket.on('error', () => resolve(0));
    socket.on('close', () => resolve(Number(head.split(' ')[1]) || 0));
  });
}

/** Fills a path template of the OpenAPI document with ids of the demo seed. */
const concrete = (path) =>
  path.replace('{kind}/{id}', 'grid/101').replace('{type}', 'grid').replace('{uid}', 'demo-alert').replace('{token}', 'demo-token').replace(/\{id\}/g, '101');

async function paths() {
  const verdict = new Verdict();
  const admin = 'soak-admin';
  const server = await startProcess({ env: { ADMIN_TOKEN: admin, ALERTS_REQUIRE_TOKEN: 'true', RATE_LIMIT_MAX: '1000000000' } });
  const { call, close } = client(server.port, 4);
  const adminHeaders = { authorization: `Bearer ${admin}` };
  try {
    const doc = (await call('GET', '/_emulator/openapi.json')).json;
    const operations = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) if (op.security?.length) operations.push({ method: method.toUpperCase(), path: concrete(path) });
    }
    const before = (await call('GET', '/_emulator/state', { headers: adminHeaders })).text;
    const statuses = new Map();
    let sent = 0;
    for (const { method, path } of operations) {
      for (const target of spellings(path, 200)) {
        const status = await rawStatus(server.port, method, target, method === 'GET' || method === 'DELETE' ? undefined : '{"action":"start"}');
        sent++;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        verdict.check([400, 401, 404].includes(status), 'a spelling without credentials got an answer other than 400, 401 or 404', () => `${method} ${target} -> ${status}`);
      }
    }
    const after = (await call('GET', '/_emulator/state', { headers: adminHeaders })).text;
    verdict.check(before === after, 'the state changed under requests without credentials', 'GET /_emulator/state differs');
    const counts = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${n} x ${s}`).join(', ');
    log(`  ${sent} spellings of ${operations.length} protected operations sent without credentials: ${counts}`);
  } finally {
    close();
    await server.stop();
  }
  verdict.report('paths');
  return verdict.ok;
}

// ---------------------------------------------------------------------------------------------
// slow: clients that trickle their request bodies
// ---------------------------------------------------------------------------------------------

/** The soft limit on open files of this process (the server gets the same), from /proc (Linux). */
function openFileLimit() {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s+/)[3]);
    return Number.isFinite(soft) ? soft : 1024;
  } catch {
    return 1024;
  }
}

/** Open file descriptors of a process, from /proc (Linux). */
function openFiles(pid) {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/**
 * One client that sends the head of a request with Content-Length: 1000, then one body byte
 * every 250 ms: the body would take four minutes. Resolves with how it ended.
 */
function trickle(port, method, path) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let received = '';
    let timer;
    let sent = 0;
    const socket = net.connect(port, HOST, () => {
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${HOST}\r\nX-Auth-Token: ${BENCH_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      timer = setInterval(() => {
        if (socket.writable) socket.write(' ');
        sent++;
      }, 250);
    });
    socket.setEncoding('latin1');
    socket.on('data', (c) => (received += c));
    socket.on('error', (err) => (received ||= `error ${err.code}`));
    let gaveUp = false;
    socket.on('close', () => {
      clearInterval(timer);
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(received)?.[1];
      resolve({ ms: performance.now() - t0, status: status ?? (gaveUp ? 'still open at the bound' : received.startsWith('error') ? received : 'closed without an answer'), bytes: sent + 1 });
    });
    // Ends the client in any case, so that the part stays bounded even against a server without deadlines.
    socket.giveUp = () => {
      gaveUp = true;
      socket.destroy();
    };
    trickle.sockets.add(socket);
  });
}
trickle.sockets = new Set();

async function slow() {
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-soak-'));
  const verdict = new Verdict();
  writeSeed(work, { grids: 2, annotations: 10, domains: 1 });
  // Each client holds a descriptor here and one in the server: stay well inside the limit.
  const limit = openFileLimit();
  const clients = Math.min(SLOW_CLIENTS, Math.max(10, limit - 200));
  if (clients < SLOW_CLIENTS) log(`  (${SLOW_CLIENTS} slow clients asked for, ${clients} fit in the open-file limit of ${limit})`);
  // The rate limit would refuse most annotation writes before their body is read.
  const server = await startProcess({ env: { FIXTURES_DIR: work, REQUEST_TIMEOUT_MS: String(SLOW_TIMEOUT_MS), RATE_LIMIT_MAX: '1000000000' } });
  const health = { ok: 0, failed: 0, slowestMs: 0, failures: new Map() };
  let polling = true;
  let peakFiles = openFiles(server.pid);
  // The health check, as a container runtime would poll it, but ten times a second.
  const poller = (async () => {
    while (polling) {
      const t0 = performance.now();
      const res = await request(server.port, { path: '/_emulator/health', timeoutMs: 2000 }).catch((err) => ({ status: 0, error: err.message }));
      health.slowestMs = Math.max(health.slowestMs, performance.now() - t0);
      if (res.status === 200) health.ok++;
      else {
        health.failed++;
        const key = res.status ? `status ${res.status}` : res.error;
        health.failures.set(key, (health.failures.get(key) ?? 0) + 1);
      }
      peakFiles = Math.max(peakFiles, openFiles(server.pid));
      await sleep(100);
    }
  })();
  log(`slow: ${clients} clients trickle request bodies (a byte every 250 ms) to annotation writes and the state import, REQUEST_TIMEOUT_MS=${SLOW_TIMEOUT_MS} ...`);
  try {
    const filesBefore = openFiles(server.pid);
    const t0 = performance.now();
    const endings = [];
    // In batches, so that the listen backlog is never what refuses a connection.
    for (let i = 0; i < clients; i += 100) {
      // Half on an annotation write, half on the state import, the route with the largest body limit.
      endings.push(...Array.from({ length: Math.min(100, clients - i) }, (_, j) => (j % 2 ? trickle(server.port, 'PUT', '/_emulator/state') : trickle(server.port, 'POST', ANNOTATIONS))));
      await sleep(20);
    }
    const openedMs = performance.now() - t0;
    // Well past the deadline: a client still connected then was not cut off.
    const bound = SLOW_TIMEOUT_MS * 3 + 5000;
    const giveUp = setTimeout(() => {
      for (const socket of trickle.sockets) socket.giveUp();
    }, bound);
    const results = await Promise.all(endings);
    clearTimeout(giveUp);
    polling = false;
    await poller;
    const filesAfter = openFiles(server.pid);

    const byStatus = new Map();
    for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    const cut = results.filter((r) => r.status === '408' && r.ms < bound);
    const times = results.map((r) => r.ms).sort((a, b) => a - b);
    log(`  ${clients} connections opened in ${Math.round(openedMs)} ms; endings: ${[...byStatus].map(([k, n]) => `${k}: ${n}`).join(', ')}`);
    log(`  cut off by the request timeout (408): ${cut.length} of ${clients}, after ${Math.round(times[0])}–${Math.round(times.at(-1))} ms (median ${Math.round(median(times))} ms), having sent ${Math.min(...results.map((r) => r.bytes))}–${Math.max(...results.map((r) => r.bytes))} of 1000 body bytes`);
    log(`  health during the run: ${health.ok} answered 200, ${health.failed} failed${health.failed ? ` (${[...health.failures].map(([k, n]) => `${k}: ${n}`).join(', ')})` : ''}; slowest ${Math.round(health.slowestMs)} ms`);
    log(`  server open files: ${filesBefore} before, ${peakFiles} at the peak, ${filesAfter} after the cut-off`);
    verdict.check(cut.length === clients, 'slow clients not cut off with 408 within the bound', () => [...byStatus].map(([k, n]) => `${k}: ${n}`).join(', '));
    verdict.check(health.failed === 0 && health.ok > 0, 'health did not answer throughout', `${health.ok} ok, ${health.failed} failed`);
    verdict.check(filesAfter < filesBefore + 50, 'the server kept descriptors of the cut-off clients', `${filesBefore} before, ${filesAfter} after`);
    const after = await request(server.port, { path: '/_emulator/health' }).catch((err) => ({ status: 0, error: err.message }));
    verdict.check(after.status === 200, 'health after the run', `${after.status} ${after.error ?? ''}`);
    verdict.check(server.child.exitCode === null, 'server exited during the run', server.stderr());
  } finally {
    polling = false;
    for (const socket of trickle.sockets) socket.giveUp();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  verdict.report('slow');
  return verdict.ok;
}

/**
 * The stall report: the stall benchmark's requests part, each request's longest delay of the
 * server's own event loop (and the longest gap between health answers seen from outside)
 * under 50 ms.
 */
async function stallPart(verdict) {
  const { stallBench } = await import('../bench/stall.mjs');
  const rows = await stallBench({ parts: ['requests'], log });
  for (const [measure, value, detail, target, met] of rows) {
    if (target === '-') continue;
    log(`  ${measure}: ${value} (${target})`);
    verdict.check(met === 'yes', 'a request held the event loop 50 ms or more', () => `${measure}: ${value}; ${detail}`);
  }
  verdict.report('stall');
  return verdict.ok;
}

const results = [];
if (PARTS.has('race')) results.push(await race());
if (PARTS.has('memory')) results.push(await memory());
if (PARTS.has('kill')) results.push(await kill());
if (PARTS.has('paths')) results.push(await paths());
if (PARTS.has('slow')) results.push(await slow());
if (PARTS.has('sandboxes')) results.push(await (await import('./soak/sandboxes.mjs')).sandboxes({ log }));
if (PARTS.has('journal')) results.push(await (async (v) => (await journalPart(v), v.report('journal'), v.ok))(new Verdict()));
if (PARTS.has('state')) results.push(await stateFile());
if (PARTS.has('events')) results.push(await (async (v) => (await eventsPart(v), v.report('events'), v.ok))(new Verdict()));
if (PARTS.has('stall')) results.push(await stallPart(new Verdict()));
if (PARTS.has('fires') || PARTS.has('fill')) {
  const verdicts = [];
  const { bounds } = await import('./soak/bounds.mjs');
  await bounds(() => (verdicts.push(new Verdict()), verdicts.at(-1)), { log, parts: PARTS });
  results.push(...verdicts.map((v) => v.ok));
}
process.exit(results.every(Boolean) ? 0 : 1);
