import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { buildApp } from './app.js';
import { loadConfig, type Config, type ConfigKey } from './config.js';
import { EmulatorClock, type ClockMode, type ControllableClock } from './core/clock.js';
import type { World } from './interfaces.js';
import { emptyState, inspectFixtures, parseState, type State } from './state.js';
import { FixtureError, MAX_CHECKED_PROBLEMS, ignoredText } from './core/fixtures.js';
import type { FolderReport } from './world/state.js';
import { clockNote } from './world/seed-watch.js';
import { loadSerializerCompilerSoon } from './http/compile-on-first-use.js';
import { mcpRoutes } from './mcp/routes.js';

export { buildApp, type BuildAppOptions } from './app.js';
export { ConfigError, ConfigSchema, SETTINGS, loadConfig, type Config, type ConfigKey, type SettingInfo } from './config.js';
export { EmulatorClock, ManualClock, type Clock, type ClockAnchor, type ClockMode, type ClockStatus, type ControllableClock } from './core/clock.js';
export { FixtureError } from './core/fixtures.js';
export { ErrorBodySchema, type ErrorBody } from './http/errors.js';
export { FixtureFileSchema, StateSchema, emptyState, loadFixtures, parseState, type State } from './state.js';
export type { World } from './interfaces.js';
/** @deprecated The name the world had before sandboxes: use World. */
export type Emulator = World;

export interface StartEmulatorOptions extends Partial<Omit<Config, 'fixturesDir'>> {
  /**
   * The seed: a folder of fixture files, or a State (any subset of its sections).
   * Default: the bundled demo fixtures.
   */
  fixtures?: string | Partial<State>;
  /** The clock every lifecycle runs on; pass a ManualClock to move time by hand. Default: real time. */
  clock?: ControllableClock;
  /** Fastify's logger option. Default: off, so a test run stays quiet. */
  logger?: FastifyServerOptions['logger'];
}

/** A running emulator and the control operations a test needs, without going through HTTP. */
export interface RunningEmulator {
  /** Base URL, e.g. http://127.0.0.1:39123 (no trailing slash). */
  url: string;
  /** Base URL of the provisioning interface ({base_url}/services/rest/CloudService/v1). */
  provisioningUrl: string;
  /** Base URL of the annotation and alert interfaces ({rum_base_url}). */
  rumUrl: string;
  app: FastifyInstance;
  /** The default world: its stores, clock, faults and journal. */
  world: World;
  /** @deprecated The same world, by the name it had before sandboxes: use `world`. */
  emulator: World;
  clock: ControllableClock;
  config: Config;
  /** Back to the seed the emulator started with; `{ clock: 'real' }` also back to real time (as `POST /_emulator/reset?clock=real`). */
  reset(options?: { clock?: ClockMode }): void;
  /** Moves emulated time forward; every lifecycle follows at once. */
  advance(ms: number): void;
  /** Emulated time, epoch ms. */
  now(): number;
  /** The whole state, in the fixture format. */
  state(): State;
  /** Replaces the whole state (validated like a fixture set); an export on its clock unless `clock` is 'real'. */
  load(state: Partial<State>, options?: { clock?: ClockMode }): void;
  /** Stops listening after in-flight requests finish; flushes the state file if one is set. */
  close(): Promise<void>;
}

function baseUrl(address: AddressInfo): string {
  const { address: host, port } = address;
  // A wildcard address is not a place to connect to; loopback reaches it.
  if (host === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (host === '::') return `http://[::1]:${port}`;
  return host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

/**
 * Starts an emulator in this process, e.g. in a test suite's global setup:
 *
 *   const emu = await startEmulator({ port: 0, clock: new ManualClock() });
 *   await fetch(`${emu.provisioningUrl}/grid/`, { headers: { 'X-Auth-Token': 'demo-token' } });
 *   emu.advance(60_000);
 *   await emu.close();
 *
 * Reads nothing from the environment: every setting is an option (port defaults to 0, a
 * free port; host to 127.0.0.1).
 */
export async function startEmulator(options: StartEmulatorOptions = {}): Promise<RunningEmulator> {
  const { fixtures, clock, logger, ...settings } = options;
  // A folder given as `fixtures` is the fixtures folder in every respect: the guard that keeps
  // STATE_FILE out of it checks this folder, not the bundled one.
  const folder = typeof fixtures === 'string' ? { fixturesDir: fixtures } : {};
  const config = loadConfig({}, { port: 0, ...settings, ...folder } as Partial<Record<ConfigKey, unknown>>);
  const seed = typeof fixtures === 'object' ? parseState({ ...emptyState(), ...fixtures }, 'startEmulator fixtures') : undefined;
  return launch(config, { seed, clock, logger: logger ?? false });
}

/**
 * Starts an emulator with settings already resolved (loadConfig): the one start path of
 * startEmulator and of the process entry, so settings are resolved once and passed down.
 */
export async function launch(
  config: Config,
  options: { seed?: State; clock?: ControllableClock; logger?: FastifyServerOptions['logger'] } = {},
): Promise<RunningEmulator> {
  const clock = options.clock ?? new EmulatorClock();
  // The same loader as `check` and a reload: every problem of every file at once, checked at the time the seed loads.
  let seed = options.seed;
  let report: FolderReport<State> | undefined;
  let unreadable: FixtureError | undefined;
  if (!seed) {
    try {
      report = await inspectFixtures(config.fixturesDir, { now: clock.now() });
    } catch (err) {
      // With WATCH, a folder that cannot be read (yet) is a problem on show, as a broken one is.
      if (!(config.watch && err instanceof FixtureError)) throw err;
      unreadable = err;
    }
    if (report?.problems.count && !config.watch) {
      const { problems } = report;
      const listed = problems.error(config.fixturesDir);
      const count = problems.unlisted === true ? `more than ${problems.listed.length}` : String(problems.count);
      const header = `invalid fixtures, ${count} problem${problems.count === 1 ? '' : 's'} (\`cloud-emulator check\` lists up to ${MAX_CHECKED_PROBLEMS}):`;
      throw new FixtureError(`${header}\n${listed.message}`, listed.problems, listed.unlisted);
    }
    // With WATCH, a broken folder starts an empty world, until the folder is fixed.
    seed = report && !report.problems.count ? (report.state as State) : emptyState();
  }
  const app = await buildApp({
    config,
    clock,
    fixtures: seed,
    ...(options.seed ? {} : { fixturesFrom: config.fixturesDir }),
    logger: options.logger ?? false,
  });
  if (report) for (const warning of [...report.warnings, ...report.ignored.map(ignoredText)]) app.log.warn(warning);
  // A fixture clock (an export's) is used or not as SEED_CLOCK says: said, so that it is not ignored without a word.
  if (report?.state?.clock && report.clockFile !== undefined) app.log.info(clockNote(report.clockFile, report.state.clock, config.seedClock));
  if (report || unreadable) app.seedWatch?.begin(report, unreadable);
  // The MCP endpoint of a running server: its sessions call this server at the address it listens on.
  let url = '';
  await app.register(mcpRoutes, { url: () => url });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close();
    throw err;
  }
  loadSerializerCompilerSoon();
  url = baseUrl(app.server.address() as AddressInfo);
  const { world } = app;
  return {
    url,
    provisioningUrl: `${url}/concerto/services/rest/CloudService/v1`,
    rumUrl: `${url}/concerto/mpulse`,
    app,
    world,
    emulator: world,
    clock,
    config,
    reset: (options) => world.reset(options),
    advance: (ms) => clock.advance(ms),
    now: () => clock.now(),
    state: () => world.exportState() as State,
    load: (state, options) => world.replace(parseState({ ...emptyState(), ...state }, 'load()'), options?.clock),
    close: () => app.close(),
  };
}
