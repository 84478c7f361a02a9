import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FixtureError, jsonPath } from '../../src/core/fixtures.js';
import { loadFixtures, parseState } from '../../src/state.js';
import { readStateFile } from '../../src/world/persistence.js';

/** The folders the tests wrote, removed once they are done. */
const folders: string[] = [];
afterAll(async () => {
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function folder(files: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fixtures-'));
  folders.push(dir);
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

const user = { userName: 'a@example.com', password: 'x' };

describe('fixtures loader', () => {
  it('merges every JSON file of a folder and fills defaults', async () => {
    const dir = await folder({ 'a.json': { users: [user] }, 'b.json': { tokens: [{ token: 't', userName: 'a@example.com' }] } });
    const state = await loadFixtures(dir);
    expect(state.users).toEqual([{ ...user, tenant: 'Default' }]);
    expect(state.tokens[0]).toMatchObject({ token: 't', neverExpires: false });
    expect(state.grids).toEqual([]);
  });

  it('names the file, the JSON path and the problem of an invalid file', async () => {
    const dir = await folder({ 'bad.json': { users: [{ userName: 'a', password: 1 }] } });
    await expect(loadFixtures(dir)).rejects.toThrow(/bad\.json:1:27: \$\.users\[0\]\.password: Expected string, got 1/);
  });

  it('lists the same problems for a folder of a few entries as for one of thousands (checked another way)', async () => {
    const bad = { users: [{ userName: 'a', password: 1, tenant: 'Default', extra: true }], gridz: [] };
    const many = { users: Array.from({ length: 1000 }, (_, i) => ({ userName: `u${i}@example.com`, password: 'x' })) };
    const problemsOf = async (files: Record<string, unknown>) => {
      const err = await loadFixtures(await folder(files)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FixtureError);
      return (err as FixtureError).problems.map(({ file, ...p }) => ({ ...p, file: file?.replace(/.*[\\/]/, '') }));
    };
    const few = await problemsOf({ 'bad.json': bad });
    expect(few.map((p) => p.pointer)).toEqual(['/users/0/password', '/users/0/extra', '/gridz']);
    expect(await problemsOf({ 'bad.json': bad, 'many.json': many })).toEqual(few);
  });

  it('refuses unknown top-level sections and unparseable JSON', async () => {
    await expect(loadFixtures(await folder({ 'x.json': { gridz: [] } }))).rejects.toThrow(/x\.json:1:2: \$\.gridz: unknown key "gridz" \(did you mean 'grids'\?\)/);
    await expect(loadFixtures(await folder({ 'y.json': '{ "users": [' }))).rejects.toThrow(/y\.json:1:13: \$: not valid JSON: the text ends where a value should be/);
  });

  it('refuses a "__proto__" key like any other unknown property, and changes no prototype', async () => {
    const text = '{"users":[{"userName":"a@example.com","password":"x","__proto__":{"tenant":"ACME"}}]}';
    await expect(loadFixtures(await folder({ 'p.json': text }))).rejects.toThrow(/p\.json:1:\d+: \$\.users\[0\]\.__proto__: unknown key "__proto__"/);
    expect(({} as { tenant?: string }).tenant).toBeUndefined();
  });

  it('refuses an id defined twice across files, naming both files', async () => {
    const dir = await folder({ 'a.json': { users: [user] }, 'b.json': { users: [user] } });
    await expect(loadFixtures(dir)).rejects.toThrow(/b\.json:1:11: \$\.users\[0\]: duplicate users entry "a@example\.com"; also at .*a\.json:1:11 \$\.users\[0\]/);
  });

  it("reads the demo's title from the one file that gives it, and refuses a second", async () => {
    const demo = { title: 'Checkout under load', subtitle: 'three grids' };
    expect((await loadFixtures(await folder({ 'a.json': { users: [user] }, 'demo.json': { demo } }))).demo).toEqual(demo);
    expect((await loadFixtures(await folder({ 'a.json': { users: [user] } }))).demo).toBeUndefined();
    await expect(loadFixtures(await folder({ 'a.json': { demo }, 'b.json': { demo } }))).rejects.toThrow(/b\.json:1:2: \$\.demo: the demo is described by one file only; also at .*a\.json:1:2 \$\.demo/);
    await expect(loadFixtures(await folder({ 'c.json': { demo: { title: '' } } }))).rejects.toThrow(/c\.json:1:10: \$\.demo\.title/);
  });

  it('refuses references to things that do not exist', () => {
    expect(() => parseState({ tokens: [{ token: 't', userName: 'ghost' }] }, 'posted')).toThrow(FixtureError);
    expect(() => parseState({ tokens: [{ token: 't', userName: 'ghost' }] }, 'posted')).toThrow(/\$\.tokens\[0\]\.userName: no user 'ghost'/);
  });

  it('reads files that start with a UTF-8 byte-order mark, as some editors save them', async () => {
    const withMark = `\uFEFF${JSON.stringify({ users: [user] })}\n`;
    expect((await loadFixtures(await folder({ 'a.json': withMark }))).users).toEqual([{ ...user, tenant: 'Default' }]);
    const state = await readStateFile(join(await folder({ 'state.json': withMark }), 'state.json'), parseState);
    expect(state?.users).toEqual([{ ...user, tenant: 'Default' }]);
    // Only a leading one: anywhere else it is still a mistake.
    const later = await folder({ 'b.json': `{"users": []}\uFEFF` });
    await expect(loadFixtures(later)).rejects.toThrow(/b\.json:1:14: \$: not valid JSON: unexpected character U\+FEFF after the end of the JSON value/);
  });

  it('reports a missing folder clearly', async () => {
    await expect(loadFixtures('/nonexistent/fixtures')).rejects.toThrow(/cannot read fixtures folder \/nonexistent\/fixtures/);
  });

  it('spells JSON paths the way people read them', () => {
    expect(jsonPath('/grids/0/servers/1/cloudType')).toBe('$.grids[0].servers[1].cloudType');
    expect(jsonPath('')).toBe('$');
    expect(jsonPath('/a b')).toBe('$["a b"]');
  });
});

describe('a posted state is checked by the same loader', () => {
  it('lists every problem, the interfaces\' own rules included, with times relative to the world\'s now', async () => {
    const { makeApp } = await import('../helpers/app.js');
    const { app } = await makeApp();
    try {
      const annotation = { id: 1, title: 't', text: 'x', user: 'u', domainIds: [] };
      const state = {
        annotations: [
          { ...annotation, startAgoMs: 1000, end: 5000 },
          { ...annotation, id: 2, start: 1, startAgoMs: 2 },
        ],
        tokens: [{ token: 't', userName: 'ghost' }],
        grids: [{ id: 1, name: 'g', startOutcome: 'CHEKED', servers: [] }],
      };
      const res = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: state });
      expect(res.statusCode).toBe(400);
      const now = app.world.clock.now();
      expect(res.json().message.split('\n')).toEqual([
        'body: $.grids[0].servers: Expected array length to be greater or equal to 1, got []',
        `body: $.grids[0].startOutcome: expected one of "CHECKED", "ALLOCATE_FAILED", "ALLOCATED_WITH_FAILURES", "CHECKED_WITH_FAILURES", "CHECKED_AND_DEPLOYING", "CHECKED_AND_TERMINATING", got "CHEKED" (did you mean 'CHECKED'?)`,
        "body: $.tokens[0].userName: no user 'ghost'",
        `body: $.annotations[0]: end (5000) is before start (${now - 1000}) (id 1)`,
        'body: $.annotations[1]: give exactly one of start and startAgoMs (it has both) (id 2)',
      ]);
    } finally {
      await app.close();
    }
  });
});
