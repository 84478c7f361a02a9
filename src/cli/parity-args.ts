import { didYouMean } from '../core/suggest.js';
import { UsageError } from './args.js';
import { DEFAULT_RECORDED_BODY_MAX_BYTES, DEFAULT_RECORDING_MAX_BYTES } from './record.js';
import { DEFAULT_SNAPSHOT_MAX_BYTES, DEFAULT_SNAPSHOT_MAX_OBJECTS, DEFAULT_SNAPSHOT_TIMEOUT_MS, type SnapshotOptions } from './snapshot.js';

/** The command lines of `record` and `verify` (see docs/parity.md). */

export interface RecordCommand {
  kind: 'record';
  target: URL;
  out: string;
  port: number;
  host: string;
  allowWrites: boolean;
  maxBytes: number;
  maxBodyBytes: number;
}

export interface VerifyCommand {
  kind: 'verify';
  recording: string;
  url?: string;
  fixtures?: string;
  ignore?: string;
  markdown?: string;
  junit?: string;
  token?: string;
  adminToken?: string;
}

/** Default port of the recorder: beside the emulator's 8080. */
export const DEFAULT_RECORD_PORT = 8081;

type Spec = Record<string, 'value' | 'flag'>;

const RECORD_OPTIONS: Spec = { target: 'value', out: 'value', port: 'value', host: 'value', 'allow-writes': 'flag', 'max-bytes': 'value', 'max-body-bytes': 'value' };
const VERIFY_OPTIONS: Spec = { url: 'value', fixtures: 'value', ignore: 'value', markdown: 'value', junit: 'value', token: 'value', 'admin-token': 'value' };

/** `--name value`, `--name=value` and bare flags, for the options in `spec`; the rest are positional. */
function readOptions(command: string, argv: readonly string[], spec: Spec): { options: Map<string, string | true>; positional: string[] } {
  const options = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--') || arg === '--') {
      if (arg.startsWith('-') && arg !== '-' && arg !== '--') throw new UsageError(`${command}: unknown option '${arg}' (see --help)`);
      if (arg !== '--') positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const kind = spec[name];
    if (!kind) {
      const near = didYouMean(name, Object.keys(spec)).replace("'", "'--");
      throw new UsageError(`${command}: unknown option '--${name}'${near} (see --help)`);
    }
    if (kind === 'flag') {
      if (eq !== -1) throw new UsageError(`${command}: option '--${name}' takes no value`);
      options.set(name, true);
    } else if (eq !== -1) {
      options.set(name, arg.slice(eq + 1));
    } else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && next.length > 2)) throw new UsageError(`${command}: option '--${name}' needs a value`);
      options.set(name, next);
      i++;
    }
  }
  return { options, positional };
}

function text(options: Map<string, string | true>, name: string, command: string): string | undefined {
  const value = options.get(name);
  if (value === undefined) return undefined;
  if (value === true || value === '') throw new UsageError(`${command}: option '--${name}' needs a value`);
  return value;
}

function integer(options: Map<string, string | true>, name: string, command: string, fallback: number, min: number, max: number): number {
  const value = text(options, name, command);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${command}: option '--${name}' must be an integer from ${min} to ${max}, got '${value}'`);
  }
  return n;
}

/** `record --target <base URL> [--out FILE] [--port N] [--host H] [--allow-writes] [--max-bytes N] [--max-body-bytes N]`. */
export function parseRecordArgs(argv: readonly string[]): RecordCommand {
  const { options, positional } = readOptions('record', argv, RECORD_OPTIONS);
  if (positional.length) throw new UsageError(`record: unexpected argument '${positional[0]}' (the target is given as --target <base URL>)`);
  const targetText = text(options, 'target', 'record');
  if (targetText === undefined) throw new UsageError("record: option '--target' is required: the base URL of the service to record, e.g. --target https://service.example.com");
  let target: URL;
  try {
    target = new URL(targetText);
  } catch {
    throw new UsageError(`record: option '--target' must be an http or https URL, got '${targetText}'`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new UsageError(`record: option '--target' must be an http or https URL, got '${targetText}'`);
  if (target.search || target.hash) throw new UsageError(`record: option '--target' is a base URL: no query or fragment, got '${targetText}'`);
  return {
    kind: 'record',
    target,
    out: text(options, 'out', 'record') ?? 'recording.jsonl',
    port: integer(options, 'port', 'record', DEFAULT_RECORD_PORT, 0, 65535),
    host: text(options, 'host', 'record') ?? '127.0.0.1',
    allowWrites: options.get('allow-writes') === true,
    maxBytes: integer(options, 'max-bytes', 'record', DEFAULT_RECORDING_MAX_BYTES, 1, Number.MAX_SAFE_INTEGER),
    maxBodyBytes: integer(options, 'max-body-bytes', 'record', DEFAULT_RECORDED_BODY_MAX_BYTES, 0, 1024 * 1024 * 1024),
  };
}

/** `verify <recording> (--url <base URL> | --fixtures DIR) [--ignore FILE] [--markdown FILE] [--junit FILE] [--token T] [--admin-token T]`. */
export function parseVerifyArgs(argv: readonly string[]): VerifyCommand {
  const { options, positional } = readOptions('verify', argv, VERIFY_OPTIONS);
  if (positional.length === 0) throw new UsageError('verify: which recording? cloud-emulator verify <recording> (--url <emulator URL> or --fixtures <dir>)');
  if (positional.length > 1) throw new UsageError(`verify: takes one recording, got: ${positional.join(' ')}`);
  const url = text(options, 'url', 'verify');
  const fixtures = text(options, 'fixtures', 'verify');
  if (url === undefined && fixtures === undefined) throw new UsageError("verify: option '--url' (a running emulator) or '--fixtures' (a folder to start one from) is required");
  if (url !== undefined && fixtures !== undefined) throw new UsageError("verify: options '--url' and '--fixtures' exclude each other: give one");
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw new UsageError(`verify: option '--url' must be an http or https URL, got '${url}'`);
  }
  return {
    kind: 'verify',
    recording: positional[0],
    url,
    fixtures,
    ignore: text(options, 'ignore', 'verify'),
    markdown: text(options, 'markdown', 'verify'),
    junit: text(options, 'junit', 'verify'),
    token: text(options, 'token', 'verify'),
    adminToken: text(options, 'admin-token', 'verify'),
  };
}

/** The snapshot's options as the command line gives them: its bounds always set (their defaults when not given). */
export type SnapshotCommand = { kind: 'snapshot' } & SnapshotOptions & Required<Pick<SnapshotOptions, 'maxObjects' | 'maxBytes' | 'timeoutMs'>>;

const SNAPSHOT_OPTIONS: Spec = {
  target: 'value',
  out: 'value',
  user: 'value',
  password: 'value',
  'api-token': 'value',
  tenant: 'value',
  'mask-key': 'value',
  'max-objects': 'value',
  'max-bytes': 'value',
  'timeout-ms': 'value',
};

/**
 * `snapshot --target <base URL> --out DIR (--user NAME [--password P] | --api-token T) [--tenant T] [--mask-key K]
 * [--max-objects N] [--max-bytes N] [--timeout-ms N]`. The password, API token and mask key may come from the
 * environment instead (SNAPSHOT_PASSWORD, SNAPSHOT_API_TOKEN, SNAPSHOT_MASK_KEY), so they stay out of the process list.
 */
export function parseSnapshotArgs(argv: readonly string[], env: Record<string, string | undefined> = {}): SnapshotCommand {
  const { options, positional } = readOptions('snapshot', argv, SNAPSHOT_OPTIONS);
  if (positional.length) throw new UsageError(`snapshot: unexpected argument '${positional[0]}' (the target is given as --target <base URL>, the folder as --out <dir>)`);
  const targetText = text(options, 'target', 'snapshot');
  if (targetText === undefined) throw new UsageError("snapshot: option '--target' is required: the base URL of the service to read, e.g. --target https://service.example.com");
  let target: URL;
  try {
    target = new URL(targetText);
  } catch {
    throw new UsageError(`snapshot: option '--target' must be an http or https URL, got '${targetText}'`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new UsageError(`snapshot: option '--target' must be an http or https URL, got '${targetText}'`);
  if (target.search || target.hash) throw new UsageError(`snapshot: option '--target' is a base URL: no query or fragment, got '${targetText}'`);
  const out = text(options, 'out', 'snapshot');
  if (out === undefined) throw new UsageError("snapshot: option '--out' is required: the folder to write the fixtures to");
  const userName = text(options, 'user', 'snapshot');
  const password = text(options, 'password', 'snapshot') ?? (env.SNAPSHOT_PASSWORD || undefined);
  const apiToken = text(options, 'api-token', 'snapshot') ?? (env.SNAPSHOT_API_TOKEN || undefined);
  if (apiToken !== undefined && (userName !== undefined || text(options, 'password', 'snapshot') !== undefined)) {
    throw new UsageError("snapshot: give either '--user' and '--password', or '--api-token', not both");
  }
  if (apiToken === undefined && (userName === undefined || password === undefined)) {
    throw new UsageError(
      "snapshot: the log-in needs '--user' and '--password' (or SNAPSHOT_PASSWORD in the environment), or '--api-token' (or SNAPSHOT_API_TOKEN), as the Repository service's log-in takes them",
    );
  }
  return {
    kind: 'snapshot',
    target,
    out,
    userName: apiToken === undefined ? userName : undefined,
    password: apiToken === undefined ? password : undefined,
    apiToken,
    tenant: text(options, 'tenant', 'snapshot'),
    maskKey: text(options, 'mask-key', 'snapshot') ?? (env.SNAPSHOT_MASK_KEY || undefined),
    maxObjects: integer(options, 'max-objects', 'snapshot', DEFAULT_SNAPSHOT_MAX_OBJECTS, 1, 1_000_000),
    maxBytes: integer(options, 'max-bytes', 'snapshot', DEFAULT_SNAPSHOT_MAX_BYTES, 1, Number.MAX_SAFE_INTEGER),
    timeoutMs: integer(options, 'timeout-ms', 'snapshot', DEFAULT_SNAPSHOT_TIMEOUT_MS, 1, 3_600_000),
  };
}
