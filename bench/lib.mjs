// Instruments shared by the benchmark (bench/run.mjs) and the soak script (scripts/soak.mjs):
// spawning the built server, waiting for it to be healthy, reading its memory, driving load
// with autocannon, and printing a markdown table.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

/** A positive number from the environment variable `name`, or `fallback` when unset. */
export const num = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${raw}: expected a positive number`);
  return n;
};

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SERVER_ENTRY = process.env.BENCH_SERVER ?? fileURLToPath(new URL('../dist/cli/server.js', import.meta.url));
export const BASELINE_ENTRY = fileURLToPath(new URL('./baseline.mjs', import.meta.url));
export const HOST = '127.0.0.1';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port nobody listens on right now (the kernel picks it; we release it at once). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * One HTTP request on a fresh connection (no agent: a start-up probe must not reuse a socket
 * of an earlier process). Resolves with status, headers and the body as text.
 */
export function request(port, { method = 'GET', path = '/', headers = {}, body, agent = false, timeoutMs = 10_000 } = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const req = http.request(
      {
        host: HOST,
        port,
        method,
        path,
        agent,
        headers: {
          ...(payload && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type') ? { 'content-type': 'application/json' } : {}),
          ...(payload ? { 'content-length': payload.length } : {}),
          ...headers,
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Resident set size of a process, in MiB, from /proc (Linux). */
export function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
  return kb / 1024;
}

/**
 * CPU time a process has used so far (user + system), in seconds, from /proc (Linux). Unlike
 * requests per second, CPU time per request hardly depends on what else the machine runs.
 */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
/** USER_HZ: the unit of the times in /proc/<pid>/stat, 100 on every common Linux. */
const CLOCK_TICKS = 100;

/**
 * A 1 ms interval timer keeping the longest gap between its ticks: the longest block of this
 * process's event loop while it runs. `stop()` ends it and gives that gap, ms.
 */
export function loopGapWatch() {
  let last = performance.now();
  let longest = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  return {
    stop() {
      clearInterval(tick);
      return longest;
    },
  };
}

/**
 * Starts `node <entry>` with `env` on a free loopback port and resolves once `healthPath`
 * answers 200, with the time from spawn to that first healthy answer. The child's stderr is
 * kept so that a failed start can say why.
 */
export async function startProcess({ entry = SERVER_ENTRY, env = {}, nodeArgs = [], healthPath = '/_emulator/health', timeoutMs = 60_000, port } = {}) {
  port ??= await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, entry], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', LOG_LEVEL: 'silent', ...env, HOST, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-4000)));
  let exited = null;
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve((exited = { code, signal }))));
  const deadline = t0 + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`${entry} exited (${exited.code ?? exited.signal}) before it was healthy:\n${stderr}`);
    try {
      const res = await request(port, { path: healthPath, timeoutMs: 1000 });
      if (res.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${entry} was not healthy within ${timeoutMs} ms:\n${stderr}`);
    }
    await sleep(2);
  }
  const startMs = performance.now() - t0;
  return {
    child,
    port,
    pid: child.pid,
    startMs,
    exit,
    stderr: () => stderr,
    /** Ends the process: SIGTERM (graceful) by default, SIGKILL for a crash. */
    async stop(signal = 'SIGTERM') {
      if (exited) return exited;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const result = await exit;
      clearTimeout(timer);
      return result;
    },
  };
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** A true median: the middle value, or the mean of the two middle values of an even count. */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * Runs autocannon against one request and returns requests/s and latency percentiles. The
 * latencies are taken from every response with sub-millisecond resolution (autocannon's own
 * histogram rounds to whole milliseconds), and only responses with `expectStatus` count: a
 * run in which anything else came back is reported as failed instead of measured.
 */
export async function cannon({ port, pid, method = 'GET', path, headers = {}, body, duration, connections = 10, expectStatus = 200, requests }) {
  const latencies = [];
  const cpuBefore = pid ? cpuSeconds(pid) : undefined;
  const statuses = new Map();
  const instance = autocannon({
    url: `http://${HOST}:${port}`,
    connections,
    duration,
    requests: requests ?? [{ method, path, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, body }],
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
    if (statusCode === expectStatus) latencies.push(responseTime);
  });
  const result = await instance;
  const cpu = cpuBefore !== undefined ? cpuSeconds(pid) - cpuBefore : NaN;
  latencies.sort((a, b) => a - b);
  const unexpected = [...statuses].filter(([status]) => status !== expectStatus);
  return {
    rps: latencies.length / result.duration,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    count: latencies.length,
    /** Server CPU time per answered request, in microseconds. */
    cpuUs: (cpu * 1e6) / Math.max(1, latencies.length),
    errors: result.errors + result.timeouts,
    unexpected: unexpected.map(([status, n]) => `${n}x${status}`).join(', '),
  };
}

/** Merges repeated runs of one side: requests summed over time, latencies by the worse run. */
export function combine(runs) {
  const total = runs.reduce((sum, r) => sum + r.count, 0);
  return {
    rps: runs.reduce((sum, r) => sum + r.rps, 0) / runs.length,
    p50: median(runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    count: total,
    cpuUs: runs.reduce((sum, r) => sum + r.cpuUs * r.count, 0) / Math.max(1, total),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    unexpected: runs.map((r) => r.unexpected).filter(Boolean).join('; '),
  };
}

/** A markdown table; numbers are right-aligned. */
export function markdownTable(headers, rows) {
  const cells = rows.map((row) => row.map((c) => String(c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const numeric = headers.map((_, i) => cells.length > 0 && cells.every((r) => /^[-+]?[\d.,]+( ?(ms|µs|MiB|%|x|B))?$|^n\/a$/.test(r[i])));
  const line = (row) => `| ${row.map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (numeric[i] ? `${'-'.repeat(w + 1)}:` : `${'-'.repeat(w + 2)}`)).join('|')}|`;
  return [line(headers), rule, ...cells.map(line)].join('\n');
}

export const fmt = {
  int: (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a'),
  ms: (n) => (Number.isFinite(n) ? `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms` : 'n/a'),
  us: (n) => (Number.isFinite(n) ? `${Math.round(n)} µs` : 'n/a'),
  mib: (n) => (Number.isFinite(n) ? `${n.toFixed(1)} MiB` : 'n/a'),
  pct: (n) => (Number.isFinite(n) ? `${Math.round(n * 100)}%` : 'n/a'),
  x: (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : 'n/a'),
};

/** The machine a run comes from, for the results file. */
export function machine() {
  let cpu = 'unknown CPU';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu;
  } catch {
    // Not Linux.
  }
  let memory = '';
  try {
    const kb = Number(/^MemTotal:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]);
    memory = `${Math.round(kb / 1024 / 1024)} GiB RAM`;
  } catch {
    // Not Linux.
  }
  return { cpu, cores: os.availableParallelism(), memory, node: process.version, platform: `${process.platform} ${process.arch}` };
}
