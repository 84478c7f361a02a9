import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { runCli } from '../../src/cli/run.js';
import { startRecorder } from '../../src/cli/record.js';
import { takeSnapshot, type SnapshotResult } from '../../src/cli/snapshot.js';
import { IgnoreRules, verifyRecording, verified } from '../../src/cli/verify.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { startEmulator, type RunningEmulator } from '../../src/index.js';
import { loadFixtures, parseState, emptyState, type State } from '../../src/state.js';
import { T0 } from '../helpers/app.js';

/**
 * Snapshot: a second emulator, on another seed (other secrets, other app keys, other people,
 * a licence that names someone), stands in for the service. Its snapshot passes `check`; a
 * client's run recorded against it verifies clean against an emulator seeded from the
 * snapshot, with only the ignore file's paths differing; no file of the snapshot holds the
 * stand-in's secrets or personal data.
 */

const REPO = '/concerto/services/rest/RepositoryService/v1';
const CLOUD = '/concerto/services/rest/CloudService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';

/** What no snapshot file may hold. */
const SECRET = {
  passwords: ['snap-pw-one-7731', 'snap-pw-two-7732', 'snap-pw-three-7733'],
  apiTokens: ['snap-api-token-one-9911', 'snap-api-token-two-9912', 'snap-api-token-three-9913'],
  tokens: ['snap-session-token-5151'],
  emails: ['ada.lovelace@stand-in.example', 'grace.hopper@stand-in.example', 'alan.turing@stand-in.example', 'billing.contact@stand-in.example'],
  names: ['Ada Lovelace', 'Grace Hopper', 'Alan Turing'],
};

let dir: string;
let standIn: FastifyInstance;
let standInUrl: string;
let seed: State;
let snapshot: SnapshotResult;
let snapDir: string;
const handedOut: string[] = [];

/** The demo seed with other people and secrets, other app keys, one annotation by a person, a licence that names one. */
function standInSeed(demo: State): State {
  const s = structuredClone(demo);
  const rename = new Map(s.users.map((u, i) => [u.userName, SECRET.emails[i]]));
  s.users = s.users.map((u, i) => ({ ...u, userName: SECRET.emails[i], password: SECRET.passwords[i], apiToken: SECRET.apiTokens[i] }));
  s.users = s.users.map((u, i) => ({ ...u, fullName: SECRET.names[i] }));
  s.tokens = s.tokens.map((t) => ({ ...t, token: SECRET.tokens[0], userName: rename.get(t.userName) ?? t.userName }));
  s.annotations = s.annotations.map((a) => ({ ...a, user: rename.get(a.user) ?? a.user }));
  s.annotations = s.annotations.map((a) => (a.id === 1921101 ? { ...a, title: 'Stand-in title', text: `asked by ${SECRET.names[1]} (${SECRET.emails[1]})` } : a));
  s.domains = s.domains.map((d, i) => ({ ...d, apiKey: `SNAP${i}-STAND-INKEY-ABCDE-FGHJK` }));
  s.objects = s.objects.map((o) => (o.type === 'license' ? { ...o, description: `billing: ${SECRET.emails[3]}` } : o));
  for (const alert of s.alerts) alert.channels = alert.channels.map((c) => (c.type === 'email' ? { ...c, target: SECRET.emails[3] } : c));
  return parseState({ ...emptyState(), ...s }, 'stand-in seed');
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'snapshot-'));
  seed = standInSeed(await loadFixtures(BUNDLED_FIXTURES_DIR));
  standIn = await buildApp({ clock: new ManualClock(T0), fixtures: seed });
  await standIn.listen({ port: 0, host: '127.0.0.1' });
  standInUrl = `http://127.0.0.1:${(standIn.server.address() as { port: number }).port}`;
  snapDir = join(dir, 'snap');
  snapshot = await takeSnapshot({ target: new URL(standInUrl), out: snapDir, apiToken: SECRET.apiTokens[0], maskKey: 'test key' });
}, 120_000);

afterAll(async () => {
  await standIn?.close();
  await rm(dir, { recursive: true, force: true });
});

const json = { 'content-type': 'application/json' };

/** A client's read-only run: log in with an API token, read every kind of thing the snapshot holds, log out. */
async function clientRun(url: string): Promise<number[]> {
  const statuses: number[] = [];
  const login = await fetch(`${url}${REPO}/Tokens`, { method: 'PUT', headers: json, body: JSON.stringify({ apiToken: SECRET.apiTokens[0] }) });
  statuses.push(login.status);
  const { token } = (await login.json()) as { token: string };
  handedOut.push(token);
  const reads = [
    `${CLOUD}/grid/101`,
    `${CLOUD}/grid/`,
    `${CLOUD}/cloudserver/`,
    `${CLOUD}/rsdb/201`,
    `${CLOUD}/environment/301/`,
    `${ANNOTATIONS}?date-start=0`,
    `${ANNOTATIONS}/1921102`,
    `${REPO}/Objects/license`,
    `${REPO}/Objects/grid`,
    `${REPO}/Objects/domain`,
    `${REPO}/Objects/alert`,
    `${REPO}/Objects/boomerang`,
  ];
  for (const path of reads) {
    const response = await fetch(`${url}${path}`, { headers: { 'x-auth-token': token } });
    statuses.push(response.status);
    await response.text();
  }
  const out = await fetch(`${url}${REPO}/Tokens/${token}`, { method: 'DELETE' });
  statuses.push(out.status);
  return statuses;
}

describe('snapshot of a stand-in for the service', () => {
  it('writes a fixture folder that check accepts, and a report of what it could not carry', async () => {
    let out = '';
    const code = await runCli(['check', snapDir], {}, { out: (t) => void (out += t), err: (t) => void (out += t) });
    expect(out).toMatch(/^OK /m);
    expect(code).toBe(0);
    // The caller's tenant only: the third user is in another tenant.
    expect(snapshot.counts).toMatchObject({ users: seed.users.filter((u) => u.tenant === 'Default').length, grids: seed.grids.length, rsdbs: seed.rsdbs.length, environments: seed.environments.length });
    expect(snapshot.counts.annotations).toBe(seed.annotations.length);
    expect(snapshot.counts.alerts).toBe(seed.alerts.length);
    expect(snapshot.counts.domains).toBe(seed.domains.length);
    const report = await readFile(join(snapDir, 'SNAPSHOT-REPORT.md'), 'utf8');
    expect(report).toBe(snapshot.report);
    expect(report).toContain('alerts: their channels');
    expect(report).toContain(`as \`${snapshot.logIn.userName}\``);
    expect(snapshot.logIn.userName).toMatch(/^user-[0-9a-f]{8}@example\.com$/);
  });

  it('answers the reads of a client run as the stand-in did: verify is clean but for the ignore file', async () => {
    const recording = join(dir, 'run.jsonl');
    const recorder = await startRecorder({ target: new URL(standInUrl), out: recording });
    let statuses: number[] = [];
    try {
      statuses = await clientRun(recorder.url);
    } finally {
      await recorder.close();
    }
    expect(statuses.every((s) => s === 200 || s === 204)).toBe(true);
    const seeded: RunningEmulator = await startEmulator({ fixtures: snapDir, port: 0 });
    try {
      const ignore = join(dir, 'ignore.json');
      await writeFile(
        ignore,
        JSON.stringify({
          ignore: ['$..created', '$..lastModified'],
          rules: [
            { path: `${CLOUD}/grid*`, ignore: ['$.statistics', '$[*].statistics', '$.journalEntries', '$[*].journalEntries'], why: 'carried as of the snapshot' },
            { path: `${ANNOTATIONS}*`, ignore: ['$..user', '$.text', '$[*].text'], why: 'people replaced' },
            { path: `${REPO}/Objects/domain`, ignore: ['$.objects[*].attributes'], why: 'app keys replaced' },
            { path: `${REPO}/Objects/license`, ignore: ['$.objects[*].description'], why: 'an e-mail address replaced' },
          ],
        }),
      );
      const withIgnore = await verifyRecording(recording, { url: seeded.url, ignore: await IgnoreRules.load(ignore) });
      const differ = withIgnore.exchanges.filter((e) => e.differences.length).map((e) => `#${e.seq} ${e.differences.map((d) => `${d.kind} ${d.path}`).join('; ')}`);
      expect(differ).toEqual([]);
      expect(verified(withIgnore)).toBe(true);
      // Without it, exactly the replaced people, app keys and times differ, and nothing else.
      const bare = await verifyRecording(recording, { url: seeded.url });
      const paths = new Set(bare.exchanges.flatMap((e) => e.differences.map((d) => d.path.replace(/\[\d+\]/g, '[*]'))));
      for (const path of paths) expect(path, path).toMatch(/created|lastModified|statistics|journalEntries|user|text|attributes|description/);
    } finally {
      await seeded.close();
    }
  }, 120_000);

  it('holds none of the stand-in seed passwords, tokens, API keys, e-mail addresses or names in any file', async () => {
    const appKeys = seed.domains.map((d) => d.apiKey as string);
    const forbidden = [...SECRET.passwords, ...SECRET.apiTokens, ...SECRET.tokens, ...SECRET.emails, ...SECRET.names, ...appKeys, ...handedOut];
    const files = await readdir(snapDir);
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = await readFile(join(snapDir, file), 'utf8');
      for (const secret of forbidden) expect(text.includes(secret), `${file} holds ${secret}`).toBe(false);
      expect(text.toLowerCase().includes('@stand-in.example'), `${file} holds an address of the stand-in`).toBe(false);
    }
  });

  it('replaces a value the same way everywhere, and the same way again under the same key', async () => {
    const users = JSON.parse(await readFile(join(snapDir, 'users.json'), 'utf8')) as { users: Array<{ userName: string }> };
    const annotations = JSON.parse(await readFile(join(snapDir, 'annotations.json'), 'utf8')) as { annotations: Array<{ id: number; user: string; text: string }> };
    const second = users.users[1].userName;
    const first = annotations.annotations.find((a) => a.id === 1921101)!;
    expect(first.user).toBe(second);
    expect(first.text).toContain(second);
    const again = join(dir, 'again');
    await takeSnapshot({ target: new URL(standInUrl), out: again, apiToken: SECRET.apiTokens[0], maskKey: 'test key' });
    for (const file of ['users.json', 'annotations.json', 'objects.json']) {
      expect(await readFile(join(again, file), 'utf8'), file).toBe(await readFile(join(snapDir, file), 'utf8'));
    }
    const other = join(dir, 'other-key');
    await takeSnapshot({ target: new URL(standInUrl), out: other, apiToken: SECRET.apiTokens[0], maskKey: 'another key' });
    expect(await readFile(join(other, 'users.json'), 'utf8')).not.toBe(await readFile(join(snapDir, 'users.json'), 'utf8'));
  }, 120_000);

  it("writes a real-user model per app from the stand-in's last 24 hours: its median page load time and its page groups", async () => {
    const query = JSON.parse(await readFile(join(snapDir, 'query.json'), 'utf8')) as {
      rumModels: Array<{ domainId: number; pageLoadMedianMs: number; pageGroups?: Array<{ name: string; share: number }> }>;
    };
    const login = await fetch(`${standInUrl}${REPO}/Tokens`, { method: 'PUT', headers: json, body: JSON.stringify({ apiToken: SECRET.apiTokens[0] }) });
    const { token } = (await login.json()) as { token: string };
    handedOut.push(token);
    const shop = seed.domains.find((d) => d.name === 'shop.example.com')!;
    const base = `${standInUrl}/concerto/mpulse/api/v2/${shop.apiKey as string}`;
    const summary = (await (await fetch(`${base}/summary?format=json&date-comparator=Last24Hours`, { headers: { authentication: token } })).json()) as { median: string };
    const groups = (await (await fetch(`${base}/page-groups?format=json&date-comparator=Last24Hours`, { headers: { authentication: token } })).json()) as {
      data: Array<[string, number, string, number, string]>;
    };
    const model = query.rumModels.find((m) => m.domainId === shop.id)!;
    expect(model.pageLoadMedianMs).toBe(Math.round(Number(summary.median)));
    expect(model.pageGroups!.map((g) => g.name)).toEqual(groups.data.map((row) => row[0]));
    expect(query.rumModels.map((m) => m.domainId).sort()).toEqual(seed.domains.filter((d) => (d.tenant ?? 'Default') === 'Default').map((d) => d.id).sort());
  });

  it('sends the log-in and GETs only: through a recorder that refuses every other call, nothing is refused', async () => {
    const recording = join(dir, 'snapshot-calls.jsonl');
    const recorder = await startRecorder({ target: new URL(standInUrl), out: recording });
    try {
      await takeSnapshot({ target: new URL(recorder.url), out: join(dir, 'methods'), apiToken: SECRET.apiTokens[0] });
    } finally {
      await recorder.close();
    }
    expect(recorder.stats()).toMatchObject({ refused: 0, failed: 0 });
    const methods = (await readFile(recording, 'utf8')).split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { method: string }).method);
    expect(methods.filter((m) => m !== 'GET')).toEqual(['PUT']);
    expect(methods.length).toBeGreaterThan(20);
  }, 120_000);

  it('stops with a message naming the call and its status when the target answers an error', async () => {
    let err = '';
    const code = await runCli(['snapshot', '--target', standInUrl, '--out', join(dir, 'refused'), '--api-token', 'wrong'], {}, { out: () => undefined, err: (t) => void (err += t) });
    expect(code).toBe(1);
    expect(err).toMatch(/^cloud-emulator: snapshot: PUT \/concerto\/services\/rest\/RepositoryService\/v1\/Tokens \(the log-in\) answered 401: bad credentials/);
    err = '';
    const small = await runCli(['snapshot', '--target', standInUrl, '--out', join(dir, 'small'), '--api-token', SECRET.apiTokens[0], '--max-bytes', '2000'], {}, {
      out: () => undefined,
      err: (t) => void (err += t),
    });
    expect(small).toBe(1);
    expect(err).toContain("reached the snapshot's bound of 2000 bytes (--max-bytes)");
  }, 120_000);

  it('keeps to --max-objects and says what it left out', async () => {
    const bounded = await takeSnapshot({ target: new URL(standInUrl), out: join(dir, 'bounded'), apiToken: SECRET.apiTokens[0], maxObjects: 5 });
    expect(bounded.skipped.some((s) => s.includes("bound of 5 objects (--max-objects)"))).toBe(true);
    const counted = Object.entries(bounded.counts).filter(([name]) => name !== 'objects' && name !== 'rumModels' && name !== 'cloudServers');
    expect(counted.reduce((n, [, c]) => n + c, 0)).toBeLessThanOrEqual(5 + 1);
    let out = '';
    expect(await runCli(['check', join(dir, 'bounded')], {}, { out: (t) => void (out += t), err: (t) => void (out += t) })).toBe(0);
  }, 120_000);

  it('--help lists snapshot', async () => {
    let out = '';
    expect(await runCli(['snapshot', '--help'], {}, { out: (t) => void (out += t), err: (t) => void (out += t) })).toBe(0);
    expect(out).toContain('cloud-emulator snapshot --target URL --out DIR (--user NAME --password P | --api-token T)');
    expect(out).toContain('docs/parity.md#snapshot');
  });

  it('refuses a bad command line with exit 2', async () => {
    const cases: Array<[string[], string]> = [
      [['snapshot', '--out', 'x', '--api-token', 't'], "option '--target' is required"],
      [['snapshot', '--target', 'ftp://x', '--out', 'x', '--api-token', 't'], "must be an http or https URL, got 'ftp://x'"],
      [['snapshot', '--target', 'http://x', '--api-token', 't'], "option '--out' is required"],
      [['snapshot', '--target', 'http://x', '--out', 'x'], "the log-in needs '--user' and '--password'"],
      [['snapshot', '--target', 'http://x', '--out', 'x', '--user', 'u', '--password', 'p', '--api-token', 't'], "give either '--user' and '--password', or '--api-token', not both"],
      [['snapshot', '--target', 'http://x', '--out', 'x', '--api-token', 't', '--max-objects', '0'], "option '--max-objects' must be an integer from 1 to 1000000, got '0'"],
      [['snapshot', '--target', 'http://x', '--out', 'x', '--api-token', 't', '--mask-kee', 'k'], "unknown option '--mask-kee' (did you mean '--mask-key'?)"],
    ];
    for (const [argv, message] of cases) {
      let err = '';
      const code = await runCli(argv, {}, { out: () => undefined, err: (t) => void (err += t) });
      expect(err, argv.join(' ')).toContain(message);
      expect(code).toBe(2);
    }
  });
});
