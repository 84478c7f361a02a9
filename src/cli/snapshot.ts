import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { wallClock } from '../core/clock.js';
import { PATHS } from '../http/paths.js';
import { OBJECT_TYPES } from '../repository/schemas.js';
import { Masker } from './snapshot-mask.js';

/**
 * `snapshot`: reads a tenant through the service's documented read calls and writes a fixture
 * folder that `check` accepts, secrets and personal data replaced (see docs/parity.md). It
 * sends the log-in and GET requests only.
 */

/** Default bound of the objects a snapshot holds, of all kinds together. */
export const DEFAULT_SNAPSHOT_MAX_OBJECTS = 10_000;
/** Default bound of the bytes of all the answers a snapshot reads. */
export const DEFAULT_SNAPSHOT_MAX_BYTES = 64 * 1024 * 1024;
/** Default time a single request may take, in milliseconds. */
export const DEFAULT_SNAPSHOT_TIMEOUT_MS = 30_000;
/** Rows of a page-group breakdown read per app. */
const PAGE_GROUP_LIMIT = 50;

export interface SnapshotOptions {
  /** The service's base URL (its application context included, as `record` takes it). */
  target: URL;
  /** The folder to write (created; the files it writes are replaced). */
  out: string;
  userName?: string;
  password?: string;
  apiToken?: string;
  tenant?: string;
  /** The key of the replacements; absent: a random one, so replacements differ from one snapshot to the next. */
  maskKey?: string;
  maxObjects?: number;
  maxBytes?: number;
  timeoutMs?: number;
}

export interface SnapshotResult {
  /** The files written, relative to the folder. */
  files: string[];
  /** Entries written per section. */
  counts: Record<string, number>;
  /** What the target has that the fixture format cannot hold, or that the bounds left out. */
  skipped: string[];
  /** The log-in of the seeded emulator: the snapshot user's replaced name and its made-up password. */
  logIn: { userName: string; password: string };
  /** Requests sent, bytes read. */
  requests: number;
  bytes: number;
  /** The report's text, as written to SNAPSHOT-REPORT.md. */
  report: string;
}

/** A call the target answered with an error, or could not answer: the message names the call and the status. */
export class SnapshotError extends Error {}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = Record<string, unknown>;

interface RepoObject {
  id: number;
  name: string;
  type: string;
  description?: string;
  schemaVersion?: string;
  created?: string;
  lastModified?: string;
  tenantID?: number;
  attributes?: Array<{ name: string; value: string | null }>;
  body?: string;
  references?: Array<Obj>;
}

/** The attributes each owned type's interface makes (an entry for such an object adds only the others). */
const OWNED_ATTRIBUTES: Record<string, string[]> = {
  grid: ['location', 'region', 'cloudType', 'serverCount', 'loadServerCount', 'resultsServerCount', 'monitors'],
  testenvironment: ['location', 'cloudType', 'mainInstanceSize', 'databaseInstanceSize', 'serverCount'],
  rsdb: ['location', 'region', 'zone', 'cloudType', 'instanceSize', 'serverCount'],
  domain: ['apiKey', 'domain'],
  alert: ['uid', 'enabled', 'state', 'lastCleared', 'lastTriggered', 'lastUpdated'],
};
/** Owned types an `objects` entry may add to. Users and tenants are made from the users section alone. */
const ADDABLE_OWNED = new Set(Object.keys(OWNED_ATTRIBUTES));
const DERIVED = new Set(['user', 'tenant']);

const GRID_START_OUTCOMES = new Set(['CHECKED', 'ALLOCATE_FAILED', 'ALLOCATED_WITH_FAILURES', 'CHECKED_WITH_FAILURES', 'CHECKED_AND_DEPLOYING', 'CHECKED_AND_TERMINATING']);

const attr = (o: RepoObject, name: string): string | undefined => o.attributes?.find((a) => a.name === name)?.value ?? undefined;
const ms = (iso: unknown): number | undefined => {
  if (typeof iso !== 'string') return undefined;
  const t = Date.parse(iso);
  return Number.isFinite(t) && t >= 0 ? t : undefined;
};

/** The HTTP side: GETs (and the one log-in) with a timeout each and one byte bound over all. */
class Reader {
  requests = 0;
  bytes = 0;
  token = '';

  constructor(
    private readonly base: string,
    private readonly maxBytes: number,
    private readonly timeoutMs: number,
  ) {}

  async call(method: 'GET' | 'PUT', path: string, body?: unknown): Promise<{ status: number; json: unknown; text: string }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token) {
      headers['x-auth-token'] = this.token;
      headers.authentication = this.token;
    }
    if (body !== undefined) headers['content-type'] = 'application/json';
    this.requests++;
    const what = `${method} ${path.split('?')[0]}`;
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
      });
    } catch (err) {
      const e = err as Error;
      const reason = e.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms (--timeout-ms)` : ((e.cause as Error | undefined)?.message ?? e.message);
      throw new SnapshotError(`${what}: could not read the target: ${reason}`);
    }
    const text = await this.read(response, what);
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json, text };
  }

  /** The body, counted against the snapshot's byte bound as it arrives. */
  private async read(response: Response, what: string): Promise<string> {
    if (!response.body) return '';
    const chunks: Uint8Array[] = [];
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.bytes += value.byteLength;
        if (this.bytes > this.maxBytes) {
          await reader.cancel();
          throw new SnapshotError(`${what}: the answers read reached the snapshot's bound of ${this.maxBytes} bytes (--max-bytes); nothing was written`);
        }
        chunks.push(value);
      }
    } catch (err) {
      if (err instanceof SnapshotError) throw err;
      throw new SnapshotError(`${what}: the answer broke off: ${(err as Error).message}`);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** A GET that must succeed: an error status is a SnapshotError naming the call and the status. */
  async get(path: string): Promise<unknown> {
    const { status, json, text } = await this.call('GET', path);
    if (status < 200 || status > 299) throw new SnapshotError(`GET ${path.split('?')[0]} answered ${status}${errorMessage(json, text)}`);
    return json;
  }
}

function errorMessage(json: unknown, text: string): string {
  const message = json && typeof json === 'object' && typeof (json as Obj).message === 'string' ? ((json as Obj).message as string) : text.slice(0, 200);
  return message ? `: ${message}` : '';
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);

/** Takes a snapshot of the tenant at `options.target` into `options.out`. */
export async function takeSnapshot(options: SnapshotOptions): Promise<SnapshotResult> {
  const maxObjects = options.maxObjects ?? DEFAULT_SNAPSHOT_MAX_OBJECTS;
  const base = `${options.target.origin}${options.target.pathname.replace(/\/+$/, '')}`;
  const reader = new Reader(base, options.maxBytes ?? DEFAULT_SNAPSHOT_MAX_BYTES, options.timeoutMs ?? DEFAULT_SNAPSHOT_TIMEOUT_MS);
  const mask = new Masker(options.maskKey);
  const skipped: string[] = [];
  const now = wallClock();
  let budget = maxObjects;
  /** The first `budget` of `items`; the rest named in the report. */
  const bounded = <T>(items: T[], what: string): T[] => {
    if (items.length <= budget) {
      budget -= items.length;
      return items;
    }
    skipped.push(`${what}: ${items.length - budget} of ${items.length} left out: the snapshot's bound of ${maxObjects} objects (--max-objects) was reached`);
    const kept = items.slice(0, budget);
    budget = 0;
    return kept;
  };

  // Log in: the one request that is not a GET.
  const credentials = options.apiToken !== undefined ? { apiToken: options.apiToken } : { userName: options.userName, password: options.password };
  const logIn = await reader.call('PUT', `${PATHS.repository}/Tokens`, options.tenant === undefined ? credentials : { ...credentials, tenant: options.tenant });
  if (logIn.status !== 200 || !isObj(logIn.json) || typeof logIn.json.token !== 'string') {
    throw new SnapshotError(`PUT ${PATHS.repository}/Tokens (the log-in) answered ${logIn.status}${errorMessage(logIn.json, logIn.text)}`);
  }
  reader.token = logIn.json.token;

  // The repository's objects, type by type.
  const objectsOf = new Map<string, RepoObject[]>();
  for (const type of OBJECT_TYPES) {
    const { status, json, text } = await reader.call('GET', `${PATHS.repository}/Objects/${type}`);
    if (status === 404) {
      skipped.push(`repository objects of type '${type}': the target does not know the type (404)`);
      continue;
    }
    if (status !== 200 || !isObj(json) || !Array.isArray(json.objects)) throw new SnapshotError(`GET ${PATHS.repository}/Objects/${type} answered ${status}${errorMessage(json, text)}`);
    objectsOf.set(type, (json.objects as unknown[]).filter(isObj).filter((o) => int(o.id) !== undefined && typeof o.name === 'string') as unknown as RepoObject[]);
  }
  const of = (type: string) => objectsOf.get(type) ?? [];

  // Tenants and users: names replaced, passwords made up (the service never shows one).
  const tenantNames = new Map<number, string>(of('tenant').map((t) => [t.id, t.name]));
  const tenantOf = (o: RepoObject) => (o.tenantID !== undefined ? tenantNames.get(o.tenantID) : undefined) ?? options.tenant ?? 'Default';
  const users = bounded(of('user'), 'users');
  for (const u of users) {
    mask.know(u.name, mask.userName(u.name));
    const full = attr(u, 'fullName');
    if (full) mask.know(full, mask.personName(full));
  }
  const seedUsers: Obj[] = users.map((u) => {
    const full = attr(u, 'fullName');
    const user: Obj = { userName: mask.userName(u.name), password: mask.secret(`password:${u.name}`), tenant: tenantOf(u) };
    if (full) user.fullName = mask.personName(full);
    return user;
  });
  const selfName = options.userName ?? (users.length ? undefined : 'snapshot-user');
  if (selfName !== undefined && !users.some((u) => u.name === selfName)) {
    seedUsers.push({ userName: mask.userName(selfName), password: mask.secret(`password:${selfName}`), tenant: options.tenant ?? 'Default' });
  }
  const self = (selfName !== undefined ? seedUsers.find((u) => u.userName === mask.userName(selfName)) : seedUsers[0]) as Obj;
  if (options.apiToken !== undefined) skipped.push('API tokens: the service never shows one; the seeded users have none (log in with the made-up password below)');
  skipped.push("passwords: the service never shows one; each seeded user has a made-up password (the snapshot user's is below)");

  // Domains (apps): app keys replaced.
  const domainObjects = bounded(of('domain'), 'domains');
  const appKeys = new Map<number, string>();
  const domains: Obj[] = domainObjects.map((d) => {
    const key = attr(d, 'apiKey');
    const domain: Obj = { id: d.id, name: mask.text(d.name), tenant: tenantOf(d) };
    if (key) {
      appKeys.set(d.id, key);
      domain.apiKey = mask.appKey(key);
    }
    return domain;
  });
  const domainIds = new Set(domains.map((d) => d.id as number));

  // Provisioning: grids, their servers, RSDBs, test environments.
  const grids: Obj[] = [];
  const cloudServers: Obj[] = [];
  for (const g of bounded(of('grid'), 'grids')) {
    const read = (await reader.get(`${PATHS.provisioning}/grid/${g.id}`)) as Obj;
    const servers = Array.isArray(read.cloudServers) ? (read.cloudServers as Obj[]).filter(isObj) : [];
    const grid: Obj = { id: g.id, name: mask.text(g.name), monitors: attr(g, 'monitors') === 'true' };
    const state = str(read.state, 'LOADED');
    const locations = new Map<number, string>();
    for (const l of (isObj(read.statistics) && Array.isArray(read.statistics.locations) ? read.statistics.locations : []) as Obj[]) {
      if (isObj(l) && int(l.locationID) !== undefined) locations.set(l.locationID as number, str(l.locationName, `location ${String(l.locationID)}`));
    }
    if (servers.length && state !== 'LOADED') {
      const records: Obj[] = [];
      for (const s of bounded(servers, `cloud servers of grid ${g.id}`)) {
        const id = int(s.id);
        if (id === undefined) continue;
        const cs = (await reader.get(`${PATHS.provisioning}/cloudserver/${id}`)) as Obj;
        const instanceSize = str(cs.instanceSize, str(s.serverClassName, 'unknown'));
        const locationID = int(s.locationID) ?? 0;
        records.push({
          id,
          gridId: g.id,
          name: str(s.name, 'server'),
          serverClassName: str(s.serverClassName, instanceSize),
          role: roleOf(instanceSize),
          cloudType: str(s.cloudType, str(cs.cloudType, 'EC2')),
          launchCPA: str(s.launchCPA, str(cs.launchCPAName, 'unknown')),
          locationID,
          locationName: locations.get(locationID) ?? (attr(g, 'location') ?? 'unknown').split(',')[0],
          region: str(cs.region, 'unknown'),
          zone: str(cs.zone, 'unknown'),
          securityGroup: str(s.securityGroup, 'unknown'),
          instanceSize,
          usingReservedAddress: s.usingReservedAddress === true,
          vendorID: str(cs.vendorID),
          privateHostName: str(cs.privateHostName),
          publicHostName: str(cs.publicHostName, str(s.publicHostname)),
          createdAt: now,
          ...(state.startsWith('CHECKED') && str(cs.state) === 'RUNNING' ? { checkedAt: now } : {}),
          steps: [{ state: str(cs.state, 'RUNNING'), at: now }],
        });
      }
      grid.servers = templatesOf(records);
      if (GRID_START_OUTCOMES.has(state)) grid.startOutcome = state;
      grid.deployment = {
        instanceId: str(read.instanceId, `snapshot-${g.id}`),
        startedAt: now,
        startedBy: str(self.userName),
        steps: [{ state, at: now }],
        journal: (Array.isArray(read.journalEntries) ? (read.journalEntries as Obj[]) : []).filter(isObj).map((j) => ({ at: now, text: mask.text(str(j.text)), type: str(j.type, 'INFO') })),
        cloudServerIds: records.map((r) => r.id),
      };
      cloudServers.push(...records);
      skipped.push(`grid ${g.id}: its ${state} state is carried as of the snapshot's time, not its past steps (statistics and the journal's times start then)`);
    } else {
      grid.servers = synthesizedServers(g);
      if (state !== 'LOADED') skipped.push(`grid ${g.id}: its state ${state} is not carried (the target shows no servers for it); it is LOADED in the snapshot`);
      skipped.push(
        `grid ${g.id}: a grid that is not deployed shows no servers; its server templates are made from the repository's attributes (location, region, cloudType, counts); launchCPA, zone, securityGroup and server class names are placeholders`,
      );
    }
    grids.push(grid);
  }

  const rsdbs: Obj[] = [];
  for (const r of bounded(of('rsdb'), 'RSDBs')) {
    const read = (await reader.get(`${PATHS.provisioning}/rsdb/${r.id}`)) as Obj;
    const cs = isObj(read.cloudServer) ? read.cloudServer : {};
    const rsdb: Obj = {
      id: r.id,
      name: mask.text(r.name),
      cloudType: str(cs.cloudType, attr(r, 'cloudType') ?? 'EC2'),
      instanceSize: str(cs.instanceSize, attr(r, 'instanceSize') ?? 'unknown') || 'unknown',
      launchCPAName: str(cs.launchCPAName) || 'unknown',
      region: str(cs.region, attr(r, 'region') ?? 'unknown') || 'unknown',
      zone: str(cs.zone, attr(r, 'zone') ?? 'unknown') || 'unknown',
    };
    const state = str(read.state, 'LOADED');
    if (state !== 'LOADED') rsdb.launch = { steps: [{ state, at: now }], host: { vendorID: str(cs.vendorID), privateHostName: str(cs.privateHostName), publicHostName: str(cs.publicHostName) } };
    rsdbs.push(rsdb);
  }

  const environments: Obj[] = [];
  for (const e of bounded(of('testenvironment'), 'test environments')) {
    const read = (await reader.get(`${PATHS.provisioning}/environment/${e.id}/`)) as Obj;
    const db = isObj(read.databaseInstance) ? read.databaseInstance : {};
    const main = isObj(read.mainInstance) ? read.mainInstance : {};
    const environment: Obj = {
      id: e.id,
      name: mask.text(e.name),
      databaseInstance: { cloudType: str(db.cloudType, attr(e, 'cloudType') ?? 'EC2'), instanceSize: str(db.instanceSize, attr(e, 'databaseInstanceSize') ?? 'unknown') || 'unknown' },
      mainInstance: { cloudType: str(main.cloudType, attr(e, 'cloudType') ?? 'EC2'), instanceSize: str(main.instanceSize, attr(e, 'mainInstanceSize') ?? 'unknown') || 'unknown' },
    };
    const launched = ms(read.lastLaunched);
    if (launched !== undefined) environment.lastLaunchedAt = launched;
    if (typeof read.lastLaunchedBy === 'string') environment.lastLaunchedBy = mask.text(read.lastLaunchedBy);
    const stopped = ms(read.lastStopped);
    if (stopped !== undefined) environment.lastStoppedAt = stopped;
    const state = str(read.state, 'LOADED');
    if (state !== 'LOADED') {
      const host = (i: Obj) => ({ vendorID: str(i.vendorID), privateHostName: str(i.privateHostName), publicHostName: str(i.publicHostName) });
      environment.launch = { steps: [{ state, at: now }], database: host(db), main: host(main) };
      if (typeof read.url === 'string') skipped.push(`test environment ${e.id}: its url is made by the emulator from its host, not carried`);
    }
    environments.push(environment);
  }

  // Annotations: every one the list answers (from the epoch on).
  const listed = await reader.get(`${PATHS.annotations}?date-start=0`);
  const annotationsRead = Array.isArray(listed) ? (listed as unknown[]).filter(isObj) : [];
  const annotations: Obj[] = [];
  for (const a of bounded(annotationsRead, 'annotations')) {
    const id = int(a.id);
    const start = int(a.start);
    if (id === undefined || start === undefined) {
      skipped.push(`an annotation without an integer id and start: ${JSON.stringify(a).slice(0, 80)}`);
      continue;
    }
    const ids = (Array.isArray(a.domains) ? (a.domains as Obj[]) : []).filter(isObj).map((d) => int(d.id)).filter((d): d is number => d !== undefined);
    const missing = ids.filter((d) => !domainIds.has(d));
    if (missing.length) skipped.push(`annotation ${id}: its domains ${missing.join(', ')} are not among the tenant's domain objects; left out of it`);
    const annotation: Obj = {
      id,
      title: mask.text(str(a.title)),
      text: mask.text(str(a.text)),
      start,
      domainIds: ids.filter((d) => domainIds.has(d)),
      source: str(a.source, 'REST API'),
      type: str(a.type, 'USER_ENTERED'),
      user: annotationUser(str(a.user, 'unknown'), mask),
    };
    const end = int(a.end);
    if (end !== undefined) annotation.end = end;
    const lastModified = int(a.lastModified);
    if (lastModified !== undefined) annotation.lastModified = lastModified;
    annotations.push(annotation);
  }

  // Alerts: what their repository objects show.
  const alerts: Obj[] = [];
  for (const o of bounded(of('alert'), 'alerts')) {
    const uid = attr(o, 'uid');
    if (!uid || !/^[A-Za-z0-9._~-]+$/.test(uid)) {
      skipped.push(`alert object ${o.id}: no uid the fixtures can hold`);
      continue;
    }
    const alert: Obj = { uid, name: mask.text(o.name), enabled: attr(o, 'enabled') !== 'false', state: attr(o, 'state') === 'firing' ? 'firing' : 'cleared' };
    for (const field of ['lastTriggered', 'lastCleared', 'lastUpdated']) {
      const t = ms(attr(o, field)?.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
      if (t !== undefined) alert[field] = t;
    }
    alerts.push(alert);
  }
  if (alerts.length) {
    skipped.push('alerts: their channels, default message, threshold rule and fire/clear history are not readable through the service interfaces; written without them');
  }

  // Stored objects, and what an entry adds to an owned one.
  const objects: Obj[] = [];
  const kept = new Set<string>();
  const pending: RepoObject[] = [];
  for (const [type, list] of objectsOf) {
    if (DERIVED.has(type)) continue;
    const owned = ADDABLE_OWNED.has(type);
    const ownerIds = new Set<unknown>(
      type === 'grid' ? grids.map((g) => g.id) : type === 'rsdb' ? rsdbs.map((r) => r.id) : type === 'testenvironment' ? environments.map((e) => e.id) : type === 'domain' ? [...domainIds] : [],
    );
    const alertIds = type === 'alert' ? new Set(list.filter((o) => alerts.some((a) => a.uid === attr(o, 'uid'))).map((o) => o.id)) : undefined;
    const candidates = owned ? list.filter((o) => (alertIds ? alertIds.has(o.id) : ownerIds.has(o.id))) : bounded(list, `repository objects of type '${type}'`);
    for (const o of candidates) {
      kept.add(`${type}:${o.id}`);
      pending.push(o);
    }
  }
  for (const o of pending) {
    const owned = ADDABLE_OWNED.has(o.type);
    const own = OWNED_ATTRIBUTES[o.type] ?? [];
    const attributes = (o.attributes ?? [])
      .filter((a) => !owned || !own.includes(a.name))
      .map((a) => ({ name: a.name, value: a.value === null ? null : mask.text(a.value) }));
    const entry: Obj = { id: o.id, type: o.type, name: mask.text(o.name), tenant: tenantOf(o) };
    if (o.description) entry.description = mask.text(o.description);
    if (o.schemaVersion && o.schemaVersion !== '1.0') entry.schemaVersion = o.schemaVersion;
    if (attributes.length) entry.attributes = attributes;
    if (o.body) entry.body = mask.text(o.body);
    if (owned) delete entry.name;
    if (Array.isArray(o.references) && o.references.length) {
      const refs = o.references.filter((r) => isObj(r) && kept.has(`${str(r.type)}:${String(r.id)}`));
      if (refs.length < o.references.length) skipped.push(`${o.type} object ${o.id}: ${o.references.length - refs.length} reference(s) to objects the snapshot does not hold, left out`);
      if (refs.length) entry.references = refs.map((r) => ({ ...r, name: mask.text(str(r.name)) }));
    }
    const created = ms(o.created);
    const lastModified = ms(o.lastModified);
    if (created !== undefined) entry.created = created;
    if (lastModified !== undefined) entry.lastModified = lastModified;
    if (owned && entry.description === undefined && entry.attributes === undefined && entry.body === undefined && entry.references === undefined) continue;
    if (owned) entry.name = mask.text(o.name);
    objects.push(entry);
  }
  for (const type of DERIVED) {
    if (of(type).some((o) => o.description || (o.attributes ?? []).some((a) => !['emailAddress', 'fullName'].includes(a.name)))) {
      skipped.push(`${type} objects: descriptions and attributes beyond the user's e-mail address and full name are not carried (the emulator makes these objects)`);
    }
  }

  // The Query API: a day of summaries and page groups per app, turned into a model.
  const rumModels: Obj[] = [];
  for (const d of domains) {
    const key = appKeys.get(d.id as number);
    if (!key) continue;
    const q = `${PATHS.query}/${encodeURIComponent(key)}`;
    const summary = await reader.call('GET', `${q}/summary?format=json&date-comparator=Last24Hours`);
    if (summary.status === 403 || summary.status === 404) {
      skipped.push(`Query API of ${String(d.name)}: answered ${summary.status}${errorMessage(summary.json, summary.text)}; no model written`);
      continue;
    }
    if (summary.status !== 200 || !isObj(summary.json)) throw new SnapshotError(`GET ${PATHS.query}/<app key of ${String(d.name)}>/summary answered ${summary.status}${errorMessage(summary.json, summary.text)}`);
    const median = Number(summary.json.median);
    const n = Number(summary.json.n);
    if (!Number.isFinite(median) || !Number.isFinite(n) || n <= 0) {
      skipped.push(`Query API of ${String(d.name)}: no data in the last 24 hours; no model written`);
      continue;
    }
    const model: Obj = {
      domainId: d.id,
      pageLoadMedianMs: Math.min(60_000, Math.max(10, Math.round(median))),
      // The model's number is the daily peak's; a day's average is about two thirds of it.
      beaconsPerMinute: Math.min(100_000, Math.max(1, Math.round((n / 1440) * 1.5))),
    };
    const groups = await reader.call('GET', `${q}/page-groups?format=json&date-comparator=Last24Hours&limit=${PAGE_GROUP_LIMIT}`);
    if (groups.status === 200 && isObj(groups.json) && Array.isArray(groups.json.data)) {
      const rows = (groups.json.data as unknown[]).filter((r): r is unknown[] => Array.isArray(r) && typeof r[0] === 'string');
      const pageGroups = rows
        .map((r) => ({ name: mask.text(r[0] as string), share: Number(r[4]) / 100, loadTimeFactor: Number(r[1]) / median }))
        .filter((g) => g.name !== '' && g.share > 0 && g.share <= 1 && Number.isFinite(g.loadTimeFactor) && g.loadTimeFactor > 0)
        .map((g) => ({ name: g.name, share: round(g.share), loadTimeFactor: round(Math.min(100, Math.max(0.01, g.loadTimeFactor))) }));
      if (pageGroups.length) model.pageGroups = pageGroups;
    } else {
      skipped.push(`Query API of ${String(d.name)}: page-groups answered ${groups.status}; the model has no page groups`);
    }
    rumModels.push(model);
  }
  if (rumModels.length) {
    skipped.push(
      "Query API: the emulator generates real-user data from a model; each app's model takes the median page load time, the beacon volume and the page groups of the target's last 24 hours, so its numbers are alike, not equal, and the target's incidents, browsers, countries, timers and metrics are not carried",
    );
  }

  skipped.push(
    'compositions, their runs and results, incidents, session tokens, fault rules and scenarios: not read (the snapshot reads the repository, provisioning, annotations, alerts and the Query API); composition and result objects of the repository are carried as objects',
  );

  // Write the folder.
  const sections: Array<[string, Record<string, Obj[]>]> = [
    ['users.json', { users: seedUsers }],
    ['objects.json', { objects }],
    ['grids.json', { grids, cloudServers }],
    ['rsdbs.json', { rsdbs }],
    ['environments.json', { environments }],
    ['annotations.json', { domains, annotations }],
    ['alerts.json', { alerts }],
    ['query.json', { rumModels }],
  ];
  try {
    await mkdir(options.out, { recursive: true });
  } catch (err) {
    throw new SnapshotError(`cannot write the snapshot folder ${options.out}: ${(err as Error).message}`);
  }
  const files: string[] = [];
  const counts: Record<string, number> = {};
  for (const [file, content] of sections) {
    const present = Object.fromEntries(Object.entries(content).filter(([, list]) => list.length));
    for (const [name, list] of Object.entries(content)) counts[name] = list.length;
    if (!Object.keys(present).length) continue;
    await writeFile(join(options.out, file), `${JSON.stringify(present as Record<string, Json>, null, 2)}\n`, { mode: 0o600 });
    files.push(file);
  }
  const logInOut = { userName: str(self.userName), password: str(self.password) };
  const report = reportText(options, counts, skipped, logInOut, reader, mask);
  await writeFile(join(options.out, 'SNAPSHOT-REPORT.md'), report, { mode: 0o600 });
  files.push('SNAPSHOT-REPORT.md');
  return { files, counts, skipped, logIn: logInOut, requests: reader.requests, bytes: reader.bytes, report };
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/** The role a server plays, from its class name (the interface does not show it). */
function roleOf(instanceSize: string): 'LOAD_GENERATOR' | 'RESULTS' | 'COLLECTOR' {
  const lower = instanceSize.toLowerCase();
  if (lower.includes('results')) return 'RESULTS';
  if (lower.includes('collector')) return 'COLLECTOR';
  return 'LOAD_GENERATOR';
}

/** A deployed grid's server templates: its cloud servers grouped by what a template holds. */
function templatesOf(records: Obj[]): Obj[] {
  const groups = new Map<string, Obj>();
  for (const r of records) {
    const template: Obj = {
      name: r.name,
      serverClassName: r.serverClassName,
      role: r.role,
      cloudType: r.cloudType,
      launchCPA: r.launchCPA,
      location: { id: r.locationID, name: r.locationName },
      region: r.region,
      zone: r.zone,
      securityGroup: r.securityGroup,
      instanceSize: r.instanceSize,
      usingReservedAddress: r.usingReservedAddress,
    };
    const key = JSON.stringify(template);
    const group = groups.get(key);
    if (group) group.count = (group.count as number) + 1;
    else groups.set(key, { ...template, count: 1 });
  }
  return [...groups.values()];
}

/**
 * A grid that is not deployed: templates from its repository attributes. Its servers are cut
 * into as many groups as it lists locations (or regions, or cloud types), by role first, then
 * the largest group split, and group i takes the i-th location, region and cloud type, so the
 * seeded grid's attributes read as the target's.
 */
function synthesizedServers(g: RepoObject): Obj[] {
  const list = (name: string) => (attr(g, name) ?? '').split(',').filter(Boolean);
  const locations = list('location');
  const regions = list('region');
  const cloudTypes = list('cloudType');
  const total = Number(attr(g, 'serverCount') ?? 1);
  const load = Number(attr(g, 'loadServerCount') ?? total);
  const results = Number(attr(g, 'resultsServerCount') ?? 0);
  const groups: Array<{ role: string; count: number; className: string }> = [
    { role: 'LOAD_GENERATOR', count: load, className: 'Load Server' },
    { role: 'RESULTS', count: results, className: 'Results Server' },
    { role: 'COLLECTOR', count: total - load - results, className: 'Collector' },
  ].filter((r) => Number.isSafeInteger(r.count) && r.count > 0);
  const slots = Math.min(Math.max(locations.length, regions.length, cloudTypes.length), 100);
  while (groups.length < slots) {
    let largest = 0;
    for (let i = 1; i < groups.length; i++) if (groups[i].count > groups[largest].count) largest = i;
    if (groups[largest].count < 2) break;
    groups[largest].count--;
    groups.splice(largest + 1, 0, { ...groups[largest], count: 1 });
  }
  const servers = groups.map(({ role, count, className }, i) => {
    const at = <T>(values: T[], fallback: T) => values[Math.min(i, values.length - 1)] ?? fallback;
    const cloudType = at(cloudTypes, 'EC2');
    return {
      name: `${cloudType.toLowerCase()} - ${className}`,
      serverClassName: className,
      role,
      count: Math.min(count, 1000),
      cloudType,
      launchCPA: 'unknown',
      location: { id: Math.min(i, Math.max(locations.length - 1, 0)) + 1, name: at(locations, 'unknown') },
      region: at(regions, 'unknown'),
      zone: `${at(regions, 'unknown')}a`,
      securityGroup: 'unknown',
    };
  });
  return servers.length ? servers : [{ name: 'server', serverClassName: 'Load Server', cloudType: 'EC2', launchCPA: 'unknown', location: { id: 1, name: 'unknown' }, region: 'unknown', zone: 'unknown', securityGroup: 'unknown' }];
}

/** An annotation's `user`: a user name or an address replaced; a system's name ("system", "mPulse") kept. */
function annotationUser(user: string, mask: Masker): string {
  const masked = mask.text(user);
  return masked === user && user.includes('@') ? mask.userName(user) : masked;
}

function reportText(
  options: SnapshotOptions,
  counts: Record<string, number>,
  skipped: string[],
  logIn: { userName: string; password: string },
  reader: Reader,
  mask: Masker,
): string {
  const lines = [
    '# Snapshot report',
    '',
    `Read from ${options.target.origin} in ${reader.requests} requests (${reader.bytes} bytes); written as fixtures (\`cloud-emulator check\` reads them).`,
    '',
    `Written: ${Object.entries(counts).filter(([, n]) => n).map(([name, n]) => `${n} ${name}`).join(', ') || 'nothing'}.`,
    '',
    `Replaced: ${mask.counts.emails} e-mail addresses and user names, ${mask.counts.names} person names, ${mask.counts.secrets} passwords, ${mask.counts.appKeys} app keys (the same value always the same replacement${options.maskKey === undefined ? ' within this snapshot: no --mask-key was given' : ', under the --mask-key given'}).`,
    '',
    `Log in to an emulator seeded from this folder as \`${logIn.userName}\` with the password \`${logIn.password}\` (made up: the service never shows a password).`,
    '',
    '## Not carried',
    '',
    ...(skipped.length ? skipped.map((s) => `- ${s}`) : ['- nothing']),
    '',
  ];
  return lines.join('\n');
}
