import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { literals } from './core/schema.js';
import { packageRoot } from './core/package-root.cjs';
import { didYouMean } from './core/suggest.js';

/** The bundled demo seed, in the package folder. */
export const BUNDLED_FIXTURES_DIR = join(packageRoot(), 'fixtures');

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** How sandboxes are made (SANDBOXES); see world/sandboxes.ts. */
export const SANDBOX_MODES = ['auto', 'explicit', 'off'] as const;

/**
 * Every setting, with the environment variable it comes from (`env`), its default and a
 * description. This one schema drives validation, `--help`, and the table of
 * docs/configuration.md.
 */
export const ConfigSchema = Type.Object({
  port: Type.Integer({ env: 'PORT', flag: 'port', minimum: 0, maximum: 65535, default: 8080, description: 'TCP port to listen on (0 picks a free one)' }),
  host: Type.String({ env: 'HOST', flag: 'host', minLength: 1, default: '127.0.0.1', description: 'address to listen on (0.0.0.0 in a container)' }),
  logLevel: literals(LOG_LEVELS, { env: 'LOG_LEVEL', flag: 'log-level', default: 'info', description: 'pino log level' }),
  fixturesDir: Type.String({ env: 'FIXTURES_DIR', flag: 'fixtures', minLength: 1, default: BUNDLED_FIXTURES_DIR, description: 'folder of fixture JSON files to seed from (default: the bundled demo seed)' }),
  watch: Type.Boolean({ env: 'WATCH', flag: 'watch', default: false, description: 'reload the fixtures folder when its files change (debounced): the default world is reset to the new seed, new sandboxes start from it; a broken edit keeps the last good seed and shows its problems in the log and in GET /_emulator/health' }),
  watchPollMs: Type.Integer({ env: 'WATCH_POLL_MS', flag: 'watch-poll-ms', minimum: 0, default: 0, description: 'with WATCH, also poll the fixtures folder this often (ms), for folders whose changes raise no file events (bind mounts in containers, network file systems); 0: events only' }),
  watchReloadTimeoutMs: Type.Integer({ env: 'WATCH_RELOAD_TIMEOUT_MS', flag: 'watch-reload-timeout-ms', minimum: 1, default: 60_000, description: 'with WATCH, how long reading and checking the fixtures folder may take before that reload is given up (the last good seed is kept, the watch goes on)' }),
  seedClock: literals(['real', 'keep'] as const, { env: 'SEED_CLOCK', flag: 'seed-clock', default: 'real', description: "a seed that is an export (it has a clock): real loads it on real time, its emulated times moved to keep their ages; keep sets the clock to the export's" }),
  timeScale: Type.Number({ env: 'TIME_SCALE', flag: 'time-scale', minimum: 0, default: 1, description: 'multiplies every lifecycle duration; 0 makes every transition immediate' }),
  tokenIdleTimeoutMs: Type.Integer({ env: 'TOKEN_IDLE_TIMEOUT_MS', flag: 'token-idle-timeout-ms', minimum: 1, default: 5 * 60 * 60 * 1000, description: 'a session token expires after this long without use (emulated time)' }),
  repositoryMaxBytes: Type.Integer({ env: 'REPOSITORY_MAX_BYTES', flag: 'repository-max-bytes', minimum: 0, default: 16 * 1024 * 1024, description: 'most bytes (as JSON) of repository objects stored through the Objects calls, per world; a create or update past it answers 503' }),
  repositoryProcessMaxBytes: Type.Integer({ env: 'REPOSITORY_PROCESS_MAX_BYTES', flag: 'repository-process-max-bytes', minimum: 0, default: 64 * 1024 * 1024, description: 'most bytes of repository objects the Objects calls add (their JSON, 256 more an object), all worlds together (the seeds not counted); a create or update past it answers 507' }),
  alertTextMaxBytes: Type.Integer({ env: 'ALERT_TEXT_MAX_BYTES', flag: 'alert-text-max-bytes', minimum: 1, default: 8 * 1024, description: "longest message, and longest subject, of an alert fire (UTF-8 bytes); a longer one answers 400" }),
  alertHistoryWorldMaxBytes: Type.Integer({ env: 'ALERT_HISTORY_WORLD_MAX_BYTES', flag: 'alert-history-world-max-bytes', minimum: 0, default: 8 * 1024 * 1024, description: "most bytes the alerts' fire and clear histories of one world grow by (messages, subjects, 192 a record); a fire or clear past it answers 507" }),
  alertHistoryMaxBytes: Type.Integer({ env: 'ALERT_HISTORY_MAX_BYTES', flag: 'alert-history-max-bytes', minimum: 0, default: 32 * 1024 * 1024, description: 'the same, all worlds together; a fire or clear past it answers 507' }),
  deliveriesWorldMaxBytes: Type.Integer({ env: 'DELIVERIES_WORLD_MAX_BYTES', flag: 'deliveries-world-max-bytes', minimum: 0, default: 4 * 1024 * 1024, description: "most bytes of one world's outbox of alert deliveries (payload, target, 1,568 a delivery); the oldest finished ones make room, and a fire or clear whose deliveries still do not fit answers 507" }),
  deliveriesMaxBytes: Type.Integer({ env: 'DELIVERIES_MAX_BYTES', flag: 'deliveries-max-bytes', minimum: 0, default: 16 * 1024 * 1024, description: 'bytes the outboxes of every world grow by together at most; a fire or clear past it answers 507' }),
  deliveryAllowHosts: Type.Optional(Type.String({ env: 'DELIVERY_ALLOW_HOSTS', flag: 'delivery-allow-hosts', minLength: 1, description: 'comma-separated host names and addresses that webhook, slack and pagerduty deliveries are POSTed to for real (a name resolving to a loopback or private address only if that address is listed too); absent: nothing is sent, deliveries stay in the outbox' })),
  deliveryTimeoutMs: Type.Integer({ env: 'DELIVERY_TIMEOUT_MS', flag: 'delivery-timeout-ms', minimum: 1, default: 5000, description: 'real time a delivery attempt (an HTTP POST, an SMTP exchange) may take before it counts as failed and is retried' }),
  deliveryLinkBase: Type.Optional(Type.String({ env: 'DELIVERY_LINK_BASE', flag: 'delivery-link-base', minLength: 1, description: "the emulator's URL as receivers reach it, for the alert link in each delivery; absent: http://localhost:<PORT>" })),
  smtpUrl: Type.Optional(Type.String({ env: 'SMTP_URL', flag: 'smtp-url', minLength: 1, description: 'SMTP server that e-mail deliveries are sent through (smtp://host:port, smtps://user:pass@host); absent: e-mail stays in the outbox' })),
  smtpFrom: Type.String({ env: 'SMTP_FROM', flag: 'smtp-from', minLength: 1, default: 'mPulse Alerts <alerts@cloud-emulator.invalid>', description: 'the From of e-mail deliveries' }),
  annotationsWorldMax: Type.Integer({ env: 'ANNOTATIONS_WORLD_MAX', flag: 'annotations-world-max', minimum: 0, default: 10_000, description: 'most annotations created through the interface that one world holds (the seed not counted); one more answers 507' }),
  annotationsWorldMaxBytes: Type.Integer({ env: 'ANNOTATIONS_WORLD_MAX_BYTES', flag: 'annotations-world-max-bytes', minimum: 0, default: 16 * 1024 * 1024, description: 'most bytes creates and updates add to the annotations of one world (title, text, user, 8 a domain id, 384 an annotation); past it they answer 507' }),
  annotationsMaxBytes: Type.Integer({ env: 'ANNOTATIONS_MAX_BYTES', flag: 'annotations-max-bytes', minimum: 0, default: 64 * 1024 * 1024, description: 'the same, all worlds together; past it creates and updates answer 507' }),
  queryCacheMaxBytes: Type.Integer({ env: 'QUERY_CACHE_MAX_BYTES', flag: 'query-cache-max-bytes', minimum: 0, default: 16 * 1024 * 1024, description: "bytes of worked-out Query API blocks kept for reuse, all worlds together; the least recently used make room" }),
  rateLimitMax: Type.Integer({ env: 'RATE_LIMIT_MAX', flag: 'rate-limit-max', minimum: 1, default: 100, description: 'annotation and Query API requests per user and world, and alert calls per alert uid, per window' }),
  rateLimitWindowMs: Type.Integer({ env: 'RATE_LIMIT_WINDOW_MS', flag: 'rate-limit-window-ms', minimum: 1, default: 60_000, description: 'rate-limit window' }),
  annotationsListWrapped: Type.Boolean({ env: 'ANNOTATIONS_LIST_WRAPPED', flag: 'annotations-list-wrapped', default: false, description: 'answer the annotation list as {"annotations":[...]} (the real service) instead of a bare array (the spec)' }),
  alertsRequireToken: Type.Boolean({ env: 'ALERTS_REQUIRE_TOKEN', flag: 'alerts-require-token', default: false, description: 'require X-Auth-Token on alert fire/clear' }),
  adminToken: Type.Optional(Type.String({ env: 'ADMIN_TOKEN', flag: 'admin-token', minLength: 1, description: 'when set, /_emulator (except health) needs Authorization: Bearer <token>' })),
  stateFile: Type.Optional(Type.String({ env: 'STATE_FILE', flag: 'state-file', minLength: 1, description: 'persist the state to this file (loaded at start, written atomically)' })),
  stateFlushIntervalMs: Type.Integer({ env: 'STATE_FLUSH_INTERVAL_MS', flag: 'state-flush-interval-ms', minimum: 0, default: 5000, description: 'how often the state file is written; 0 writes on shutdown only' }),
  stateFileMaxBytes: Type.Integer({ env: 'STATE_FILE_MAX_BYTES', flag: 'state-file-max-bytes', minimum: 1, default: 256 * 1024 * 1024, description: 'largest state file written; a write that would pass it is given up (a warning is logged, the last good file kept, health is degraded until a smaller write)' }),
  stateFileWorldMaxBytes: Type.Integer({ env: 'STATE_FILE_WORLD_MAX_BYTES', flag: 'state-file-world-max-bytes', minimum: 1, default: 128 * 1024 * 1024, description: 'largest state of one world (the default one or a sandbox) in the state file; a write that would pass it is given up (a warning names the world, the last good file is kept)' }),
  stateFileSandboxes: literals(['keep', 'drop'] as const, { env: 'STATE_FILE_SANDBOXES', flag: 'state-file-sandboxes', default: 'keep', description: 'keep: a state file whose sandboxes cannot be loaded (SANDBOXES=off, an invalid name) stops the start; drop: they are left out, with a warning, and the next write removes them' }),
  importQueueMax: Type.Integer({ env: 'IMPORT_QUEUE_MAX', flag: 'import-queue-max', minimum: 1, default: 4, description: 'large state imports (PUT /_emulator/state, a sandbox PUT with a state) waiting or being read at once, across all worlds; one more answers 503 with Retry-After' }),
  importQueueMaxBytes: Type.Integer({ env: 'IMPORT_QUEUE_MAX_BYTES', flag: 'import-queue-max-bytes', minimum: 1, default: 128 * 1024 * 1024, description: 'bytes of those imports together; one more that would pass it answers 503 with Retry-After' }),
  journalSize: Type.Integer({ env: 'JOURNAL_SIZE', flag: 'journal-size', minimum: 0, default: 1000, description: 'how many requests the request journal keeps' }),
  journalBodyLimitBytes: Type.Integer({ env: 'JOURNAL_BODY_LIMIT_BYTES', flag: 'journal-body-limit-bytes', minimum: 0, default: 64 * 1024, description: 'the journal keeps this much of each request body (longer ones are cut, with a marker); 0 keeps none' }),
  journalHeaderLimitBytes: Type.Integer({ env: 'JOURNAL_HEADER_LIMIT_BYTES', flag: 'journal-header-limit-bytes', minimum: 0, default: 8 * 1024, description: 'the journal keeps the headers of each request up to this many bytes (the rest are left out, and the entry says so)' }),
  journalWorldMaxBytes: Type.Integer({ env: 'JOURNAL_WORLD_MAX_BYTES', flag: 'journal-world-max-bytes', minimum: 0, default: 16 * 1024 * 1024, description: 'bytes the journal of one world (the default one or a sandbox) holds at most; the oldest entries make room' }),
  journalMaxBytes: Type.Integer({ env: 'JOURNAL_MAX_BYTES', flag: 'journal-max-bytes', minimum: 0, default: 64 * 1024 * 1024, description: 'bytes the journals of every world hold together at most' }),
  corsOrigins: Type.String({ env: 'CORS_ORIGINS', flag: 'cors-origins', minLength: 1, default: '*', description: "allowed browser origins: '*' or a comma-separated list" }),
  corsAllowHeaders: Type.Optional(Type.String({ env: 'CORS_ALLOW_HEADERS', flag: 'cors-allow-headers', minLength: 1, description: "request headers a preflight allows, comma-separated; absent: whatever the preflight asks for (Access-Control-Request-Headers)" })),
  corsCredentials: Type.Boolean({ env: 'CORS_CREDENTIALS', flag: 'cors-credentials', default: false, description: "answer listed origins with Access-Control-Allow-Credentials: true (fetch's credentials: 'include'); needs CORS_ORIGINS to list origins" }),
  bodyLimitBytes: Type.Integer({ env: 'BODY_LIMIT_BYTES', flag: 'body-limit-bytes', minimum: 1, default: 1024 * 1024, description: 'largest request body accepted (larger: 413)' }),
  requestTimeoutMs: Type.Integer({ env: 'REQUEST_TIMEOUT_MS', flag: 'request-timeout-ms', minimum: 1, default: 30_000, description: 'a request, headers and body, must arrive in full within this; else 408 and the connection is closed' }),
  keepAliveTimeoutMs: Type.Integer({ env: 'KEEP_ALIVE_TIMEOUT_MS', flag: 'keep-alive-timeout-ms', minimum: 1, default: 72_000, description: 'a kept-alive connection with no request for this long is closed' }),
  connectionTimeoutMs: Type.Integer({ env: 'CONNECTION_TIMEOUT_MS', flag: 'connection-timeout-ms', minimum: 0, default: 600_000, description: 'a connection with no traffic either way for this long is closed, even while a fault latency holds its answer; 0 never' }),
  exitWithParent: Type.Boolean({ env: 'EXIT_WITH_PARENT', flag: 'exit-with-parent', default: true, description: "when the process that started this one ends (unless that was init), close as on SIGTERM: stopping npx or a test runner's setup stops the server too; off for a server meant to outlive its starter (nohup, a shell's &). The process only, as SHUTDOWN_GRACE_MS" }),
  shutdownGraceMs: Type.Integer({ env: 'SHUTDOWN_GRACE_MS', flag: 'shutdown-grace-ms', minimum: 0, default: 5000, description: 'on SIGTERM/SIGINT, how long requests in flight may still finish before their connections are closed and the state file is written' }),
  eventsBufferSize: Type.Integer({ env: 'EVENTS_BUFFER_SIZE', flag: 'events-buffer-size', minimum: 0, default: 1000, description: 'events of each world kept for a client that resumes the event stream (Last-Event-ID); 0 keeps none' }),
  eventsBufferMaxBytes: Type.Integer({ env: 'EVENTS_BUFFER_MAX_BYTES', flag: 'events-buffer-max-bytes', minimum: 1, default: 4 * 1024 * 1024, description: 'bytes of those events at most, per world; the oldest make room' }),
  eventsClientMaxBytes: Type.Integer({ env: 'EVENTS_CLIENT_MAX_BYTES', flag: 'events-client-max-bytes', minimum: 1, default: 1024 * 1024, description: 'an event-stream client with more than this many bytes not yet read is dropped' }),
  eventsHeartbeatMs: Type.Integer({ env: 'EVENTS_HEARTBEAT_MS', flag: 'events-heartbeat-ms', minimum: 0, default: 15_000, description: 'an event stream sends a heartbeat comment this often (real time), so that proxies keep it open; 0 sends none' }),
  eventsMaxStreams: Type.Integer({ env: 'EVENTS_MAX_STREAMS', flag: 'events-max-streams', minimum: 0, default: 100, description: 'event streams open at once on one world; one more answers 503' }),
  eventsMaxStreamsTotal: Type.Integer({ env: 'EVENTS_MAX_STREAMS_TOTAL', flag: 'events-max-streams-total', minimum: 0, default: 1000, description: 'event streams open at once across all worlds; one more answers 503' }),
  eventsReservedStreams: Type.Integer({ env: 'EVENTS_RESERVED_STREAMS', flag: 'events-reserved-streams', minimum: 0, default: 100, description: "of EVENTS_MAX_STREAMS_TOTAL, event streams kept for the default world (the dashboard, the client's waitFor): sandboxes together open at most the total less this many; one more answers 503" }),
  sandboxes: literals(SANDBOX_MODES, { env: 'SANDBOXES', flag: 'sandboxes', default: 'auto', description: 'isolated worlds under /sandbox/<name>/: auto creates one on its first request that passes its checks, explicit only by PUT /_emulator/sandboxes/<name>, off does not serve the prefix' }),
  maxSandboxes: Type.Integer({ env: 'MAX_SANDBOXES', flag: 'max-sandboxes', minimum: 0, default: 100, description: 'most sandboxes at once (the default world not counted); one more answers 503' }),
  sandboxIdleTimeoutMs: Type.Integer({ env: 'SANDBOX_IDLE_TIMEOUT_MS', flag: 'sandbox-idle-timeout-ms', minimum: 0, default: 30 * 60 * 1000, description: 'a sandbox nobody used for this long (real time) is removed; 0 keeps them' }),
});
export type Config = Static<typeof ConfigSchema>;
export type ConfigKey = keyof Config;

export interface SettingInfo {
  key: ConfigKey;
  env: string;
  flag: string;
  description: string;
  default: unknown;
  schema: TSchema;
}

export const SETTINGS: SettingInfo[] = Object.entries(ConfigSchema.properties).map(([key, schema]) => {
  const s = schema as unknown as TSchema & { env: string; flag: string; description: string; default?: unknown };
  return { key: key as ConfigKey, env: s.env, flag: s.flag, description: s.description, default: s.default, schema: s };
});

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function expected(schema: TSchema): string {
  if (schema.anyOf) return `one of ${schema.anyOf.map((s: TSchema) => s.const).join(', ')}`;
  const range = [
    schema.minimum !== undefined ? `>= ${schema.minimum}` : '',
    schema.maximum !== undefined ? `<= ${schema.maximum}` : '',
  ].filter(Boolean);
  if (schema.type === 'boolean') return 'true or false';
  if (schema.type === 'string') return 'a non-empty string';
  return `${schema.type === 'integer' ? 'an integer' : 'a number'}${range.length ? ` ${range.join(' and ')}` : ''}`;
}

function convert(schema: TSchema, raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  const text = raw.trim();
  if (schema.type === 'boolean') {
    if (/^(true|1|yes|on)$/i.test(text)) return true;
    if (/^(false|0|no|off)$/i.test(text)) return false;
    return raw;
  }
  if ((schema.type === 'integer' || schema.type === 'number') && text !== '') {
    const n = Number(text);
    return Number.isNaN(n) ? raw : n;
  }
  return raw;
}

/** Settings loadConfig produced: passed on as they are, never resolved a second time. */
const RESOLVED = new WeakSet<object>();

/** The settings as given if loadConfig already resolved them, else resolved now (defaults filled in). */
export function resolveConfig(config: Partial<Config> | Config = {}): Config {
  return RESOLVED.has(config) ? (config as Config) : loadConfig({}, config);
}

/**
 * Precedence: an explicit option (command line, buildApp caller) > the environment > the
 * default. Every bad value is reported at once, so one start shows everything to fix.
 */
const SETTING_KEYS: ReadonlySet<string> = new Set(SETTINGS.map((s) => s.key));

export function loadConfig(
  env: Record<string, string | undefined> = {},
  overrides: Partial<Record<ConfigKey, unknown>> = {},
): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const setting of SETTINGS) {
    const fromOption = overrides[setting.key];
    const fromEnv = env[setting.env];
    const raw = fromOption !== undefined ? fromOption : fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
    if (raw === undefined) {
      if (setting.default !== undefined) out[setting.key] = setting.default;
      continue;
    }
    const value = convert(setting.schema, raw);
    if (!Value.Check(setting.schema, value)) {
      const source = fromOption !== undefined ? `--${setting.flag}` : setting.env;
      problems.push(`${source}=${JSON.stringify(raw)}: expected ${expected(setting.schema)}`);
      continue;
    }
    out[setting.key] = value;
  }
  // An option no setting has (a typo such as timescale for timeScale) is refused, never ignored.
  for (const key of Object.keys(overrides)) {
    if (!SETTING_KEYS.has(key)) problems.push(`unknown option '${key}'${didYouMean(key, [...SETTING_KEYS])}`);
  }
  // A browser refuses credentials with a wildcard origin; answering every origin with them instead would let any page act as the user.
  if (out.corsCredentials === true && String(out.corsOrigins).split(',').some((o) => o.trim() === '*')) {
    problems.push("CORS_CREDENTIALS=true needs CORS_ORIGINS to list the origins (it is '*')");
  }
  if (problems.length) throw new ConfigError(problems);
  RESOLVED.add(out);
  return out as Config;
}

/** The package's version, read once from its package.json. */
let packageVersion: string | undefined;
export function version(): string {
  packageVersion ??= (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  return packageVersion;
}
