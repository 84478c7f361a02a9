import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { makeDemoApp, type TestApp } from '../helpers/app.js';

/**
 * Nothing a client sends is accepted and ignored: every field a route's body schema allows is
 * either stored (the route's answer, or the matching read, shows it) or refused with a 400
 * whose message names it.
 *
 * The routes and their fields come from the OpenAPI document the app serves, which is made
 * from the routes' own schemas: a route added with a body is walked at once, and fails until
 * the table below says how to call it and where to read it back.
 */

type Path = Array<string | number>;
interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  additionalProperties?: boolean | Schema;
}

interface Ctx extends TestApp {
  /** The demo session's token. */
  headers: Record<string, string>;
  /** What a case set up before the request (an id, an instance). */
  data: Record<string, unknown>;
}

interface Sent {
  body: Record<string, unknown>;
  value: unknown;
  response: LightMyRequestResponse;
}

interface RouteCase {
  /** Runs before each request: makes what the request needs, and the URL to send it to. */
  url: (ctx: Ctx) => Promise<string> | string;
  /** A body the route accepts; each field is set on (a copy of) it in turn. */
  base: (ctx: Ctx) => Record<string, unknown>;
  /** What the route stored, after a successful request: a JSON value the field is looked up in. */
  read: (ctx: Ctx, sent: Sent) => Promise<unknown>;
  /** Valid values for fields the generator cannot make one for (by dotted path; `0` for an array's first item). */
  values?: Record<string, (ctx: Ctx) => unknown>;
  /** A valid value for a field that `values` does not name, or undefined to make one from the schema. */
  valueFor?: (key: string, ctx: Ctx) => unknown;
  /** Where a field shows in the read when not under its own path: true if it holds `sent.value`. */
  shows?: Record<string, (read: unknown, sent: Sent, ctx: Ctx) => boolean | Promise<boolean>>;
  /** The field is a filter: its value shows in that the answer differs from the answer to the base body. */
  filters?: boolean;
  /** Send each top-level field alone, without the base (the route takes exactly one of them). */
  alone?: boolean;
  /** The body a field is set on, where it is not `base` (the field goes with other fields than the base's). */
  bodies?: Record<string, (ctx: Ctx) => Record<string, unknown>>;
  /** An update: a body copied from the read is accepted as it is, the fields the service makes included. */
  writesBack?: boolean;
  /**
   * Fields accepted and not kept, each with the reason; docs/behaviour-reference.md lists
   * every one. They must still be accepted (not refused) with a valid value.
   */
  tolerated?: Record<string, string>;
  /** Fields left out of the walk, each with the reason (covered by a test of their own). */
  skip?: Record<string, string>;
}

const REPO = '/concerto/services/rest/RepositoryService/v1';
const CLOUD = '/concerto/services/rest/CloudService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const INSTANCES = '/concerto/services/rest/composition/instances/v1';
const RESULTS = '/concerto/services/rest/Results/v1';
const E = '/_emulator';
const COMPOSITION = '/Tests/Checkout Load';

const json = async (ctx: Ctx, url: string): Promise<unknown> => {
  const res = await ctx.app.inject({ url, headers: ctx.headers });
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return res.json();
};
const post = async (ctx: Ctx, url: string, payload: object, method: 'POST' | 'PUT' = 'POST') => {
  const res = await ctx.app.inject({ method, url, headers: ctx.headers, payload });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.json();
};
const at = (value: unknown, path: Path): unknown =>
  path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value);
/** The values at `path`, where an index stands for any item of its array (a read may order them otherwise). */
const everyAt = (value: unknown, path: Path): unknown[] => {
  if (path.length === 0) return [value];
  const [key, ...rest] = path;
  if (typeof key === 'number') return Array.isArray(value) ? value.flatMap((item) => everyAt(item, rest)) : [];
  return everyAt(at(value, [key]), rest);
};

/** The composition instance a case made, as its read, the state keeps it and its result. */
async function instanceRead(ctx: Ctx, id: string): Promise<unknown> {
  const instance = (await json(ctx, `${INSTANCES}/${id}`)) as { resultid?: number };
  const state = (await json(ctx, `${E}/state`)) as { compositionInstances: Array<{ instanceID: string }> };
  const result = instance.resultid === undefined ? undefined : await json(ctx, `${RESULTS}/${instance.resultid}`);
  return { ...instance, stored: state.compositionInstances.find((i) => i.instanceID === id), result };
}
/** Where a field of a load or play body shows: the instance's result, and what the instance keeps of the body. */
const PLAY_SHOWS: RouteCase['shows'] = {
  resultName: (r: unknown, s: Sent) => at(r, ['resultName']) === s.value && at(r, ['result', 'name']) === s.value,
  description: (r: unknown, s: Sent) => at(r, ['result', 'description']) === s.value,
  rsdbName: (r: unknown, s: Sent) => at(r, ['result', 'rsdbName']) === s.value,
  // Not acted on: kept with the instance, as its export shows.
  ...Object.fromEntries(['alphaServer', 'customProperties', 'systemProperties', 'seedDataKeys'].map((f) => [f, (r: unknown, s: Sent) => isDeepStrictEqual(at(r, ['stored', 'play', f]), s.value)])),
};

/** A log-in's status. */
const logIn = async (ctx: Ctx, payload: object) => (await ctx.app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload })).statusCode;

/** A reference names an object the tenant has: the demo's boomerang build. */
const REFERENCE_VALUES: RouteCase['values'] = {
  references: () => [{ type: 'boomerang', name: 'boomerang-1.737.0' }],
  'references.0.id': () => 9101,
  'references.0.type': () => 'boomerang',
  'references.0.name': () => 'boomerang-1.737.0',
};

let sandboxes = 0;

/** The next-start outcome a state export shows for a grid or environment. */
const nextStartOf = (state: unknown, section: string, id: number) =>
  at((at(state, [section]) as Array<{ id: number }>).find((r) => r.id === id), ['nextStartOutcome']);

/**
 * The demo seed's state after a play, a next-start choice and a fault rule, so that every
 * section has an entry: the base of the state imports (read once).
 */
let demoState: Record<string, unknown>;
const stateCase = (url: (ctx: Ctx) => string, readUrl: (ctx: Ctx) => string, done?: (ctx: Ctx) => Promise<unknown>): RouteCase => ({
  url,
  base: () => structuredClone(demoState),
  read: async (ctx) => {
    const state = await json(ctx, readUrl(ctx));
    await done?.(ctx);
    return state;
  },
  // A section in another order: the same entries, each stored.
  valueFor: (key) => (Array.isArray(demoState[key]) && (demoState[key] as unknown[]).length > 0 ? [...(demoState[key] as unknown[])].reverse() : undefined),
  values: {
    'annotations.0.id': () => 1999999,
    'compositions.0.path': () => '/Tests/Walk',
    scenarios: () => [{ kind: 'grid', id: 105, nextStart: { outcome: 'ALLOCATE_FAILED' } }],
    'scenarios.0.kind': () => 'environment',
    'scenarios.0.id': () => 101,
    'scenarios.0.nextStart': () => ({ outcome: 'CHECKED_WITH_FAILURES' }),
    'scenarios.0.nextStart.outcome': () => 'CHECKED_WITH_FAILURES',
  },
  bodies: {
    // Another kind names another resource.
    'scenarios.0.kind': () => ({ ...structuredClone(demoState), scenarios: [{ kind: 'grid', id: 301, nextStart: { outcome: 'PROCESS_FAILED' } }] }),
  },
  shows: {
    // A scenario is the next-start outcome of its resource: the export shows it there.
    scenarios: (r) => nextStartOf(r, 'grids', 105) === 'ALLOCATE_FAILED',
    'scenarios.0.kind': (r) => nextStartOf(r, 'environments', 301) === 'PROCESS_FAILED',
    'scenarios.0.id': (r) => nextStartOf(r, 'grids', 101) === 'ALLOCATE_FAILED',
    'scenarios.0.nextStart': (r) => nextStartOf(r, 'grids', 105) === 'CHECKED_WITH_FAILURES',
    'scenarios.0.nextStart.outcome': (r) => nextStartOf(r, 'grids', 105) === 'CHECKED_WITH_FAILURES',
    // A pending delivery is attempted once its time has come: the export shows that attempt, made at or after the time sent.
    'deliveries.0.nextAttemptAt': (r, s) =>
      (at(r, ['deliveries']) as Array<{ attempts: Array<{ at: number }> }>).some((d) => d.attempts.some((a) => a.at >= (s.value as number))),
    // The clock runs on from the instant sent, at the scale sent.
    clock: (r, s) => holds(at(r, ['clock']), { ...(s.value as object), now: at(r, ['clock', 'now']) }) && (at(r, ['clock', 'now']) as number) >= (at(s.value, ['now']) as number),
  },
  tolerated: {
    $schema: 'the path of the JSON Schema, for editors: it says nothing of the world',
    'clock.realAt': "the state file's: the real time of its write; an import loads the clock as its clock mode says",
  },
  skip: {
    'cloudServers.0.id': 'an id other entries hold (the deployment of its grid): changed alone, it is refused naming the entry that holds it',
    'domains.0.id': 'an id other entries hold (annotations, objects): changed alone, it is refused naming the entry that holds it',
    'users.0.userName': 'a key other entries hold (the tokens): changed alone, it is refused naming the token that holds it',
    'compositions.0.id': 'an id other entries hold (the instance and result of the play): changed alone, it is refused naming the entry that holds it',
  },
});

/**
 * How to call each route with a body, and where to read back what it stored. A route of the
 * app with a body schema that is missing here fails the walk.
 */
const ROUTES: Record<string, RouteCase> = {
  [`PUT ${REPO}/Tokens`]: {
    url: () => `${REPO}/Tokens`,
    base: () => ({ userName: 'demo@example.com', password: 'demo' }),
    // The session the token opens, as the state keeps it.
    read: async (ctx, { response }) => {
      const { token } = response.json() as { token: string };
      const state = (await json(ctx, `${E}/state`)) as { tokens: Array<{ token: string }> };
      return state.tokens.find((t) => t.token === token);
    },
    // Credentials are checked, not kept: each opens the session of the user it names, and a wrong one is refused.
    bodies: {
      userName: () => ({ password: 's3cret!' }),
      password: () => ({ userName: 'john.smith@example.com' }),
      apiToken: () => ({}),
    },
    values: { userName: () => 'john.smith@example.com', password: () => 's3cret!', apiToken: () => 'demo-api-token', tenant: () => 'Default' },
    shows: {
      userName: (r) => at(r, ['userName']) === 'john.smith@example.com',
      password: async (r, _s, ctx) => at(r, ['userName']) === 'john.smith@example.com' && (await logIn(ctx, { userName: 'john.smith@example.com', password: 'demo' })) === 401,
      apiToken: async (r, _s, ctx) => at(r, ['userName']) === 'demo@example.com' && (await logIn(ctx, { apiToken: 'no-such-token' })) === 401,
      tenant: async (r, _s, ctx) => at(r, ['userName']) === 'demo@example.com' && (await logIn(ctx, { userName: 'demo@example.com', password: 'demo', tenant: 'ACME' })) === 401,
    },
  },
  ...Object.fromEntries(
    ['/Objects', '/Objects/{type}'].map((path) => [
      `PUT ${REPO}${path}`,
      {
        url: () => `${REPO}${path.replace('{type}', 'license')}`,
        base: () => ({ ...(path === '/Objects' ? { type: 'license' } : {}), name: 'Stored or refused' }),
        read: (ctx: Ctx, { body, response }: Sent) => json(ctx, `${REPO}/Objects/${(body.type as string | undefined) ?? 'license'}/${(response.json() as { id: number }).id}`),
        values: { ...REFERENCE_VALUES, type: () => 'boomerang' },
      } satisfies RouteCase,
    ]),
  ),
  [`POST ${REPO}/Objects/{type}/{id}`]: {
    url: () => `${REPO}/Objects/license/9001`,
    base: () => ({}),
    read: (ctx) => json(ctx, `${REPO}/Objects/license/9001`),
    values: REFERENCE_VALUES,
    writesBack: true,
  },
  ...Object.fromEntries(
    (
      [
        ['grid', 105, 'start', 'ALLOCATING'],
        ['cloudserver', 58201, 'terminate', 'SHUTTING_DOWN'],
        ['rsdb', 202, 'start', 'ALLOCATING_DATABASE'],
        ['environment', 301, 'start', 'ALLOCATING_DATABASE'],
      ] as const
    ).map(([kind, id, action, state]) => [
      `POST ${CLOUD}/${kind}/{id}/action`,
      {
        url: () => `${CLOUD}/${kind}/${id}/action`,
        base: () => ({ action }),
        // The action is carried out: the resource's answer is in the state it leads to.
        read: async (_ctx: Ctx, { response }: Sent) => response.json(),
        values: { action: () => action },
        shows: { action: (r: unknown) => at(r, ['state']) === state },
      } satisfies RouteCase,
    ]),
  ),
  [`POST ${ANNOTATIONS}`]: {
    url: () => ANNOTATIONS,
    base: () => ({ title: 'Stored', start: 1795000000000, text: 'or refused' }),
    read: (ctx, { response }) => json(ctx, `${ANNOTATIONS}/${(response.json() as { id: number }).id}`),
    values: { end: () => 1795000060000, domainIds: () => [12345] },
    shows: { domainIds: (r) => holds(at(r, ['domains']), [{ id: 12345 }]) },
  },
  [`PUT ${ANNOTATIONS}/{id}`]: {
    url: () => `${ANNOTATIONS}/1921101`,
    base: () => ({}),
    read: (ctx) => json(ctx, `${ANNOTATIONS}/1921101`),
    values: { domainIds: () => [12345] },
    shows: { domainIds: (r) => holds(at(r, ['domains']), [{ id: 12345 }]) },
  },
  [`POST ${ALERTS}/{uid}/fire`]: {
    url: () => `${ALERTS}/demo-alert/fire`,
    base: () => ({}),
    // What the fire carried: the alert's last history entry.
    read: async (ctx) => ((await json(ctx, `${E}/alerts/demo-alert`)) as { history: unknown[] }).history.at(-1),
  },
  [`POST ${ALERTS}/{uid}/clear`]: {
    url: () => `${ALERTS}/demo-alert/clear`,
    base: () => ({}),
    read: (ctx) => json(ctx, `${E}/alerts/demo-alert`),
  },
  [`POST ${INSTANCES}`]: {
    url: () => `${INSTANCES}?command=play`,
    base: () => ({ compositionName: COMPOSITION }),
    read: (ctx, { response }) => instanceRead(ctx, (response.json() as { instanceID: string }).instanceID),
    values: { compositionName: () => '/Tests/Soak/Search Soak' },
    shows: { ...PLAY_SHOWS, compositionName: (r) => at(r, ['compositionName']) === 'Search Soak' && at(r, ['path']) === '/Tests/Soak' },
  },
  [`PUT ${INSTANCES}/{instanceID}`]: {
    url: async (ctx) => {
      const { instanceID } = (await post(ctx, `${INSTANCES}?command=load`, { compositionName: COMPOSITION })) as { instanceID: string };
      ctx.data.instanceID = instanceID;
      return `${INSTANCES}/${instanceID}?command=play`;
    },
    base: () => ({}),
    read: (ctx) => instanceRead(ctx, ctx.data.instanceID as string),
    values: { compositionName: () => COMPOSITION },
    // The instance is of the composition it names (another one is refused).
    shows: { ...PLAY_SHOWS, compositionName: (r) => at(r, ['compositionName']) === 'Checkout Load' },
  },
  [`PUT ${E}/state`]: stateCase(
    () => `${E}/state`,
    () => `${E}/state`,
  ),
  [`PUT ${E}/sandboxes/{name}`]: stateCase(
    (ctx) => `${E}/sandboxes/${(ctx.data.name = `walk${++sandboxes}`)}`,
    (ctx) => `/sandbox/${ctx.data.name as string}${E}/state`,
    (ctx) => ctx.app.inject({ method: 'DELETE', url: `${E}/sandboxes/${ctx.data.name as string}` }),
  ),
  [`PUT ${E}/clock`]: {
    url: () => `${E}/clock`,
    base: () => ({ scale: 1 }),
    read: (ctx) => json(ctx, `${E}/clock`),
  },
  [`POST ${E}/clock/advance`]: {
    url: async (ctx) => {
      await post(ctx, `${CLOUD}/grid/105/action`, { action: 'start' });
      return `${E}/clock/advance`;
    },
    base: () => ({ ms: 1000 }),
    alone: true,
    read: async (ctx, { response }) => ({ answer: response.json(), grid: await json(ctx, `${E}/lifecycles/grid/105`) }),
    values: { to: (ctx) => ctx.clock.now() + 5000, 'until.kind': () => 'grid', 'until.id': () => 105, until: () => ({ kind: 'grid', id: 105 }) },
    shows: {
      ms: (r, s) => at(r, ['answer', 'advancedMs']) === s.value,
      to: (r, s) => at(r, ['answer', 'now']) === s.value,
      until: (r) => at(r, ['grid', 'state']) === 'CHECKED' && at(r, ['grid', 'isFinal']) === true,
      'until.kind': (r) => at(r, ['grid', 'state']) === 'CHECKED',
      'until.id': (r) => at(r, ['grid', 'state']) === 'CHECKED',
    },
  },
  [`PUT ${E}/lifecycles/{kind}/{id}/next-start`]: {
    url: () => `${E}/lifecycles/grid/105/next-start`,
    base: () => ({ outcome: 'CHECKED' }),
    read: (ctx) => json(ctx, `${E}/lifecycles/grid/105`),
    values: { outcome: () => 'ALLOCATE_FAILED' },
    shows: { outcome: (r) => at(r, ['nextStart', 'outcome']) === 'ALLOCATE_FAILED' },
  },
  [`PUT ${E}/timeline`]: {
    url: () => `${E}/timeline`,
    base: () => ({ steps: [{ at: '+1h', name: 'a step', request: { method: 'POST', path: `${ALERTS}/demo-alert/fire`, headers: { 'x-auth-token': 'demo-token' }, body: { message: 'x' } } }] }),
    read: (ctx) => json(ctx, `${E}/timeline`),
  },
  [`POST ${E}/timeline/seek`]: {
    url: () => `${E}/timeline/seek`,
    base: () => ({ to: '+1m' }),
    read: async (_ctx, { response }) => response.json(),
    values: { to: () => 90_000 },
    shows: { to: (r, s) => at(r, ['offsetMs']) === s.value },
  },
  [`POST ${E}/timeline/record`]: {
    url: () => `${E}/timeline/record`,
    base: () => ({ on: true }),
    read: (ctx) => json(ctx, `${E}/timeline`),
    values: { on: () => true },
    shows: { on: (r, s) => at(r, ['recording']) === s.value },
  },
  [`PATCH ${E}/alerts/{uid}`]: {
    url: () => `${E}/alerts/demo-alert`,
    base: () => ({ enabled: true }),
    read: (ctx) => json(ctx, `${E}/alerts/demo-alert`),
  },
  [`POST ${E}/faults`]: {
    url: () => `${E}/faults`,
    base: () => ({ path: '/nowhere', action: { status: 503 } }),
    read: (ctx, { response }) => json(ctx, `${E}/faults/${(response.json() as { id: string }).id}`),
    values: { action: () => ({ status: 502 }) },
    bodies: { 'action.drop': () => ({ path: '/nowhere', action: {} }) },
  },
  ...Object.fromEntries(
    ['count', 'find'].map((what) => [
      `POST ${E}/journal/${what}`,
      {
        url: async (ctx: Ctx) => {
          // A journal with requests of several methods, paths, queries, headers, bodies and statuses.
          await ctx.app.inject({ url: `${ANNOTATIONS}?domain=12335`, headers: ctx.headers });
          await ctx.app.inject({ method: 'POST', url: `${ALERTS}/demo-alert/fire`, payload: { message: 'walk' } });
          await ctx.app.inject({ url: `${CLOUD}/grid/999`, headers: ctx.headers });
          await ctx.app.inject({ url: `${CLOUD}/grid`, headers: { ...ctx.headers, 'x-emulator-client': 'dashboard' } });
          return `${E}/journal/${what}`;
        },
        base: () => ({}),
        read: async (_ctx: Ctx, { response }: Sent) => response.json(),
        filters: true,
        values: {
          method: () => 'POST',
          path: () => `${ALERTS}/*`,
          query: () => ({ domain: '12335' }),
          bodyContains: () => 'walk',
          bodyJson: () => ({ message: 'walk' }),
          status: () => 404,
          before: () => 2,
          include: () => 'dashboard',
          limit: () => 1,
        },
      } satisfies RouteCase,
    ]),
  ),
  [`PUT ${E}/compositions/next-play`]: {
    url: () => `${E}/compositions/next-play`,
    base: () => ({ compositionName: COMPOSITION, outcome: 'Failed' }),
    // The next play of the composition follows it: its instance, as the state keeps it.
    read: async (ctx, { body }) => {
      const { instanceID } = (await post(ctx, `${INSTANCES}?command=play`, { compositionName: body.compositionName })) as { instanceID: string };
      return instanceRead(ctx, instanceID);
    },
    values: { compositionName: () => '/Tests/Soak/Search Soak' },
    shows: {
      compositionName: (r) => at(r, ['stored', 'outcome', 'outcome']) === 'Failed' && at(r, ['compositionName']) === 'Search Soak',
      outcome: (r, s) => at(r, ['stored', 'outcome', 'outcome']) === s.value,
      afterMs: (r, s) => at(r, ['stored', 'outcome', 'afterMs']) === s.value,
      errorFactor: (r, s) => at(r, ['stored', 'outcome', 'errorFactor']) === s.value,
      message: (r, s) => at(r, ['stored', 'outcome', 'message']) === s.value,
    },
  },
  // No fields: the options of these calls are query parameters; a body field is refused (the unknown-field check below).
  [`POST ${E}/reset`]: {
    url: () => `${E}/reset`,
    base: () => ({}),
    read: async (_ctx, { response }) => response.json(),
  },
  [`POST ${E}/lifecycles/{kind}/{id}/fail`]: {
    url: () => `${E}/lifecycles/cloudServer/58201/fail`,
    base: () => ({}),
    read: async (_ctx, { response }) => response.json(),
  },
  [`POST ${E}/lifecycles/{kind}/{id}/externally-terminate`]: {
    url: async (ctx) => {
      await post(ctx, `${CLOUD}/environment/301/action`, { action: 'start' });
      await post(ctx, `${E}/clock/advance`, { until: { kind: 'environment', id: 301 } });
      return `${E}/lifecycles/environment/301/externally-terminate`;
    },
    base: () => ({}),
    read: async (_ctx, { response }) => response.json(),
  },
  [`POST ${E}/incidents`]: {
    url: () => `${E}/incidents`,
    base: () => ({ domainId: 12335, startAgoMs: 3600000, endAgoMs: 0 }),
    read: async (ctx, { response }) =>
      ((await json(ctx, `${E}/incidents`)) as Array<{ id: number }>).find((i) => i.id === (response.json() as { id: number }).id),
    bodies: {
      start: () => ({ domainId: 12335, endAgoMs: 0 }),
      end: () => ({ domainId: 12335, startAgoMs: 3600000 }),
    },
    values: { domainId: () => 12345, start: (ctx) => ctx.clock.now() - 7200000, end: (ctx) => ctx.clock.now() + 60000 },
    shows: {
      startAgoMs: (r, s, ctx) => at(r, ['start']) === ctx.clock.now() - (s.value as number),
      endAgoMs: (r, s, ctx) => at(r, ['end']) === ctx.clock.now() - (s.value as number),
    },
  },
};

// ---------------------------------------------------------------------------------------
// The walk
// ---------------------------------------------------------------------------------------

/** The branches of a schema that are not null. */
function branches(schema: Schema): Schema[] {
  if (schema.anyOf) return schema.anyOf.flatMap(branches);
  return schema.type === 'null' ? [] : [schema];
}

/** Every field of an object schema: its properties, and those of an object (or array of objects) one level down. */
function fieldsOf(schema: Schema, prefix: Path = [], depth = 0): Array<{ path: Path; schema: Schema }> {
  const out: Array<{ path: Path; schema: Schema }> = [];
  for (const object of branches(schema)) {
    for (const [name, sub] of Object.entries(object.properties ?? {})) {
      const path = [...prefix, name];
      out.push({ path, schema: sub });
      if (depth > 0) continue;
      for (const b of branches(sub)) {
        if (b.properties && Object.keys(b.properties).length > 0) out.push(...fieldsOf(b, path, depth + 1));
        if (b.items?.properties) out.push(...fieldsOf(b.items, [...path, 0], depth + 1));
      }
    }
  }
  const seen = new Set<string>();
  return out.filter((f) => !seen.has(f.path.join('.')) && seen.add(f.path.join('.')));
}

/** A valid value of `schema` that differs from `current`, if the schema says enough to make one. */
function valueOf(schema: Schema, current: unknown, name: string): unknown {
  for (const b of branches(schema)) {
    const v = oneValue(b, current, name);
    if (v !== undefined && !isDeepStrictEqual(v, current)) return v;
  }
  return undefined;
}

function oneValue(s: Schema, current: unknown, name: string): unknown {
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum.find((e) => !isDeepStrictEqual(e, current));
  switch (s.type) {
    case 'string': {
      const candidates = [`stored-${name}`, `Stored${name}`, 'POST', 'x'];
      const fits = (c: string) => (s.pattern === undefined || new RegExp(s.pattern).test(c)) && c.length >= (s.minLength ?? 0);
      const found = candidates.find((c) => fits(c) && c !== current);
      return found === undefined ? undefined : found.slice(0, s.maxLength ?? found.length);
    }
    case 'integer':
    case 'number': {
      const step = s.type === 'integer' ? 1 : 0.5;
      const from = typeof current === 'number' ? current : (s.minimum ?? 0);
      const up = from + 7 * step;
      return s.maximum === undefined || up <= s.maximum ? up : Math.max(s.minimum ?? 0, from - step);
    }
    case 'boolean':
      return typeof current === 'boolean' ? !current : true;
    case 'array':
      return s.items ? [valueOf(s.items, undefined, name)] : [];
    case 'object': {
      const properties = Object.entries(s.properties ?? {});
      // Any keys: one of its own.
      if (properties.length === 0) {
        return { [`stored-${name}`]: typeof s.additionalProperties === 'object' ? valueOf(s.additionalProperties, undefined, name) : name };
      }
      const made: Record<string, unknown> = { ...(current as object) };
      for (const key of s.required ?? []) made[key] ??= valueOf(s.properties![key], undefined, key);
      // Differs from what it was in its first property.
      if (isDeepStrictEqual(made, current ?? {})) made[properties[0][0]] = valueOf(properties[0][1], made[properties[0][0]], properties[0][0]);
      return made;
    }
    default:
      // Any JSON value.
      return { stored: name };
  }
}

/** `body` with `path` set to `value`, making the objects and first array items on the way. */
function withField(
  body: Record<string, unknown>,
  fields: Map<string, Schema>,
  path: Path,
  value: unknown,
  values: Record<string, () => unknown>,
): Record<string, unknown> {
  const copy = structuredClone(body);
  let node: Record<string | number, unknown> = copy;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    const here = path.slice(0, i + 1).join('.');
    if (node[key] === undefined || node[key] === null) {
      node[key] = here in values ? values[here]() : typeof path[i + 1] === 'number' ? [] : valueOf(fields.get(here) ?? {}, undefined, String(key));
    }
    if (typeof path[i + 1] === 'number' && (node[key] as unknown[]).length === 0) {
      const items = branches(fields.get(here) ?? {}).find((b) => b.items)?.items ?? {};
      (node[key] as unknown[]).push(valueOf(items, undefined, String(key)));
    }
    node = node[key] as Record<string | number, unknown>;
  }
  node[path[path.length - 1]] = value;
  return copy;
}

/** `sent` is in `found`: equal, or (objects and arrays) every part of it is. */
function holds(found: unknown, sent: unknown): boolean {
  if (isDeepStrictEqual(found, sent)) return true;
  if (Array.isArray(sent)) return Array.isArray(found) && sent.every((s) => found.some((f) => holds(f, s)));
  if (sent !== null && typeof sent === 'object') {
    return found !== null && typeof found === 'object' && Object.entries(sent).every(([k, v]) => holds((found as Record<string, unknown>)[k], v));
  }
  return false;
}

/** The message names the field, or the object it is part of (refused whole): its name as a word of its own. */
const names = (message: string, path: Path) =>
  path
    .filter((p): p is string => typeof p === 'string')
    .some((name) => new RegExp(`(^|[^A-Za-z0-9_])${name.replace(/[$.]/g, '\\$&')}([^A-Za-z0-9_]|$)`).test(message));

interface Route {
  method: string;
  path: string;
  schema: Schema;
}

async function bodyRoutes(app: FastifyInstance): Promise<Route[]> {
  const doc = (await app.inject({ url: `${E}/openapi.json` })).json() as {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
  };
  const routes: Route[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const schema = operation.requestBody?.content['application/json']?.schema;
      if (schema) routes.push({ method: method.toUpperCase(), path, schema });
    }
  }
  return routes;
}

let demo: TestApp;
let routes: Route[];
beforeAll(async () => {
  demo = await makeDemoApp();
  routes = await bodyRoutes(demo.app);
  const ctx: Ctx = { ...demo, headers: { 'x-auth-token': 'demo-token' }, data: {} };
  await post(ctx, `${INSTANCES}?command=play`, { compositionName: COMPOSITION });
  await post(ctx, `${E}/lifecycles/grid/105/next-start`, { outcome: 'ALLOCATE_FAILED' }, 'PUT');
  await post(ctx, `${E}/faults`, { path: '/nowhere', action: { status: 503 } });
  demoState = (await json(ctx, `${E}/state`)) as Record<string, unknown>;
});
afterAll(async () => demo?.app.close());

/** Sends one field and says what became of it: stored, refused naming it, or a failure. */
async function tryField(app: TestApp, route: Route, c: RouteCase, path: Path, fields: Map<string, Schema>): Promise<string | undefined> {
  const key = path.join('.');
  // Each field on the demo seed as it was, at the same time.
  expect((await app.app.inject({ method: 'POST', url: `${E}/reset` })).statusCode).toBe(200);
  const ctx: Ctx = { ...app, headers: { 'x-auth-token': 'demo-token' }, data: {} };
  const values = Object.fromEntries(Object.entries(c.values ?? {}).map(([k, f]) => [k, () => f(ctx)]));
  const url = await c.url(ctx);
  const base = c.bodies?.[key]?.(ctx) ?? (c.alone ? {} : c.base(ctx));
  const value = key in values ? values[key]() : (c.valueFor?.(key, ctx) ?? valueOf(fields.get(key)!, at(base, path), String(path[path.length - 1])));
  if (value === undefined) return `${key}: no valid value could be made from its schema; give one in 'values'`;
  const body = withField(base, fields, path, value, values);
  const send = (payload: object) => ctx.app.inject({ method: route.method as 'POST', url, headers: ctx.headers, payload });
  const response = await send(body);
  if (response.statusCode === 400) {
    const { message } = response.json() as { message: string };
    return names(message, path) ? undefined : `${key}: refused with a 400 that does not name it (${message})`;
  }
  if (response.statusCode >= 300) return `${key}: answered ${response.statusCode} ${response.body}`;
  if (c.tolerated?.[key]) return undefined;
  const sent: Sent = { body, value, response };
  const read = await c.read(ctx, sent);
  if (c.filters) {
    const without = await c.read(ctx, { body: base, value: undefined, response: await send(base) });
    return isDeepStrictEqual(read, without) ? `${key}: accepted and not applied (the answer is the same without it)` : undefined;
  }
  const shows = c.shows?.[key];
  const ok = shows ? await shows(read, sent, ctx) : everyAt(read, path).some((found) => holds(found, value));
  return ok ? undefined : `${key}: accepted (${response.statusCode}) and not stored: sent ${JSON.stringify(value)}, read back ${JSON.stringify(at(read, path))}`;
}

describe('every field a body may hold is stored or refused', () => {
  it('every route with a body schema has an entry in the table, and every entry a route', () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(routes.length).toBeGreaterThan(10);
    expect(keys.filter((k) => !(k in ROUTES)), 'routes with a body and no entry: say how to call them and read them back').toEqual([]);
    expect(Object.keys(ROUTES).filter((k) => !keys.includes(k)), 'entries of no route').toEqual([]);
  });

  it.each(Object.keys(ROUTES))('%s', async (key) => {
    const route = routes.find((r) => `${r.method} ${r.path}` === key);
    expect(route, `no route ${key}`).toBeDefined();
    const c = ROUTES[key];
    const fields = fieldsOf(route!.schema);
    const byPath = new Map(fields.map((f) => [f.path.join('.'), f.schema]));
    const failures: string[] = [];
    const app = await makeDemoApp();
    try {
      for (const { path } of fields) {
        if (c.skip?.[path.join('.')]) continue;
        const failure = await tryField(app, route!, c, path, byPath);
        if (failure) failures.push(failure);
      }
    } finally {
      await app.app.close();
    }
    expect(failures, `${key}: fields neither stored nor refused`).toEqual([]);
  }, 180_000);

  it.each(Object.keys(ROUTES))('%s: the base body is accepted, and a field the schema does not have is refused naming it', async (key) => {
    const route = routes.find((r) => `${r.method} ${r.path}` === key)!;
    const c = ROUTES[key];
    const app = await makeDemoApp();
    try {
      const ctx: Ctx = { ...app, headers: { 'x-auth-token': 'demo-token' }, data: {} };
      const url = await c.url(ctx);
      const send = (payload: object) => ctx.app.inject({ method: route.method as 'POST', url, headers: ctx.headers, payload });
      const unknown = await send({ ...c.base(ctx), notAFieldOfThisBody: 1 });
      expect(unknown.statusCode, unknown.body).toBe(400);
      expect(names((unknown.json() as { message: string }).message, ['notAFieldOfThisBody']), unknown.body).toBe(true);
      // Refused, it changed nothing: the base body is still accepted as it would have been.
      const accepted = await send(c.base(ctx));
      expect(accepted.statusCode, accepted.body).toBeLessThan(300);
    } finally {
      await app.app.close();
    }
  });

  it.each(Object.keys(ROUTES).filter((k) => ROUTES[k].writesBack))('%s: a body copied from the read is accepted as it is, the fields the service makes included', async (key) => {
    const route = routes.find((r) => `${r.method} ${r.path}` === key)!;
    const c = ROUTES[key];
    const app = await makeDemoApp();
    try {
      const ctx: Ctx = { ...app, headers: { 'x-auth-token': 'demo-token' }, data: {} };
      const url = await c.url(ctx);
      const send = (payload: object) => ctx.app.inject({ method: route.method as 'POST', url, headers: ctx.headers, payload });
      const none = { body: {}, value: undefined, response: await send({}) };
      const before = (await c.read(ctx, none)) as Record<string, unknown>;
      const schemaFields = Object.keys(branches(route.schema)[0].properties ?? {});
      // Each field alone, at the value the read shows; then the whole read.
      for (const field of schemaFields.filter((f) => f in before)) {
        const current = (await c.read(ctx, none)) as Record<string, unknown>;
        ctx.clock.advance(1000);
        const res = await send({ [field]: current[field] });
        expect(res.statusCode, `${field}: ${res.body}`).toBeLessThan(300);
        const after = (await c.read(ctx, none)) as Record<string, unknown>;
        expect({ ...after, lastModified: before.lastModified }, field).toEqual(before);
      }
      const whole = (await c.read(ctx, none)) as Record<string, unknown>;
      expect((await send(whole)).statusCode).toBeLessThan(300);
      // A stale lastModified is not what is stored: refused, naming it.
      const stale = await send({ ...whole, lastModified: before.lastModified });
      expect(stale.statusCode).toBe(400);
      expect(names((stale.json() as { message: string }).message, ['lastModified'])).toBe(true);
      // A changed one is refused, naming it (what the walk also checks of every field).
      const changed = await send({ ...whole, created: '2020-01-01T00:00:00.000Z' });
      expect(changed.statusCode).toBe(400);
      expect(names((changed.json() as { message: string }).message, ['created'])).toBe(true);
    } finally {
      await app.app.close();
    }
  });

  it('docs/behaviour-reference.md lists every field that is accepted and not kept, with the route', async () => {
    const text = await readFile(new URL('../../docs/behaviour-reference.md', import.meta.url), 'utf8');
    const rows = text.split('\n').filter((line) => line.startsWith('| '));
    const missing = Object.entries(ROUTES).flatMap(([key, c]) =>
      Object.keys(c.tolerated ?? {})
        .filter((field) => !rows.some((row) => row.includes(`\`${key}\``) && row.includes(`\`${field}\``)))
        .map((field) => `${key} ${field}`),
    );
    expect(missing).toEqual([]);
  });
});
