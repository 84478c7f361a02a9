// Part `sandboxes` of `npm run soak`: with ADMIN_TOKEN set, a spray of requests without
// credentials to new sandbox names, in every area (control API, a token path with and
// without a made-up token, health, log-in, alerts, the pages, an unknown path), some names
// sent again and again as a sprayer keeping them alive would. None may make a sandbox: the
// list stays empty and the admin's own PUT /_emulator/sandboxes/<name> answers 201.
//
// Environment: SOAK_SANDBOX_NAMES (default 500 names), SOAK_SANDBOX_MAX (MAX_SANDBOXES, 20).
import http from 'node:http';
import { HOST, num, startProcess } from '../../bench/lib.mjs';

const CLOUD = '/concerto/services/rest/CloudService/v1';
const REPO = '/concerto/services/rest/RepositoryService/v1';
const ALERTS = '/concerto/mpulse/api/alerts';

/** One request per area, without credentials, under /sandbox/<name>. */
const requests = (name) => [
  ['GET', `/sandbox/${name}/_emulator/clock`, {}],
  ['POST', `/sandbox/${name}/_emulator/reset`, { authorization: 'Bearer guess' }],
  ['GET', `/sandbox/${name}${CLOUD}/grid/101`, {}],
  ['GET', `/sandbox/${name}${CLOUD}/grid/101`, { 'x-auth-token': 'guess' }],
  ['GET', `/sandbox/${name}/_emulator/health`, {}],
  ['PUT', `/sandbox/${name}${REPO}/Tokens`, { 'content-type': 'application/json' }, '{"userName":"demo@example.com","password":"demo"}'],
  ['POST', `/sandbox/${name}${ALERTS}/demo-alert/fire`, {}],
  ['GET', `/sandbox/${name}/_emulator/ui/`, {}],
  ['GET', `/sandbox/${name}/nowhere`, {}],
];

export async function sandboxes({ log = (m) => process.stderr.write(`${m}\n`) } = {}) {
  const names = Math.round(num('SOAK_SANDBOX_NAMES', 500));
  const max = Math.round(num('SOAK_SANDBOX_MAX', 20));
  const admin = 'soak-admin';
  const failures = [];
  const server = await startProcess({ env: { ADMIN_TOKEN: admin, MAX_SANDBOXES: String(max), SANDBOXES: 'auto', RATE_LIMIT_MAX: '1000000000' } });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const call = (method, path, headers = {}, body) =>
    new Promise((resolve) => {
      const req = http.request({ host: HOST, port: server.port, method, path, agent, headers: body ? { ...headers, 'content-length': Buffer.byteLength(body) } : headers }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', (err) => resolve({ status: 0, text: err.message }));
      req.end(body);
    });
  try {
    const statuses = new Map();
    let sent = 0;
    const t0 = performance.now();
    // Every name once, then the first ten again and again: a sprayer keeping its names alive.
    const order = [...Array.from({ length: names }, (_, i) => `spray-${i}`), ...Array.from({ length: 10 * 20 }, (_, i) => `spray-${i % 10}`)];
    for (let i = 0; i < order.length; i += 8) {
      const batch = order.slice(i, i + 8).flatMap((name) => requests(name));
      const answers = await Promise.all(batch.map(([method, path, headers, body]) => call(method, path, headers, body)));
      for (const { status } of answers) {
        sent++;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status < 400 || status >= 500) failures.push(`a request without credentials got ${status}`);
      }
    }
    const ms = Math.round(performance.now() - t0);
    const list = JSON.parse((await call('GET', '/_emulator/sandboxes', { authorization: `Bearer ${admin}` })).text);
    const put = await call('PUT', '/_emulator/sandboxes/legit-worker', { authorization: `Bearer ${admin}` });
    const counts = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${n} x ${s}`).join(', ');
    log(`  ${sent} requests without credentials to ${names} new sandbox names in ${ms} ms: ${counts}`);
    log(`  sandboxes afterwards: ${list.sandboxes.length} of MAX_SANDBOXES ${list.max}; the admin's PUT /_emulator/sandboxes/legit-worker: ${put.status}`);
    if (list.sandboxes.length !== 0) failures.push(`${list.sandboxes.length} sandboxes were made by requests without credentials`);
    if (put.status !== 201) failures.push(`the admin's PUT answered ${put.status}: ${put.text.slice(0, 200)}`);
    if (server.child.exitCode !== null) failures.push(`the server exited: ${server.stderr()}`);
  } finally {
    agent.destroy();
    await server.stop();
  }
  const kinds = [...new Set(failures)];
  log(kinds.length ? `sandboxes: FAILED\n${kinds.slice(0, 10).map((f) => `  ${f}`).join('\n')}` : 'sandboxes: OK');
  return kinds.length === 0;
}
