import type { TSchema } from '@sinclair/typebox';
import { BUNDLED_FIXTURES_DIR, SETTINGS, version, type ConfigKey, type SettingInfo } from '../config.js';
import { didYouMean } from '../core/suggest.js';
import { INTERFACES } from '../interfaces.js';
import { PATHS } from '../http/paths.js';

/** A command line the program cannot act on: the message is shown as is, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type Command =
  | { kind: 'serve'; overrides: Partial<Record<ConfigKey, string | boolean>> }
  | { kind: 'check'; overrides: Partial<Record<ConfigKey, string | boolean>>; dir?: string }
  | { kind: 'mcp'; options: McpOptions }
  | { kind: 'help' }
  | { kind: 'version' };

/** `cloud-emulator mcp`: the emulator it steers, the admin token, and the world of its session. */
export interface McpOptions {
  url: string;
  adminToken?: string;
  /** A sandbox by name; null: the default world; absent: a sandbox of its own. */
  sandbox?: string | null;
}

/** Where `cloud-emulator mcp` finds the emulator unless told: where a start with the default settings listens. */
export const DEFAULT_MCP_URL = `http://${SETTINGS.find((s) => s.key === 'host')!.default}:${SETTINGS.find((s) => s.key === 'port')!.default}`;

/**
 * Parses what follows `mcp`: `--url URL`, `--admin-token TOKEN`, `--sandbox NAME`,
 * `--default-world` (each `--flag value` or `--flag=value`); EMULATOR_URL and ADMIN_TOKEN
 * are read from `env` when the options are not given.
 */
export function parseMcpArgs(argv: readonly string[], env: Record<string, string | undefined>): Command {
  const given: Record<string, string | true> = {};
  const flags = ['url', 'admin-token', 'sandbox', 'default-world'];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return { kind: 'help' };
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument '${arg}' after 'mcp' (see --help)`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!flags.includes(name)) throw new UsageError(`unknown option '--${name}' of 'mcp'${didYouMean(name, flags).replace("'", "'--")}: it takes --url, --admin-token, --sandbox, --default-world`);
    if (name === 'default-world') {
      if (eq !== -1) throw new UsageError("option '--default-world' takes no value");
      given[name] = true;
      continue;
    }
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined || value === '') throw new UsageError(`option '--${name}' needs a value`);
    given[name] = value;
  }
  if (given.sandbox !== undefined && given['default-world']) throw new UsageError("give --sandbox or --default-world, not both");
  const url = (given.url as string | undefined) ?? env.EMULATOR_URL ?? DEFAULT_MCP_URL;
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url '${url}' is not an http:// or https:// URL`);
  const adminToken = (given['admin-token'] as string | undefined) ?? (env.ADMIN_TOKEN || undefined);
  const sandbox = given['default-world'] ? null : (given.sandbox as string | undefined);
  return { kind: 'mcp', options: { url: url.replace(/\/+$/, ''), ...(adminToken !== undefined ? { adminToken } : {}), ...(sandbox !== undefined ? { sandbox } : {}) } };
}

const BY_FLAG = new Map(SETTINGS.map((s) => [s.flag, s]));

const isBoolean = (s: SettingInfo) => s.schema.type === 'boolean';

/**
 * Parses `[check [DIR]] [--flag value | --flag=value | --bool | --no-bool]...`. Flags come
 * from SETTINGS, so a new setting is a new flag without touching this file. A repeated flag
 * keeps its last value, as most command lines do.
 */
export function parseArgs(argv: readonly string[]): Command {
  const overrides: Partial<Record<ConfigKey, string | boolean>> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return { kind: 'help' };
    if (arg === '--version') return { kind: 'version' };
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unknown option '${arg}' (see --help)`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const negated = name.startsWith('no-') && BY_FLAG.has(name.slice(3)) && isBoolean(BY_FLAG.get(name.slice(3))!);
    const setting = negated ? BY_FLAG.get(name.slice(3)) : BY_FLAG.get(name);
    if (!setting) throw new UsageError(`unknown option '--${name}'${suggestFlag(name)} (see --help)`);
    if (negated) {
      if (inline !== undefined) throw new UsageError(`option '--${name}' takes no value`);
      overrides[setting.key] = false;
    } else if (isBoolean(setting)) {
      // A bare boolean flag means true; an explicit value is checked like the variable's.
      overrides[setting.key] = inline ?? true;
    } else if (inline !== undefined) {
      overrides[setting.key] = inline;
    } else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && next.length > 2)) {
        throw new UsageError(`option '--${name}' needs a value: --${name} ${placeholder(setting.schema)}`);
      }
      overrides[setting.key] = next;
      i++;
    }
  }
  if (positional[0] === 'check') {
    if (positional.length > 2) throw new UsageError(`'check' takes one folder, got: ${positional.slice(1).join(' ')}`);
    return { kind: 'check', overrides, dir: positional[1] };
  }
  if (positional.length) {
    throw new UsageError(`unexpected argument '${positional[0]}': options start with -- and the commands are 'check', 'record', 'verify', 'snapshot' and 'mcp', each first (see --help)`);
  }
  return { kind: 'serve', overrides };
}

/** " (did you mean '--port'?)" for a near miss of an option, its --no- form included. */
function suggestFlag(name: string): string {
  const flags = ['help', 'version', ...SETTINGS.flatMap((s) => (isBoolean(s) ? [s.flag, `no-${s.flag}`] : [s.flag]))];
  return didYouMean(name, flags).replace("'", "'--");
}

/** The emulated interfaces, from the one list: each one's name, base paths and what it holds. */
function interfaceList(): string {
  const width = Math.max(...INTERFACES.map((i) => i.label.length));
  return INTERFACES.map((i) => {
    const bases = [i.prefix, ...Object.values('bases' in i ? (i.bases ?? {}) : {})].join(', ');
    const about = i.tag.description ? ` (${i.tag.description})` : '';
    return `  ${i.label.padEnd(width)}  ${bases}${about}`;
  }).join('\n');
}

function placeholder(schema: TSchema): string {
  if (schema.anyOf) return '<value>';
  if (schema.type === 'integer') return '<integer>';
  if (schema.type === 'number') return '<number>';
  return '<text>';
}

/** A default as a person should read it: the bundled fixtures are named, not located. */
export function displayDefault(setting: SettingInfo): string {
  if (setting.key === 'fixturesDir' && setting.default === BUNDLED_FIXTURES_DIR) return 'the bundled demo fixtures';
  if (setting.default === undefined) return 'unset';
  return String(setting.default);
}

/** The --help text, built from SETTINGS so that it lists every option there is. */
export function helpText(): string {
  const options = SETTINGS.map((s) => {
    const flag = isBoolean(s) ? `--[no-]${s.flag}` : `--${s.flag} ${placeholder(s.schema)}`;
    const values = s.schema.anyOf ? `one of ${s.schema.anyOf.map((v: TSchema) => v.const).join(', ')}; ` : '';
    return `  ${flag}\n      ${s.description}\n      ${values}env ${s.env}, default: ${displayDefault(s)}`;
  }).join('\n');
  return `cloud-emulator ${version()}: a stateful emulator of a cloud load-testing service,
with a control API under ${PATHS.control}. The emulated interfaces:
${interfaceList()}

Usage:
  cloud-emulator [options]              start the server
  cloud-emulator check [DIR] [options]  validate a fixture folder (DIR, else --fixtures,
                                        FIXTURES_DIR or the bundled seed) as a start would,
                                        listing every problem, and exit: 0 valid, 1 invalid
  cloud-emulator record --target URL [--out FILE] [--port N] [--host H] [--allow-writes]
                        [--max-bytes N] [--max-body-bytes N]
                                        a recording proxy (port 8081): passes each call to
                                        the service at URL and appends it to FILE (default
                                        recording.jsonl), secrets masked; reads, log-in and
                                        log-out only, unless --allow-writes; at most
                                        --max-bytes (64 MiB) written; Ctrl-C ends it
  cloud-emulator verify RECORDING (--url URL | --fixtures DIR) [--ignore FILE]
                        [--markdown FILE] [--junit FILE] [--token T] [--admin-token T]
                                        replays a recording against an emulator (running at
                                        URL, or started here from DIR) and lists where its
                                        answers differ by JSON path; exit: 0 none but
                                        ignored ones, 1 differences, 2 bad input
                                        (docs/parity.md)
  cloud-emulator snapshot --target URL --out DIR (--user NAME --password P | --api-token T)
                        [--tenant T] [--mask-key K] [--max-objects N] [--max-bytes N]
                        [--timeout-ms N]
                                        reads a tenant of the service at URL (log-in and
                                        GETs only) into a fixture folder DIR that 'check'
                                        accepts, secrets and personal data replaced; lists
                                        what it could not carry in DIR/SNAPSHOT-REPORT.md;
                                        exit: 0 written, 1 the target answered an error,
                                        2 bad input (docs/parity.md#snapshot)
  cloud-emulator mcp [mcp options]      a Model Context Protocol server over stdio, for
                                        coding agents, steering a running emulator; the
                                        same server is at http://HOST:PORT${PATHS.control}/mcp

MCP options:
  --url <text>          the emulator (env EMULATOR_URL, default: ${DEFAULT_MCP_URL})
  --admin-token <text>  its ADMIN_TOKEN, when it has one (env ADMIN_TOKEN)
  --sandbox <text>      work in this sandbox, created when missing (default: a sandbox
                        of the session's own, deleted when it ends)
  --default-world       work in the emulator's default world, in no sandbox

Options (each may also be set by its environment variable; the option wins):
${options}
  -h, --help
      show this help
  --version
      print the version

Booleans accept true/false, 1/0, yes/no, on/off. A bad value or an unknown option exits
with code 2. Demo session token: X-Auth-Token: demo-token.
API reference once started: http://HOST:PORT${PATHS.docs}, dashboard: http://HOST:PORT${PATHS.ui}
`;
}

/** The configuration table of docs/configuration.md, as Markdown. */
export function configTable(): string {
  // Markdown: a | ends a cell and <token> would be read as an HTML tag.
  const escape = (text: string) => text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const lines = [
    '| Environment variable | Option | Default | Description |',
    '|---|---|---|---|',
    ...SETTINGS.map((s) => {
      const flag = isBoolean(s) ? `--[no-]${s.flag}` : `--${s.flag}`;
      return `| \`${s.env}\` | \`${flag}\` | ${s.default === undefined ? 'unset' : displayDefault(s) === String(s.default) ? `\`${displayDefault(s)}\`` : displayDefault(s)} | ${escape(s.description)}${s.schema.anyOf ? ` (one of ${s.schema.anyOf.map((v: TSchema) => `\`${v.const}\``).join(', ')})` : ''} |`;
    }),
  ];
  return `${lines.join('\n')}\n`;
}
