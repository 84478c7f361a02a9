// Smoke test of a running emulator from the outside, through all three interfaces and the
// control API, as a client would use them. Usage: node scripts/smoke.mjs http://127.0.0.1:8080
// Needs the demo fixtures (user demo@example.com / demo, at least one grid and one enabled alert).
import { helpIfAsked } from '../bench/help.mjs';

helpIfAsked(import.meta.url);
const base = (process.argv[2] ?? process.env.EMULATOR_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const CLOUD = `${base}/concerto/services/rest/CloudService/v1`;
const REPO = `${base}/concerto/services/rest/RepositoryService/v1`;
const RUM = `${base}/concerto/mpulse/api`;
const CONTROL = `${base}/_emulator`;

let steps = 0;
function check(condition, what, detail) {
  if (!condition) {
    process.stderr.write(`smoke: FAILED: ${what}${detail === undefined ? '' : `\n  got: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}\n`);
    process.exit(1);
  }
  steps++;
  process.stdout.write(`smoke: ok  ${what}\n`);
}

async function call(method, url, { token, body, headers = {} } = {}) {
  const res = await fetch(url, {
    method,
    headers: {
      ...(token ? { 'X-Auth-Token': token } : {}),
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

// Control API: health.
const health = await call('GET', `${CONTROL}/health`);
check(health.status === 200 && health.json?.status === 'ok', 'control: GET /_emulator/health is ok', health.text);

// Repository: log in, find objects.
const login = await call('PUT', `${REPO}/Tokens`, { body: { userName: 'demo@example.com', password: 'demo' } });
check(login.status === 200 && typeof login.json?.token === 'string', 'repository: PUT Tokens logs the demo user in', login.text);
const token = login.json.token;
const grids = await call('GET', `${REPO}/Objects/grid`, { token });
check(grids.status === 200 && grids.json?.objects?.length > 0, 'repository: GET Objects/grid finds the demo grids', grids.text);
const gridId = grids.json.objects[0].id;

// Provisioning.
const seeded = await call('GET', `${CLOUD}/grid/`, { token });
check(seeded.status === 200 && Array.isArray(seeded.json), 'provisioning: GET grid/ before any action', seeded.text);
const activeAtStart = seeded.json.length;
const unauthorized = await call('GET', `${CLOUD}/grid/`);
check(unauthorized.status === 401 && unauthorized.json?.statusCode === 401 && unauthorized.json?.message, 'provisioning: no token -> 401 with the JSON error body', unauthorized.text);
const start = await call('POST', `${CLOUD}/grid/${gridId}/action`, { token, body: { action: 'start' } });
check([200, 202].includes(start.status) && start.json?.state === 'ALLOCATING', `provisioning: start grid ${gridId} -> ALLOCATING`, start.text);
const grid = await call('GET', `${CLOUD}/grid/${gridId}`, { token });
check(grid.status === 200 && typeof grid.json?.state === 'string' && typeof grid.json?.isFinal === 'boolean', `provisioning: GET grid ${gridId}`, grid.text);
const active = await call('GET', `${CLOUD}/grid/`, { token });
check(active.status === 200 && Array.isArray(active.json) && active.json.length >= 1, 'provisioning: GET grid/ lists the started grid', active.text);
const servers = await call('GET', `${CLOUD}/cloudserver/`, { token });
check(servers.status === 200 && Array.isArray(servers.json), 'provisioning: GET cloudserver/', servers.text);
const notAllowed = await call('DELETE', `${CLOUD}/grid/${gridId}`, { token });
check(notAllowed.status === 405 && notAllowed.headers.get('allow'), 'provisioning: DELETE grid -> 405 with Allow', notAllowed.text);

// Annotations.
const now = Date.now();
const created = await call('POST', `${RUM}/annotations/v1`, { token, body: { title: 'smoke test', text: 'from the container test', start: now } });
check(created.status === 200 && Number.isInteger(created.json?.id), 'annotations: POST adds an annotation', created.text);
const id = created.json.id;
const read = await call('GET', `${RUM}/annotations/v1/${id}`, { token });
check(read.status === 200 && read.json?.title === 'smoke test' && read.json?.source === 'REST API', `annotations: GET ${id}`, read.text);
const listed = await call('GET', `${RUM}/annotations/v1?date-start=${now}&date-end=${now}`, { token });
const list = Array.isArray(listed.json) ? listed.json : listed.json?.annotations;
check(listed.status === 200 && list?.some((a) => a.id === id), 'annotations: GET list with a date filter finds it', listed.text);
const removed = await call('DELETE', `${RUM}/annotations/v1/${id}`, { token });
check(removed.status === 204, `annotations: DELETE ${id} -> 204`, removed.text);
const gone = await call('GET', `${RUM}/annotations/v1/${id}`, { token });
check(gone.status === 404, `annotations: GET ${id} after delete -> 404`, gone.text);
const notJson = await call('POST', `${RUM}/annotations/v1`, { token, headers: { 'Content-Type': 'text/plain' }, body: 'x' });
check(notJson.status === 415 || notJson.status === 400, 'annotations: POST without JSON is refused', notJson.text);

// Alerts: find an enabled one in the state export.
const state = await call('GET', `${CONTROL}/state`);
check(state.status === 200 && Array.isArray(state.json?.alerts), 'control: GET /_emulator/state exports the state', state.text.slice(0, 300));
const alert = state.json.alerts.find((a) => a.enabled !== false);
check(alert !== undefined, 'control: the state has an enabled alert', state.json.alerts);
const fired = await call('POST', `${RUM}/alerts/${encodeURIComponent(alert.uid)}/fire`, { body: { message: 'smoke', subject: 'smoke' } });
check(fired.status === 204, `alerts: fire ${alert.uid} -> 204`, fired.text);
const cleared = await call('POST', `${RUM}/alerts/${encodeURIComponent(alert.uid)}/clear`);
check(cleared.status === 204, `alerts: clear ${alert.uid} -> 204`, cleared.text);
const unknownAlert = await call('POST', `${RUM}/alerts/no-such-alert/fire`);
check(unknownAlert.status === 404, 'alerts: unknown uid -> 404', unknownAlert.text);

// Control API: reset forgets the grid started above: the active grids are the seed's again.
const reset = await call('POST', `${CONTROL}/reset`);
check(reset.status === 200, 'control: POST /_emulator/reset', reset.text);
const afterReset = await call('GET', `${CLOUD}/grid/`, { token: 'demo-token' });
check(
  afterReset.status === 200 &&
    afterReset.json?.length === activeAtStart &&
    !afterReset.json.some((g) => g.instanceId === start.json.instanceId),
  'control: after reset the started deployment is gone and the seed\'s grids are back',
  afterReset.text.slice(0, 300),
);

// Browser access from another origin, and the reference.
const preflight = await call('OPTIONS', `${CLOUD}/grid/`, {
  headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-auth-token' },
});
check(preflight.status === 204 && preflight.headers.get('access-control-allow-origin') && /x-auth-token/i.test(preflight.headers.get('access-control-allow-headers') ?? ''), 'cors: a preflight from another origin is allowed', Object.fromEntries(preflight.headers));
const openapi = await call('GET', `${CONTROL}/openapi.json`);
check(openapi.status === 200 && /^3\./.test(openapi.json?.openapi ?? ''), 'docs: GET /_emulator/openapi.json', openapi.text.slice(0, 200));
const docs = await call('GET', `${CONTROL}/docs`);
check(docs.status === 200 && /text\/html/.test(docs.headers.get('content-type') ?? ''), 'docs: GET /_emulator/docs', docs.text.slice(0, 200));

process.stdout.write(`smoke: all ${steps} checks passed against ${base}\n`);
