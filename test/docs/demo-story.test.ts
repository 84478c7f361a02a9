import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, startEmulator, type RunningEmulator } from '../../src/index.js';
import { blocks, read } from './markdown.js';

/**
 * The demo story of docs/fixtures.md, as a sales engineer would show it: its files loaded as a
 * seed, each part of the story checked as the page tells it, and its export loaded again as a
 * seed a week later.
 */

const PAGE = 'docs/fixtures.md';
const files = blocks(PAGE, read(PAGE)).filter((b) => b.path?.startsWith('demo-story/'));
const T0 = Date.UTC(2026, 10, 26, 14, 0, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const AUTH = { 'x-auth-token': 'demo-token' };
const CLOUD = '/concerto/services/rest/CloudService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';

const dirs: string[] = [];
const emulators: RunningEmulator[] = [];
afterAll(async () => {
  await Promise.all(emulators.map((e) => e.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function folder(entries: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'demo-story-'));
  dirs.push(dir);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(entries)) writeFileSync(join(dir, name), text);
  return dir;
}

async function emulator(fixtures: string, now: number) {
  const emu = await startEmulator({ fixtures, clock: new ManualClock(now) });
  emulators.push(emu);
  const get = async (path: string) => {
    const res = await fetch(`${emu.url}${path}`, { headers: AUTH });
    expect(res.status, path).toBe(200);
    return res.json();
  };
  const post = async (path: string, body: unknown) =>
    fetch(`${emu.url}${path}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { emu, get, post };
}

const lastWeek = (now: number) => `${ANNOTATIONS}?date-start=${now - 7 * DAY}&date-end=${now}`;

describe('the demo story of docs/fixtures.md', () => {
  it('has its four files on the page', () => {
    expect(files.map((f) => f.path).sort()).toEqual(['demo-story/demo.json', 'demo-story/failures.json', 'demo-story/grids.json', 'demo-story/week.json']);
  });

  it('tells the story the page tells, and its export tells it again a week later', async () => {
    const dir = folder(Object.fromEntries(files.map((f) => [f.path!.slice('demo-story/'.length), f.text])));
    const { emu, get, post } = await emulator(dir, T0);

    // The presenter view's title.
    expect((await get('/_emulator/ui/paths.json')).demo).toEqual({
      title: 'Black Friday readiness',
      subtitle: 'ACME Shop: two grids, staging, a week of changes, one incident',
    });
    // Grid 102 says before its start how it ends, and ends so.
    expect((await get('/_emulator/lifecycles/grid/102')).nextStart).toEqual({ outcome: 'ALLOCATE_FAILED', once: false });
    expect((await post(`${CLOUD}/grid/102/action`, { action: 'start' })).status).toBe(202);
    expect((await post('/_emulator/clock/advance', { until: { kind: 'grid', id: 102 } })).status).toBe(200);
    expect((await get(`${CLOUD}/grid/102`)).state).toBe('ALLOCATE_FAILED');
    // Staging has been running for an hour, and its next start is set to fail.
    expect((await get(`${CLOUD}/environment/301`)).state).toBe('RUNNING');
    expect((await get('/_emulator/lifecycles/environment/301')).nextStart).toEqual({ outcome: 'VOLUME_NOT_AVAILABLE', once: true });
    // A week of changes, the last one 2 hours ago.
    const now = emu.clock.now();
    const week = (await get(lastWeek(now))) as Array<{ title: string; start: number }>;
    expect(week.map((a) => a.title).sort()).toEqual(['CDN change', 'Hotfix 7.2.1', 'Load test', 'Release 7.2']);
    expect(week.find((a) => a.title === 'Hotfix 7.2.1')?.start).toBe(T0 - 2 * HOUR);
    // The failures the story scripts, which leave the dashboard's reads alone.
    const faults = (await get('/_emulator/faults')) as Array<{ id: string; scope: string }>;
    expect(faults.map((f) => [f.id, f.scope])).toEqual([
      ['slow-annotations', 'app'],
      ['flaky-alerts', 'app'],
    ]);

    // Grid 101 started on stage, then the demo saved as the only file of a folder.
    expect((await post(`${CLOUD}/grid/101/action`, { action: 'start' })).status).toBe(202);
    emu.clock.advance(3000);
    const allocating = await get(`${CLOUD}/grid/101`);
    expect(allocating.state).toBe('ALLOCATING');
    const exported = await (await fetch(`${emu.url}/_emulator/state`, { headers: AUTH })).text();
    // The export, and beside it a file with the demo's title (an export holds the state, not the title).
    const saved = folder({ 'state.json': exported, 'title.json': JSON.stringify({ demo: JSON.parse(files.find((f) => f.path === 'demo-story/demo.json')!.text).demo }) });

    // A week later, the saved demo reads as it did: the hotfix as long ago as at the export.
    const savedAt = emu.clock.now();
    const ago = savedAt - (T0 - 2 * HOUR);
    const later = savedAt + 7 * DAY;
    const copy = await emulator(saved, later);
    const again = (await copy.get(lastWeek(later))) as Array<{ title: string; start: number }>;
    expect(again.find((a) => a.title === 'Hotfix 7.2.1')?.start).toBe(later - ago);
    expect((await copy.get('/_emulator/ui/paths.json')).demo.title).toBe('Black Friday readiness');
    const grid = await copy.get(`${CLOUD}/grid/101`);
    expect(grid.state).toBe('ALLOCATING');
    // As far from its next step as it was: 3 of the 6 s of allocating are left.
    copy.emu.clock.advance(2999);
    expect((await copy.get(`${CLOUD}/grid/101`)).state).toBe('ALLOCATING');
    copy.emu.clock.advance(1);
    expect((await copy.get(`${CLOUD}/grid/101`)).state).not.toBe('ALLOCATING');
    expect((await copy.get(`${CLOUD}/grid/102`)).state).toBe('ALLOCATE_FAILED');
  });
});
