import net from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { AUTH, PATHS, T0, TEST_USER, authSeed, makeApp, makeDemoApp } from '../helpers/app.js';
import type { State } from '../../src/state.js';
import { grid } from '../provisioning/seed.js';

/**
 * Clients written against the real service (a JAX-RS application with Jackson) rely on what
 * it accepts. Each rule here is one of those habits; the last block sends, byte for byte,
 * what a shell script with curl, a Python script with requests and a client that labels its
 * log-in as octet-stream send.
 */

const { REPO, CLOUD, ANNOTATIONS, ALERTS } = PATHS;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const OPS = { userName: 'ops@acme.example', password: 'acme-ops', tenant: 'ACME' };

function seed(): Partial<State> {
  const auth = authSeed();
  return {
    ...auth,
    users: [...auth.users, { ...OPS }],
    domains: [
      { id: 11, name: 'www.example.com' },
      { id: 12, name: 'shop.example.com' },
    ],
    annotations: [{ id: 100, title: 'Deploy', text: 'release', start: T0 - 1000, domainIds: [11], source: 'REST API', type: 'USER_ENTERED', user: 'a' }],
    alerts: [{ uid: 'a1b2c3', name: 'Checkout errors', enabled: true, channels: [], state: 'cleared', history: [] }],
    grids: [grid({ name: 'Grid' })],
  };
}

async function started(): Promise<FastifyInstance> {
  ({ app } = await makeApp(seed()));
  return app;
}

const inject = (options: InjectOptions) => (app as FastifyInstance).inject(options);

/** The session token of a successful log-in; fails the test otherwise. */
async function logIn(payload: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await inject({ method: 'PUT', url: `${REPO}/Tokens`, payload, headers });
  expect(res.statusCode, `${JSON.stringify(headers)} ${payload}: ${res.body}`).toBe(200);
  return res.json().token;
}

/** Whether `token` opens a protected call. */
async function opens(token: string): Promise<boolean> {
  return (await inject({ url: `${CLOUD}/grid/101`, headers: { 'x-auth-token': token } })).statusCode === 200;
}

const LOGIN = JSON.stringify({ userName: TEST_USER.userName, password: TEST_USER.password });

describe('log-in: the body is JSON whatever the Content-Type says', () => {
  const types = [
    'application/json',
    'application/json;charset=UTF-8',
    'APPLICATION/JSON; charset=utf-8',
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded; charset=UTF-8',
    'application/octet-stream',
    'text/plain',
    'text/plain;charset=ISO-8859-1',
  ];
  for (const type of types) {
    it(`logs in with Content-Type ${type}`, async () => {
      await started();
      expect(await opens(await logIn(LOGIN, { 'content-type': type }))).toBe(true);
    });
  }

  it('logs in with no Content-Type at all, and with a trailing newline as a file has', async () => {
    await started();
    expect(await opens(await logIn(LOGIN))).toBe(true);
    expect(await opens(await logIn(`${LOGIN}\n`, { 'content-type': 'application/x-www-form-urlencoded' }))).toBe(true);
  });

  it('logs in with an API token under any of those types', async () => {
    await started();
    const body = JSON.stringify({ apiToken: TEST_USER.apiToken });
    for (const type of ['application/x-www-form-urlencoded', 'application/octet-stream', 'text/plain']) {
      expect(await opens(await logIn(body, { 'content-type': type }))).toBe(true);
    }
  });

  it('still answers 400 saying so for a body that is not a JSON object, under any type', async () => {
    await started();
    const cases: Array<[string | undefined, string, RegExp]> = [
      ['application/x-www-form-urlencoded', 'userName=a&password=b', /^the body is not valid JSON$/],
      ['application/octet-stream', '{"userName":', /^the body is not valid JSON$/],
      ['text/plain', '["a","b"]', /^the log-in body must be a JSON object such as \{"userName":"...","password":"..."\} or \{"apiToken":"..."\}$/],
      ['application/json', '"demo"', /^the log-in body must be a JSON object/],
      ['application/octet-stream', 'null', /^the log-in body must be a JSON object/],
      [undefined, '', /^the log-in body must be a JSON object .*, and the request has none$/],
      ['application/x-www-form-urlencoded', '', /and the request has none$/],
      ['text/plain', '{"__proto__":{"admin":true},"userName":"a","password":"b"}', /^the body is not valid JSON$/],
    ];
    for (const [type, payload, message] of cases) {
      const res = await inject({ method: 'PUT', url: `${REPO}/Tokens`, payload, headers: type ? { 'content-type': type } : {} });
      expect(res.statusCode, `${type} ${payload}`).toBe(400);
      expect(res.json(), `${type} ${payload}`).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(res.json().message, `${type} ${payload}`).toMatch(message);
    }
  });
});

describe("log-in: an empty or null tenant is the user's own", () => {
  it('logs in with tenant "", null or absent, by password and by API token', async () => {
    await started();
    for (const tenant of ['', null, undefined]) {
      const byPassword = JSON.stringify({ userName: TEST_USER.userName, password: TEST_USER.password, tenant });
      const byApiToken = JSON.stringify({ apiToken: TEST_USER.apiToken, tenant });
      expect(await opens(await logIn(byPassword, { 'content-type': 'application/json' }))).toBe(true);
      expect(await opens(await logIn(byApiToken, { 'content-type': 'application/json' }))).toBe(true);
    }
    // A user of another tenant than the default logs in to their own the same way.
    const ops = JSON.stringify({ userName: OPS.userName, password: OPS.password, tenant: '' });
    expect(await opens(await logIn(ops, { 'content-type': 'application/json' }))).toBe(true);
  });

  it('still answers 401 to a non-empty tenant the user does not belong to', async () => {
    await started();
    for (const body of [
      { userName: TEST_USER.userName, password: TEST_USER.password, tenant: 'ACME' },
      { apiToken: TEST_USER.apiToken, tenant: 'Other' },
      { userName: OPS.userName, password: OPS.password, tenant: 'Default' },
    ]) {
      const res = await inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: JSON.stringify(body), headers: { 'content-type': 'text/plain' } });
      expect(res.statusCode, JSON.stringify(body)).toBe(401);
    }
  });

  it('takes null for a field left out, as clients that write every field send it', async () => {
    await started();
    const body = JSON.stringify({ userName: TEST_USER.userName, password: TEST_USER.password, apiToken: null, tenant: null });
    expect(await opens(await logIn(body, { 'content-type': 'application/json' }))).toBe(true);
    const res = await inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: JSON.stringify({ userName: TEST_USER.userName, password: null }), headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/missing credentials/);
  });
});

describe('annotations: numbers as the real service reads them', () => {
  const json = { ...AUTH, 'content-type': 'application/json' };

  it('takes start, end and domainIds as strings of decimal digits, and answers integers', async () => {
    await started();
    const add = await inject({
      method: 'POST',
      url: ANNOTATIONS,
      headers: json,
      payload: JSON.stringify({ title: 'x', text: 't', start: '1631282415000', end: '1632131737000', domainIds: ['11', 12] }),
    });
    expect(add.statusCode, add.body).toBe(200);
    const { id } = add.json();
    const read = await inject({ url: `${ANNOTATIONS}/${id}`, headers: AUTH });
    expect(read.json()).toMatchObject({
      start: 1_631_282_415_000,
      end: 1_632_131_737_000,
      domains: [
        { id: 11, name: 'www.example.com' },
        { id: 12, name: 'shop.example.com' },
      ],
    });
    expect(read.body).toContain('"start":1631282415000');

    const single = await inject({ method: 'POST', url: ANNOTATIONS, headers: json, payload: JSON.stringify({ title: 'x', text: 't', start: '0', domainIds: '12' }) });
    expect((await inject({ url: `${ANNOTATIONS}/${single.json().id}`, headers: AUTH })).json()).toMatchObject({ start: 0, domains: [{ id: 12 }] });

    const update = await inject({ method: 'PUT', url: `${ANNOTATIONS}/${id}`, headers: json, payload: JSON.stringify({ start: '1631282416000', end: '1631282417000', domainIds: '11' }) });
    expect(update.statusCode, update.body).toBe(200);
    expect(update.json()).toMatchObject({ start: 1_631_282_416_000, end: 1_631_282_417_000, domains: [{ id: 11 }] });
    // The list filters on the converted numbers.
    const listed = await inject({ url: `${ANNOTATIONS}?date-start=1631282416000&date-end=1631282416000`, headers: AUTH });
    expect(listed.json().map((a: { id: number }) => a.id)).toEqual([id]);
  });

  it('still answers 400 naming the field for anything else', async () => {
    await started();
    const base = { title: 'x', text: 't', start: 1_631_282_415_000 };
    const cases: Array<[Record<string, unknown>, RegExp]> = [];
    for (const field of ['start', 'end']) {
      for (const value of ['abc', '1e3', '12.5', '-5', ' 12', '', '99999999999999999', true, 12.5, -5, [1]]) {
        cases.push([{ [field]: value }, new RegExp(`body field '${field}' must be an integer >= 0 and <= 8640000000000000 or a string of decimal digits`)]);
      }
      cases.push([{ [field]: '9999999999999999' }, new RegExp(`^body field '${field}' must be an integer >= 0 and <= 8640000000000000, got "9999999999999999"$`)]);
    }
    cases.push(
      [{ domainIds: 'abc' }, /body field 'domainIds' must be an integer >= 1 or a string of decimal digits or an array of/],
      [{ domainIds: ['11', '1.5'] }, /body field 'domainIds.1' must be an integer >= 1 or a string of decimal digits$/],
      [{ domainIds: [true] }, /body field 'domainIds.0' must be/],
      [{ domainIds: '0' }, /^body field 'domainIds' must be an integer >= 1, got "0"$/],
      [{ domainIds: ['11', '0'] }, /^body field 'domainIds.1' must be an integer >= 1, got "0"$/],
      [{ start: '1631282415000', end: '1631282414999' }, /^end \(1631282414999\) is before start \(1631282415000\)$/],
    );
    for (const [change, message] of cases) {
      for (const [method, url, payload] of [
        ['POST', ANNOTATIONS, { ...base, ...change }],
        ['PUT', `${ANNOTATIONS}/100`, change],
      ] as const) {
        const res = await inject({ method, url, headers: json, payload: JSON.stringify(payload) });
        expect(res.statusCode, `${method} ${JSON.stringify(change)}`).toBe(400);
        expect(res.json().message, `${method} ${JSON.stringify(change)}`).toMatch(message);
      }
    }
    // Nothing was made or changed.
    const all = (await inject({ url: ANNOTATIONS, headers: AUTH })).json();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: 100, start: T0 - 1000 });
  });

  it('keeps the 415 of a create or update without application/json', async () => {
    await started();
    const payload = JSON.stringify({ title: 'x', text: 't', start: '1631282415000' });
    for (const headers of [AUTH, { ...AUTH, 'content-type': 'application/x-www-form-urlencoded' }, { ...AUTH, 'content-type': 'text/plain' }]) {
      expect((await inject({ method: 'POST', url: ANNOTATIONS, headers, payload })).statusCode).toBe(415);
      expect((await inject({ method: 'PUT', url: `${ANNOTATIONS}/100`, headers, payload })).statusCode).toBe(415);
    }
  });

  it('gives new annotations ids of seven digits or more, after the largest id of the seed', async () => {
    await started();
    const add = () => inject({ method: 'POST', url: ANNOTATIONS, headers: json, payload: JSON.stringify({ title: 'x', text: 't', start: T0 }) });
    expect((await add()).json()).toEqual({ id: 1_000_000 });
    await app?.close();
    ({ app } = await makeDemoApp());
    const seeded: Array<{ id: number }> = (await inject({ url: ANNOTATIONS, headers: { 'x-auth-token': 'demo-token' } })).json();
    const largest = Math.max(...seeded.map((a) => a.id));
    expect(seeded.every((a) => a.id >= 1_000_000)).toBe(true);
    const created = await inject({
      method: 'POST',
      url: ANNOTATIONS,
      headers: { 'x-auth-token': 'demo-token', 'content-type': 'application/json' },
      payload: JSON.stringify({ title: 'x', text: 't', start: T0 }),
    });
    expect(created.json()).toEqual({ id: largest + 1 });
  });
});

describe('what else real clients send', () => {
  it('takes application/json with a charset or in capitals on every JSON body', async () => {
    await started();
    for (const type of ['application/json;charset=UTF-8', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'Application/Json ; Charset=UTF-8']) {
      const headers = { ...AUTH, 'content-type': type };
      expect((await inject({ method: 'POST', url: ANNOTATIONS, headers, payload: '{"title":"x","text":"t","start":1}' })).statusCode, type).toBe(200);
      expect((await inject({ method: 'PUT', url: `${ANNOTATIONS}/100`, headers, payload: '{"text":"u"}' })).statusCode, type).toBe(200);
      expect((await inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers, payload: '{"action":"terminate"}' })).statusCode, type).toBe(202);
      expect((await inject({ method: 'POST', url: `${ALERTS}/a1b2c3/fire`, headers: { 'content-type': type }, payload: '{"message":"m"}' })).statusCode, type).toBe(204);
      expect((await inject({ method: 'POST', url: `${ALERTS}/a1b2c3/clear`, headers: { 'content-type': type }, payload: '{}' })).statusCode, type).toBe(204);
    }
  });

  it('answers reads and deletes that carry a Content-Type, with or without {}, as if they had none', async () => {
    await started();
    const token = await logIn(LOGIN, { 'content-type': 'application/json' });
    for (const [type, payload] of [
      ['application/json', '{}'],
      ['application/json', undefined],
      ['application/json; charset=utf-8', ''],
      ['application/x-www-form-urlencoded', ''],
      ['text/plain', '{}'],
    ] as const) {
      const headers = { ...AUTH, 'content-type': type };
      const what = `${type} ${String(payload)}`;
      for (const url of [`${CLOUD}/grid`, `${CLOUD}/grid/101`, `${CLOUD}/cloudserver`, ANNOTATIONS, `${ANNOTATIONS}/100`, `${REPO}/Objects/grid`]) {
        expect((await inject({ method: 'GET', url, headers, payload })).statusCode, `GET ${url} ${what}`).toBe(200);
      }
      const made = await inject({ method: 'POST', url: ANNOTATIONS, headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"title":"x","text":"t","start":1}' });
      expect((await inject({ method: 'DELETE', url: `${ANNOTATIONS}/${made.json().id}`, headers, payload })).statusCode, `DELETE ${what}`).toBe(204);
      expect((await inject({ method: 'DELETE', url: `${REPO}/Tokens/not-a-token`, headers: { 'content-type': type }, payload })).statusCode, `log-out ${what}`).toBe(204);
    }
    // A body a delete does not read is not parsed either.
    expect((await inject({ method: 'DELETE', url: `${ANNOTATIONS}/100`, headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"oops' })).statusCode).toBe(204);
    // A header that is not a media type at all is refused where a body may come, as documented.
    expect((await inject({ url: `${ANNOTATIONS}`, headers: { ...AUTH, 'content-type': 'json' } })).statusCode).toBe(200);
    expect((await inject({ method: 'DELETE', url: `${ANNOTATIONS}/1`, headers: { ...AUTH, 'content-type': 'json' }, payload: '' })).statusCode).toBe(415);
    expect((await inject({ method: 'DELETE', url: `${REPO}/Tokens/x`, headers: { 'content-type': 'json' }, payload: '' })).statusCode).toBe(400);
    expect(await opens(token)).toBe(true);
  });

  it('answers the same with a trailing slash', async () => {
    await started();
    const json = { ...AUTH, 'content-type': 'application/json' };
    const add = await inject({ method: 'POST', url: `${ANNOTATIONS}/`, headers: json, payload: '{"title":"x","text":"t","start":"1"}' });
    expect(add.statusCode).toBe(200);
    const { id } = add.json();
    expect((await inject({ url: `${ANNOTATIONS}/${id}/`, headers: AUTH })).json()).toMatchObject({ id, start: 1 });
    expect((await inject({ method: 'PUT', url: `${ANNOTATIONS}/${id}/`, headers: json, payload: '{"text":"u"}' })).statusCode).toBe(200);
    expect((await inject({ method: 'DELETE', url: `${ANNOTATIONS}/${id}/`, headers: AUTH })).statusCode).toBe(204);
    expect((await inject({ method: 'PUT', url: `${REPO}/Tokens/`, headers: { 'content-type': 'text/plain' }, payload: LOGIN })).statusCode).toBe(200);
    expect((await inject({ url: `${REPO}/Objects/grid/`, headers: AUTH })).statusCode).toBe(200);
  });

  it('takes the first of a repeated single-valued query parameter, every repeat of domain, and ignores unknown ones', async () => {
    await started();
    const json = { ...AUTH, 'content-type': 'application/json' };
    await inject({ method: 'POST', url: ANNOTATIONS, headers: json, payload: JSON.stringify({ title: 'shop', text: 't', start: T0, domainIds: [12] }) });
    const ids = async (query: string) => {
      const res = await inject({ url: `${ANNOTATIONS}?${query}`, headers: AUTH });
      expect(res.statusCode, query).toBe(200);
      return res.json().map((a: { title: string }) => a.title);
    };
    expect(await ids(`date-start=${T0}&date-start=0`)).toEqual(['shop']);
    expect(await ids(`date-start=0&date-start=${T0}`)).toEqual(['Deploy', 'shop']);
    expect(await ids(`date-end=${T0 - 1}&date-end=${T0}`)).toEqual(['Deploy']);
    expect(await ids('domain=11')).toEqual(['Deploy']);
    expect(await ids('domain=11&domain=12')).toEqual(['Deploy', 'shop']);
    expect(await ids(`domain=12&format=json&_=${T0}&dateStart=0`)).toEqual(['shop']);
    // Only the first value is read, so a bad second one does not matter; a bad first one does.
    expect(await ids(`date-start=0&date-start=abc`)).toEqual(['Deploy', 'shop']);
    expect((await inject({ url: `${ANNOTATIONS}?date-start=abc&date-start=0`, headers: AUTH })).statusCode).toBe(400);

    const names = async (query: string) =>
      (await inject({ url: `${REPO}/Objects/grid?${query}`, headers: AUTH })).json().objects.map((o: { id: number; name: string }) => [o.id, o.name]);
    expect(await names('name=Grid&name=Other')).toEqual([[101, 'Grid']]);
    expect(await names('name=Other&name=Grid')).toEqual([]);
    // The repository's objects are the exception: every other parameter filters an attribute, never ignored.
    expect(await names('name=Grid&type=x')).toEqual([]);
    expect(await names(`name=Grid&_=${T0}`)).toEqual([]);
  });

  it('keeps what the specification asks of action and alert bodies: JSON, or 400', async () => {
    await started();
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream']) {
      const action = await inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers: { ...AUTH, 'content-type': type }, payload: '{"action":"start"}' });
      expect(action.statusCode, type).toBe(400);
      expect(action.json().message).toMatch(/unsupported Content-Type/);
      const fire = await inject({ method: 'POST', url: `${ALERTS}/a1b2c3/fire`, headers: { 'content-type': type }, payload: '{"message":"m"}' });
      expect(fire.statusCode, type).toBe(400);
    }
  });
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One whole answer at the start of `buffer`, and how many bytes it takes; undefined if not all there. */
function parseAnswer(buffer: Buffer): { response: RawResponse; length: number } | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const size = Number(headers['content-length'] ?? 0);
  if (buffer.length < end + 4 + size) return undefined;
  const body = buffer.subarray(end + 4, end + 4 + size).toString('utf8');
  return { response: { status: Number(statusLine.split(' ')[1]), headers, body }, length: end + 4 + size };
}

/** Sends each request exactly as written, one after another on one connection, and reads each answer. */
async function exchange(port: number, requests: Array<(previous: RawResponse[]) => string>): Promise<RawResponse[]> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let buffer = Buffer.alloc(0);
  let closed = false;
  let wake = () => {};
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    wake();
  });
  socket.on('close', () => {
    closed = true;
    wake();
  });
  const answers: RawResponse[] = [];
  try {
    for (const request of requests) {
      socket.write(request(answers));
      for (;;) {
        const answer = parseAnswer(buffer);
        if (answer) {
          answers.push(answer.response);
          buffer = buffer.subarray(answer.length);
          break;
        }
        if (closed) throw new Error(`the connection closed before a whole answer: ${buffer.toString('latin1')}`);
        await new Promise<void>((resolve) => (wake = resolve));
      }
    }
  } finally {
    socket.destroy();
  }
  return answers;
}

/** An HTTP/1.1 request as a client writes it: headers in the order given, then the body. */
function http11(method: string, path: string, headers: Array<[string, string]>, body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, ...headers.map(([name, value]) => `${name}: ${value}`)];
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

async function listening(): Promise<number> {
  ({ app } = await makeDemoApp());
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as net.AddressInfo).port;
}

describe('exactly what existing clients send, over a real connection', () => {
  it('a shell script: curl --data-binary @login.json with no -H, then the token on a provisioning read', async () => {
    const port = await listening();
    const host = `127.0.0.1:${port}`;
    const body = '{"userName":"demo@example.com","password":"demo","tenant":""}';
    const [login, grid] = await exchange(port, [
      () =>
        http11('PUT', `${REPO}/Tokens`, [
          ['Host', host],
          ['User-Agent', 'curl/8.5.0'],
          ['Accept', '*/*'],
          ['Content-Length', String(Buffer.byteLength(body))],
          ['Content-Type', 'application/x-www-form-urlencoded'],
        ], body),
      ([answer]) =>
        http11('GET', `${CLOUD}/grid/101`, [
          ['Host', host],
          ['User-Agent', 'curl/8.5.0'],
          ['Accept', '*/*'],
          ['X-Auth-Token', JSON.parse(answer.body).token],
        ]),
    ]);
    expect(login.status, login.body).toBe(200);
    expect(JSON.parse(login.body)).toEqual({ token: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(login.headers['content-type']).toMatch(/^application\/json/);
    expect(grid.status, grid.body).toBe(200);
    expect(JSON.parse(grid.body)).toMatchObject({ state: 'LOADED', isFinal: true });
  });

  it('a Python script: requests.post(json=...) with start as a string', async () => {
    const port = await listening();
    const python = (body: string): Array<[string, string]> => [
      ['Host', `127.0.0.1:${port}`],
      ['User-Agent', 'python-requests/2.31.0'],
      ['Accept-Encoding', 'gzip, deflate'],
      ['Accept', '*/*'],
      ['Connection', 'keep-alive'],
      ['X-Auth-Token', 'demo-token'],
      ['Content-Length', String(Buffer.byteLength(body))],
      ['Content-Type', 'application/json'],
    ];
    // requests writes json= with json.dumps, whose separators have spaces.
    const asSent = '{"title": "x", "start": "1631282415000"}';
    const withText = '{"title": "x", "start": "1631282415000", "text": "deploy"}';
    const [missingText, created, read] = await exchange(port, [
      () => http11('POST', ANNOTATIONS, python(asSent), asSent),
      () => http11('POST', ANNOTATIONS, python(withText), withText),
      ([, made]) => http11('GET', `${ANNOTATIONS}/${JSON.parse(made.body).id}`, python('').filter(([name]) => !name.startsWith('Content-'))),
    ]);
    // `start` as a string is accepted; the only complaint left is the specification's required `text`.
    expect(missingText.status).toBe(400);
    expect(JSON.parse(missingText.body)).toEqual({ statusCode: 400, error: 'Bad Request', message: "body: missing required field 'text'" });
    expect(created.status, created.body).toBe(200);
    expect(JSON.parse(created.body).id).toBeGreaterThanOrEqual(1_000_000);
    expect(read.status).toBe(200);
    expect(read.body).toContain('"start":1631282415000');
    expect(JSON.parse(read.body)).toMatchObject({ title: 'x', text: 'deploy', start: 1_631_282_415_000, source: 'REST API', user: 'demo@example.com' });
  });

  it('a client that logs in with application/octet-stream (fetch)', async () => {
    const port = await listening();
    const base = `http://127.0.0.1:${port}`;
    const login = await fetch(`${base}${REPO}/Tokens`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/octet-stream' },
      body: new TextEncoder().encode(JSON.stringify({ apiToken: 'demo-api-token', tenant: '' })),
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: string };
    const objects = await fetch(`${base}${REPO}/Objects/grid?name=Load%20Test%20Grid%20-%20US%20East`, { headers: { 'X-Auth-Token': token } });
    expect(objects.status).toBe(200);
    expect(await objects.json()).toMatchObject({ objects: [{ id: 101, name: 'Load Test Grid - US East', type: 'grid' }] });
  });

  it('a log-in with no Content-Type, sent in chunks, and a GET with a body on the same connection', async () => {
    const port = await listening();
    const host = `127.0.0.1:${port}`;
    const body = '{"userName":"demo@example.com","password":"demo"}';
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const [login, list, after] = await exchange(port, [
      () => http11('PUT', `${REPO}/Tokens`, [['Host', host], ['Transfer-Encoding', 'chunked']], chunked),
      ([answer]) =>
        http11('GET', `${ANNOTATIONS}`, [
          ['Host', host],
          ['x-auth-token', JSON.parse(answer.body).token],
          ['CONTENT-TYPE', 'application/json; charset=UTF-8'],
          ['Content-Length', '2'],
        ], '{}'),
      // The GET's body was consumed, not read as the start of this request.
      () => http11('GET', `${CLOUD}/grid/101/`, [['Host', host], ['X-AUTH-TOKEN', 'demo-token']]),
    ]);
    expect(login.status, login.body).toBe(200);
    expect(list.status, list.body).toBe(200);
    expect(Array.isArray(JSON.parse(list.body))).toBe(true);
    expect(after.status, after.body).toBe(200);
  });
});
