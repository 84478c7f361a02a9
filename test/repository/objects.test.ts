import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { PATHS, makeDemoApp } from '../helpers/app.js';

const { REPO, CLOUD, ANNOTATIONS } = PATHS;
const DEMO = { 'x-auth-token': 'demo-token' };
const JSON_TYPE = { 'content-type': 'application/json' };

type Obj = { id: number; name: string; type: string; attributes: Array<{ name: string; value: string | null }>; body?: string; [k: string]: unknown };
const attr = (o: Obj, name: string) => o.attributes.find((a) => a.name === name)?.value;

let app: FastifyInstance;
afterEach(async () => app?.close());

async function logIn(body: object): Promise<string> {
  const res = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, headers: JSON_TYPE, payload: JSON.stringify(body) });
  expect(res.statusCode).toBe(200);
  return res.json().token;
}

describe('the object, as clients read it', () => {
  it('carries every field, ISO-8601 times, string attribute values and an XML body', async () => {
    ({ app } = await makeDemoApp());
    const res = await app.inject({ url: `${REPO}/Objects/license/9001`, headers: DEMO });
    expect(res.statusCode).toBe(200);
    const o = res.json();
    expect(Object.keys(o).sort()).toEqual(
      ['attributes', 'body', 'created', 'deleted', 'description', 'effectivePermissions', 'hidden', 'id', 'lastModified', 'name', 'readOnly', 'schemaVersion', 'tenantID', 'type'].sort(),
    );
    expect(o).toMatchObject({ id: 9001, type: 'license', name: 'CloudTest Enterprise licence', created: '2026-01-01T00:00:00.000Z', body: '<License><Edition>Enterprise</Edition></License>' });
    expect(o.lastModified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    for (const a of o.attributes) expect(typeof a.value).toBe('string');
    expect(o.effectivePermissions).toEqual({ read: true, write: true, use: true, fullControl: true });
  });

  it('answers 404 for an unknown id, type or another tenant, and 400 for an id that is not an integer', async () => {
    ({ app } = await makeDemoApp());
    const cases: Array<[string, number, RegExp]> = [
      ['license/4242', 404, /no license object with id 4242/],
      ['widget/1', 404, /unknown object type 'widget'/],
      ['license/9003', 404, /no license object with id 9003/], // ACME's
      ['license/abc', 400, /object id 'abc' is not an integer/],
    ];
    for (const [path, status, message] of cases) {
      const res = await app.inject({ url: `${REPO}/Objects/${path}`, headers: DEMO });
      expect(res.statusCode, path).toBe(status);
      expect(res.json().message, path).toMatch(message);
    }
  });
});

describe('filters', () => {
  it('licence report: Objects/license?key=... answers that licence and its attributes, a wrong key nothing', async () => {
    ({ app } = await makeDemoApp());
    const res = await app.inject({ url: `${REPO}/Objects/license?key=LIC-DEMO-0001`, headers: DEMO });
    expect(res.statusCode).toBe(200);
    const { objects } = res.json() as { objects: Obj[] };
    expect(objects.map((o) => o.id)).toEqual([9001]);
    expect(attr(objects[0], 'serverHours')).toBe('5000');
    expect(attr(objects[0], 'serverHoursUsed')).toBe('1275');
    const none = await app.inject({ url: `${REPO}/Objects/license?key=LIC-NOPE`, headers: DEMO });
    expect(none.json()).toEqual({ objects: [] });
  });

  it('no filter is ignored: an attribute nobody has, or an unknown parameter, matches nothing', async () => {
    ({ app } = await makeDemoApp());
    const all = (await app.inject({ url: `${REPO}/Objects/domain`, headers: DEMO })).json().objects;
    expect(all).toHaveLength(5);
    for (const q of ['domain=nothing.example.com', 'format=json', 'domain=shop.example.com&name=www.example.com', 'apiKey=']) {
      const res = await app.inject({ url: `${REPO}/Objects/domain?${q}`, headers: DEMO });
      expect(res.json(), q).toEqual({ objects: [] });
    }
    const both = await app.inject({ url: `${REPO}/Objects/domain?domain=shop.example.com&name=shop.example.com`, headers: DEMO });
    expect(both.json().objects.map((o: Obj) => o.id)).toEqual([12346]);
  });

  it('includeDetails=false leaves the body out; any other value is a 400', async () => {
    ({ app } = await makeDemoApp());
    const res = await app.inject({ url: `${REPO}/Objects/license?includeDetails=false`, headers: DEMO });
    const objects: Obj[] = res.json().objects;
    expect(objects.map((o) => o.id)).toEqual([9001, 9002]);
    expect(objects.every((o) => !('body' in o))).toBe(true);
    const bad = await app.inject({ url: `${REPO}/Objects/license?includeDetails=maybe`, headers: DEMO });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe("query parameter 'includeDetails' must be true or false, got 'maybe'");
  });
});

describe('bulk domain update (list by host name, POST to objects[0].id)', () => {
  it('finds exactly the domain of that host and updates it, attributes merged by name', async () => {
    ({ app } = await makeDemoApp());
    const list = await app.inject({ url: `${REPO}/Objects/domain?domain=shop.example.com`, headers: DEMO });
    const { objects } = list.json() as { objects: Obj[] };
    expect(objects.map((o) => o.name)).toEqual(['shop.example.com']);
    const id = objects[0].id;
    const update = await app.inject({
      method: 'POST',
      url: `${REPO}/Objects/domain/${id}`,
      headers: { ...DEMO, ...JSON_TYPE },
      payload: JSON.stringify({ description: 'Shop (bulk update)', attributes: [{ name: 'vertical', value: 'Fashion' }, { name: 'owner', value: 'web-team' }] }),
    });
    expect(update.statusCode).toBe(204);
    expect(update.body).toBe('');
    const after: Obj = (await app.inject({ url: `${REPO}/Objects/domain/${id}`, headers: DEMO })).json();
    expect(after.description).toBe('Shop (bulk update)');
    expect(after.attributes).toEqual([
      { name: 'apiKey', value: 'SHOP9-X4T7K-M2QRB-V8DNE-H5WZC' },
      { name: 'domain', value: 'shop.example.com' },
      { name: 'vertical', value: 'Fashion' },
      { name: 'owner', value: 'web-team' },
    ]);
    expect(after.lastModified).toBe('2026-11-22T09:00:00.000Z');
    // The other domains are untouched.
    const other: Obj = (await app.inject({ url: `${REPO}/Objects/domain/12345`, headers: DEMO })).json();
    expect(other.description).toBe('');
  });
});

describe('the Julia client (mPulseAPI.jl)', () => {
  it('logs in with tenant and apiToken, gets exactly one domain by apiKey, updates and reads it back', async () => {
    ({ app } = await makeDemoApp());
    const token = await logIn({ tenant: 'Default', apiToken: 'demo-api-token' });
    const headers = { 'x-auth-token': token };
    const res = await app.inject({ url: `${REPO}/Objects/domain?apiKey=EXMPL-WWW7X-K4R2Q-N8TBD-ZC5HV`, headers });
    const { objects } = res.json() as { objects: Obj[] };
    expect(objects).toHaveLength(1);
    const domain = objects[0];
    expect(domain).toMatchObject({ id: 12345, name: 'www.example.com', schemaVersion: '1.0' });
    expect(domain.body).toMatch(/^<Domain>.*<SessionTimeout>30<\/SessionTimeout>.*<\/Domain>$/);
    expect(Number.isNaN(Date.parse(domain.created as string))).toBe(false);
    // By id: the object itself, unwrapped.
    const byId = await app.inject({ url: `${REPO}/Objects/domain/12345`, headers });
    expect(byId.json()).toEqual(domain);
    // The update Julia builds: type and id beside the attributes and a well-formed XML body.
    const body = '<Domain><SessionTimeout>45</SessionTimeout></Domain>';
    const post = await app.inject({
      method: 'POST',
      url: `${REPO}/Objects/domain/12345`,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ type: 'domain', id: 12345, attributes: [{ name: 'sessionTimeoutMinutes', value: 45 }], body }),
    });
    expect(post.statusCode).toBe(204);
    const after: Obj = (await app.inject({ url: `${REPO}/Objects/domain/12345`, headers })).json();
    expect(after.body).toBe(body);
    expect(attr(after, 'sessionTimeoutMinutes')).toBe('45');
  });

  it('deletes a statistical model (204, then 404) and is refused deleting a domain (409, saying why)', async () => {
    ({ app } = await makeDemoApp());
    const del = await app.inject({ method: 'DELETE', url: `${REPO}/Objects/statisticalmodel/9201`, headers: { ...DEMO, ...JSON_TYPE } });
    expect(del.statusCode).toBe(204);
    expect((await app.inject({ url: `${REPO}/Objects/statisticalmodel/9201`, headers: DEMO })).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: `${REPO}/Objects/statisticalmodel/9201`, headers: DEMO })).statusCode).toBe(404);
    const domain = await app.inject({ method: 'DELETE', url: `${REPO}/Objects/domain/12345`, headers: DEMO });
    expect(domain.statusCode).toBe(409);
    expect(domain.json().message).toBe(
      'domain 12345 cannot be deleted: the annotations interface owns domain objects (annotations refer to them); they are made and removed with the fixtures',
    );
    expect((await app.inject({ url: `${REPO}/Objects/domain/12345`, headers: DEMO })).statusCode).toBe(200);
  });
});

describe('create (repository.js: PUT Objects)', () => {
  it('creates with PUT Objects and PUT Objects/<type>, answers {id}, then reads, HEADs, lists and refuses a duplicate name', async () => {
    ({ app } = await makeDemoApp());
    const headers = { ...DEMO, ...JSON_TYPE, 'x-source': 'boomerang-build', connection: 'close' };
    const props = { type: 'boomerang', name: 'boomerang-1.738.0', description: 'build', attributes: [{ name: 'version', value: '1.738.0' }], body: '<Boomerang/>' };
    const res = await app.inject({ method: 'PUT', url: `${REPO}/Objects`, headers, payload: JSON.stringify(props) });
    expect(res.statusCode).toBe(200);
    const { id } = res.json();
    expect(id).toBeGreaterThan(12346);
    const got: Obj = (await app.inject({ url: `${REPO}/Objects/boomerang/${id}`, headers: DEMO })).json();
    expect(got).toMatchObject({ id, type: 'boomerang', name: 'boomerang-1.738.0', description: 'build', body: '<Boomerang/>', attributes: [{ name: 'version', value: '1.738.0' }] });
    expect(got.created).toBe('2026-11-22T09:00:00.000Z');
    expect((await app.inject({ method: 'HEAD', url: `${REPO}/Objects/boomerang/${id}`, headers: DEMO })).statusCode).toBe(200);
    const list = await app.inject({ url: `${REPO}/Objects/boomerang/?name=boomerang-1.738.0`, headers: DEMO });
    expect(list.json().objects.map((o: Obj) => o.id)).toEqual([id]);

    const dup = await app.inject({ method: 'PUT', url: `${REPO}/Objects`, headers, payload: JSON.stringify(props) });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().message).toBe(`a boomerang named 'boomerang-1.738.0' already exists (id ${id})`);

    const byPath = await app.inject({ method: 'PUT', url: `${REPO}/Objects/boomerang`, headers, payload: JSON.stringify({ name: 'boomerang-1.739.0' }) });
    expect(byPath.statusCode).toBe(200);
    expect(byPath.json().id).toBe(id + 1);
  });

  it('refuses what it cannot create, saying why, and changes nothing', async () => {
    ({ app } = await makeDemoApp());
    const before = app.world.counts().objects;
    const cases: Array<[string, unknown, number, RegExp]> = [
      ['', { type: 'grid', name: 'New grid' }, 409, /grid objects belong to the interface that owns them/],
      ['', { name: 'x' }, 400, /the field 'type' is required/],
      ['', { type: 'license' }, 400, /the field 'name' is required/],
      ['', { type: 'gadget', name: 'x' }, 404, /unknown object type 'gadget'/],
      ['/license', { type: 'boomerang', name: 'x' }, 400, /body field 'type' is 'boomerang' but the path names type 'license'/],
      ['', { type: 'license', name: 'x', colour: 'red' }, 400, /unknown field 'colour'/],
      ['', { type: 'license', name: 'x', attributes: [{ name: 'a', value: '1' }, { name: 'a', value: '2' }] }, 400, /attribute 'a' is given twice/],
      ['', ['license'], 400, /the body must be a JSON object/],
      ['', { type: 'license', name: 'CloudTest Enterprise licence' }, 409, /already exists \(id 9001\)/],
    ];
    for (const [path, payload, status, message] of cases) {
      const res = await app.inject({ method: 'PUT', url: `${REPO}/Objects${path}`, headers: { ...DEMO, ...JSON_TYPE }, payload: JSON.stringify(payload) });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.json().message, JSON.stringify(payload)).toMatch(message);
    }
    expect(app.world.counts().objects).toBe(before);
  });

  it('bounds what is stored by REPOSITORY_MAX_BYTES: past it a create is a 507, as every other storage bound, and nothing is kept', async () => {
    ({ app } = await makeDemoApp());
    const held = app.world.stores.repository.objects.size;
    await app.close();
    ({ app } = await makeDemoApp({ repositoryMaxBytes: held + 300 }));
    const put = (name: string, body: string) =>
      app.inject({ method: 'PUT', url: `${REPO}/Objects`, headers: { ...DEMO, ...JSON_TYPE }, payload: JSON.stringify({ type: 'boomerang', name, body }) });
    expect((await put('small', '<B/>')).statusCode).toBe(200);
    const big = await put('big', `<B>${'x'.repeat(400)}</B>`);
    expect(big.statusCode).toBe(507);
    expect(big.json().message).toMatch(/REPOSITORY_MAX_BYTES is \d+: delete objects first/);
    const list = await app.inject({ url: `${REPO}/Objects/boomerang`, headers: DEMO });
    expect(list.json().objects.map((o: Obj) => o.name)).toEqual(['boomerang-1.737.0', 'small']);
  });
});

describe('update and delete refusals', () => {
  it('updates a plain object by the fields sent, and refuses a rename onto another name', async () => {
    ({ app } = await makeDemoApp());
    const post = (id: number, payload: unknown) =>
      app.inject({ method: 'POST', url: `${REPO}/Objects/license/${id}`, headers: { ...DEMO, ...JSON_TYPE }, payload: JSON.stringify(payload) });
    expect((await post(9001, { attributes: [{ name: 'serverHoursUsed', value: '1300' }] })).statusCode).toBe(204);
    const o: Obj = (await app.inject({ url: `${REPO}/Objects/license/9001`, headers: DEMO })).json();
    expect(attr(o, 'serverHoursUsed')).toBe('1300');
    expect(attr(o, 'serverHours')).toBe('5000');
    expect(o.name).toBe('CloudTest Enterprise licence');
    const rename = await post(9001, { name: 'mPulse licence' });
    expect(rename.statusCode).toBe(409);
    expect(rename.json().message).toBe("a license named 'mPulse licence' already exists (id 9002)");
    const wrongId = await post(9001, { id: 9002, description: 'x' });
    expect(wrongId.statusCode).toBe(400);
    expect(wrongId.json().message).toBe('body field \'id\' is 9002 but the path names id 9001');
    expect((await post(4242, { description: 'x' })).statusCode).toBe(404);
  });

  it('keeps a grid object and the grid in step: its name and own attributes are refused, a running grid is not deleted', async () => {
    ({ app } = await makeDemoApp());
    const start = await app.inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers: { ...DEMO, ...JSON_TYPE }, payload: '{"action":"start"}' });
    expect(start.statusCode).toBe(202);
    const grid: Obj = (await app.inject({ url: `${REPO}/Objects/grid/101`, headers: DEMO })).json();
    expect(grid.name).toBe('Load Test Grid - US East');
    expect(Number(attr(grid, 'serverCount'))).toBeGreaterThan(0);
    const del = await app.inject({ method: 'DELETE', url: `${REPO}/Objects/grid/101`, headers: DEMO });
    expect(del.statusCode).toBe(409);
    expect(del.json().message).toMatch(/^grid 101 cannot be deleted: the grid is ALLOCATING: terminate it first/);
    const rename = await app.inject({ method: 'POST', url: `${REPO}/Objects/grid/101`, headers: { ...DEMO, ...JSON_TYPE }, payload: '{"name":"Renamed"}' });
    expect(rename.statusCode).toBe(409);
    expect(rename.json().message).toBe("the name of grid 101 is its owning interface's ('Load Test Grid - US East'): it cannot be changed through the repository");
    const count = await app.inject({
      method: 'POST',
      url: `${REPO}/Objects/grid/101`,
      headers: { ...DEMO, ...JSON_TYPE },
      payload: JSON.stringify({ attributes: [{ name: 'serverCount', value: '999' }] }),
    });
    expect(count.statusCode).toBe(409);
    // What the owner does not own can change; the same name and values are accepted.
    const ok = await app.inject({
      method: 'POST',
      url: `${REPO}/Objects/grid/101`,
      headers: { ...DEMO, ...JSON_TYPE },
      payload: JSON.stringify({ name: grid.name, description: 'nightly', attributes: [{ name: 'serverCount', value: attr(grid, 'serverCount') }] }),
    });
    expect(ok.statusCode).toBe(204);
    const after: Obj = (await app.inject({ url: `${REPO}/Objects/grid/101`, headers: DEMO })).json();
    expect(after.description).toBe('nightly');
    expect(after.body).toBe(grid.body);
  });

  it('lists alerts, users and tenants as objects; users and tenants cannot be changed', async () => {
    ({ app } = await makeDemoApp());
    const alerts: Obj[] = (await app.inject({ url: `${REPO}/Objects/alert?uid=demo-alert`, headers: DEMO })).json().objects;
    expect(alerts.map((a) => a.name)).toEqual(['Demo alert']);
    // The times mPulseAPI.jl reads from every alert: null until the first fire.
    expect(alerts[0].attributes.filter((a) => a.name.startsWith('last'))).toEqual([
      { name: 'lastCleared', value: null },
      { name: 'lastTriggered', value: null },
      { name: 'lastUpdated', value: null },
    ]);
    const fire = await app.inject({ method: 'POST', url: `${PATHS.ALERTS}/demo-alert/fire` });
    expect(fire.statusCode).toBe(204);
    const fired: Obj = (await app.inject({ url: `${REPO}/Objects/alert/${alerts[0].id}`, headers: DEMO })).json();
    expect(attr(fired, 'lastTriggered')).toBe('2026-11-22T09:00:00.000+0000');
    expect(attr(fired, 'state')).toBe('firing');
    const users: Obj[] = (await app.inject({ url: `${REPO}/Objects/user`, headers: DEMO })).json().objects;
    expect(users.map((u) => u.name)).toEqual(['demo@example.com', 'john.smith@example.com']);
    expect(users.every((u) => u.attributes.every((a) => a.name !== 'password'))).toBe(true);
    const tenants: Obj[] = (await app.inject({ url: `${REPO}/Objects/tenant`, headers: DEMO })).json().objects;
    expect(tenants.map((t) => [t.id, t.name])).toEqual([[1, 'Default']]);
    const change = await app.inject({ method: 'POST', url: `${REPO}/Objects/user/1`, headers: { ...DEMO, ...JSON_TYPE }, payload: '{"description":"x"}' });
    expect(change.statusCode).toBe(409);
    expect(change.json().message).toMatch(/user 1 cannot be changed through the repository/);
  });
});

describe('tenants and credentials', () => {
  it("a token sees its tenant's objects only", async () => {
    ({ app } = await makeDemoApp());
    const acme = { 'x-auth-token': await logIn({ userName: 'ops@acme.example', password: 'acme-ops' }) };
    const licences: Obj[] = (await app.inject({ url: `${REPO}/Objects/license`, headers: acme })).json().objects;
    expect(licences.map((o) => o.id)).toEqual([9003]);
    expect((await app.inject({ url: `${REPO}/Objects/license/9001`, headers: acme })).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: `${REPO}/Objects/license/9001`, headers: acme })).statusCode).toBe(404);
    // The same name in another tenant is no duplicate.
    const create = await app.inject({ method: 'PUT', url: `${REPO}/Objects`, headers: { ...acme, ...JSON_TYPE }, payload: '{"type":"license","name":"mPulse licence"}' });
    expect(create.statusCode).toBe(200);
    const tenants: Obj[] = (await app.inject({ url: `${REPO}/Objects/tenant`, headers: acme })).json().objects;
    expect(tenants.map((t) => t.name)).toEqual(['ACME']);
    const own: Obj = (await app.inject({ url: `${REPO}/Objects/license/${create.json().id}`, headers: acme })).json();
    expect(own.tenantID).toBe(tenants[0].id);
  });

  it('lets a user in several tenants pick one at log-in or with X-Tenant-Name', async () => {
    ({ app } = await makeDemoApp());
    const john = { userName: 'john.smith@example.com', password: 's3cret!' };
    const ids = async (headers: Record<string, string>) =>
      (await app.inject({ url: `${REPO}/Objects/license`, headers })).json().objects.map((o: Obj) => o.id);
    const own = await logIn(john);
    expect(await ids({ 'x-auth-token': own })).toEqual([9001, 9002]);
    expect(await ids({ 'x-auth-token': own, 'x-tenant-name': 'ACME' })).toEqual([9003]);
    const acme = await logIn({ ...john, tenant: 'ACME' });
    expect(await ids({ 'x-auth-token': acme })).toEqual([9003]);
    expect(await ids({ 'x-auth-token': acme, 'x-tenant-name': 'Default' })).toEqual([9001, 9002]);
    const bearer = { authorization: 'Bearer 0f6c1d2e-5b7a-4c39-9e61-2a8d4f0b7c13', 'x-tenant-name': 'ACME' };
    expect(await ids(bearer)).toEqual([9003]);
    // The session's tenant is state: an export keeps it.
    expect(app.world.exportState().tokens.find((t) => t.token === acme)).toMatchObject({ tenant: 'ACME' });
    const users: Obj[] = (await app.inject({ url: `${REPO}/Objects/user`, headers: { 'x-auth-token': acme } })).json().objects;
    expect(users.map((u) => u.name)).toEqual(['john.smith@example.com', 'ops@acme.example']);
    const other = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, headers: JSON_TYPE, payload: JSON.stringify({ ...john, tenant: 'Other' }) });
    expect(other.statusCode).toBe(401);
  });

  it('takes Authorization: Bearer <apiToken> with X-Tenant-Name on the repository and CloudService paths only (Basic on the repository only)', async () => {
    ({ app } = await makeDemoApp());
    const bearer = { authorization: 'Bearer demo-api-token', 'x-tenant-name': 'Default' };
    expect((await app.inject({ url: `${REPO}/Objects/license?key=LIC-DEMO-0001`, headers: bearer })).json().objects).toHaveLength(1);
    expect((await app.inject({ url: `${CLOUD}/grid/101`, headers: bearer })).statusCode).toBe(200);
    expect((await app.inject({ url: `${REPO}/Objects/license`, headers: { authorization: 'Bearer demo-api-token' } })).statusCode).toBe(200);
    const cases: Array<[Record<string, string>, string, string]> = [
      [bearer, `${ANNOTATIONS}?date-start=0`, 'the X-Auth-Token header is missing'],
      [{ authorization: 'Bearer nope' }, `${REPO}/Objects/license`, 'the API token in the Authorization header is invalid'],
      [{ ...bearer, 'x-tenant-name': 'ACME' }, `${REPO}/Objects/license`, "the user has no access to tenant 'ACME' (X-Tenant-Name)"],
      [{ ...DEMO, 'x-tenant-name': 'ACME' }, `${REPO}/Objects/license`, "the user has no access to tenant 'ACME' (X-Tenant-Name)"],
      // Basic is taken here (credentials.test.ts); "demo" is no user of the seed.
      [{ authorization: 'Basic ZGVtbzpkZW1v' }, `${REPO}/Objects/license`, 'the user name or password in the Authorization header (Basic) is wrong'],
      [{ authorization: 'Basic ZGVtbzpkZW1v' }, `${CLOUD}/grid/101`, "the X-Auth-Token header is missing (Authorization: Basic is taken only by the repository's Objects)"],
    ];
    for (const [headers, url, message] of cases) {
      const res = await app.inject({ url, headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json().message).toBe(message);
    }
    expect((await app.inject({ url: `${REPO}/Objects/license`, headers: { ...DEMO, 'x-tenant-name': 'Default' } })).statusCode).toBe(200);
  });
});

describe('stored objects are state', () => {
  it('are exported, counted, and imported back with what was created and changed', async () => {
    ({ app } = await makeDemoApp());
    const put = await app.inject({ method: 'PUT', url: `${REPO}/Objects`, headers: { ...DEMO, ...JSON_TYPE }, payload: '{"type":"boomerang","name":"b2","body":"<B/>"}' });
    const { id } = put.json();
    await app.inject({ method: 'POST', url: `${REPO}/Objects/domain/12345`, headers: { ...DEMO, ...JSON_TYPE }, payload: '{"description":"main site"}' });
    const state = app.world.exportState();
    expect(state.objects.find((o) => o.id === id)).toMatchObject({ type: 'boomerang', name: 'b2', tenant: 'Default', body: '<B/>' });
    expect(state.objects.find((o) => o.type === 'domain' && o.id === 12345)).toMatchObject({ description: 'main site' });
    expect(app.world.counts().objects).toBe(state.objects.length);

    const exported = await app.inject({ url: '/_emulator/state' });
    expect(exported.json().objects).toHaveLength(state.objects.length);
    app.world.reset();
    expect((await app.inject({ url: `${REPO}/Objects/boomerang/${id}`, headers: DEMO })).statusCode).toBe(404);
    const imported = await app.inject({ method: 'PUT', url: '/_emulator/state', headers: JSON_TYPE, payload: exported.body });
    expect(imported.statusCode).toBeLessThan(300);
    expect((await app.inject({ url: `${REPO}/Objects/boomerang/${id}`, headers: DEMO })).json().name).toBe('b2');
    expect((await app.inject({ url: `${REPO}/Objects/domain/12345`, headers: DEMO })).json().description).toBe('main site');
    // A new id after the import is past every imported one.
    const next = await app.inject({ method: 'PUT', url: `${REPO}/Objects`, headers: { ...DEMO, ...JSON_TYPE }, payload: '{"type":"boomerang","name":"b3"}' });
    expect(next.json().id).toBe(id + 1);
  });
});

describe('objects in fixtures', () => {
  it('refuses an entry for an owned object that does not exist, and a name twice in a type and tenant', async () => {
    const { parseState } = await import('../../src/state.js');
    const licence = { type: 'license', name: 'L', attributes: [] };
    expect(() => parseState({ objects: [{ id: 1, type: 'domain', name: 'd' }] }, 'seed')).toThrow('seed: $.objects[0]: no domain 1 for this domain object to add to');
    expect(() => parseState({ objects: [{ id: 1, ...licence }, { id: 2, ...licence }] }, 'seed')).toThrow(
      "seed: $.objects[1].name: another license of tenant 'Default' is named 'L'",
    );
    expect(() => parseState({ objects: [{ id: 1, ...licence }, { id: 1, ...licence, name: 'M' }] }, 'seed')).toThrow('duplicate objects entry "license:1"');
    expect(() => parseState({ objects: [{ id: 1, ...licence, attributes: [{ name: 'k', value: '1' }, { name: 'k', value: '2' }] }] }, 'seed')).toThrow(
      "seed: $.objects[0].attributes[1]: attribute 'k' is given twice",
    );
    // The same name in another tenant, or the same id in another type, is fine.
    const ok = parseState({ objects: [{ id: 1, ...licence }, { id: 2, ...licence, tenant: 'ACME' }, { id: 1, type: 'boomerang', name: 'L' }] }, 'seed');
    expect(ok.objects).toHaveLength(3);
  });
});

describe('objects in sandboxes', () => {
  it('are kept apart: what a sandbox creates, changes or deletes, the default world and other sandboxes never see', async () => {
    ({ app } = await makeDemoApp());
    const w1 = `/sandbox/w1${REPO}`;
    const put = await app.inject({ method: 'PUT', url: `${w1}/Objects`, headers: { ...DEMO, ...JSON_TYPE }, payload: '{"type":"boomerang","name":"only-in-w1"}' });
    expect(put.statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: `${w1}/Objects/license/9002`, headers: DEMO })).statusCode).toBe(204);
    const names = async (base: string, type: string) => (await app.inject({ url: `${base}/Objects/${type}`, headers: DEMO })).json().objects.map((o: Obj) => o.name);
    expect(await names(w1, 'boomerang')).toEqual(['boomerang-1.737.0', 'only-in-w1']);
    expect(await names(REPO, 'boomerang')).toEqual(['boomerang-1.737.0']);
    expect(await names(`/sandbox/w2${REPO}`, 'boomerang')).toEqual(['boomerang-1.737.0']);
    expect(await names(REPO, 'license')).toEqual(['CloudTest Enterprise licence', 'mPulse licence']);
  });
});
