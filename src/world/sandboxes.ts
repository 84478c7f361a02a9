import type { SANDBOX_MODES } from '../config.js';
import type { ClockMode } from '../core/clock.js';
import { type DomainError, invalid, missing, unavailable } from '../core/errors.js';
import { storageLedgerOf } from '../core/storage.js';
import type { SandboxSummary } from './sandbox-schemas.js';
import type { State } from './state.js';
import type { World } from './world.js';

/** 1 to 64 letters, digits, `_` or `-`: safe in a URL path segment, a log line and a file name. */
export const SANDBOX_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const SANDBOX_NAME_RULE = '1 to 64 characters of A-Z, a-z, 0-9, _ and -';

/**
 * - `auto`: the first request to an unknown name creates it from the seed.
 * - `explicit`: only PUT /_emulator/sandboxes/<name> creates one.
 * - `off`: no sandboxes; the prefix is not served.
 */
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export type { SandboxSummary };

/** A sandbox's world that is gone (removed, or replaced by another): what its requests added is given back to the process's bounds. */
const releaseStorage = (world: World) => storageLedgerOf(world.config).release(world.clock);

/**
 * A sandbox's world that goes (deleted, replaced, swept): its journal gives back its share of
 * the process's journal bytes (JOURNAL_MAX_BYTES), its stores their storage, its event streams
 * end, and its wake-up timer goes with every delivery not yet started.
 */
function retire(world: World): void {
  world.journal.clear();
  releaseStorage(world);
  world.events.close();
  world.dispose();
}

interface Sandbox {
  world: World;
  createdAt: number;
  lastUsedAt: number;
}

export interface SandboxOptions {
  mode: SandboxMode;
  /** Most sandboxes at once, the default world not counted. */
  max: number;
  /** A sandbox nobody used for this long (real time) is removed; 0 keeps them. */
  idleTimeoutMs: number;
  /**
   * A new world from a state (the seed when none is given), its clock forked from the default
   * world's; a state that carries a clock is loaded as `clock` says (default: on its clock).
   */
  create: (name: string, state?: State, clock?: ClockMode) => World;
  /** Real time, epoch ms: idle timeouts are about people and machines, not emulated time. */
  now: () => number;
  /** Told when a sandbox is made or removed (the default world's event stream). */
  onChange?: (name: string, change: 'created' | 'deleted') => void;
}

/**
 * The named worlds beside the default one. Nothing runs on a timer: idle sandboxes are swept
 * when the registry is used, at most a few times per idle timeout, so an idle process does
 * no work at all.
 */
export class Sandboxes {
  private readonly sandboxes = new Map<string, Sandbox>();
  private nextSweepAt = 0;

  constructor(private readonly options: SandboxOptions) {}

  get mode(): SandboxMode {
    return this.options.mode;
  }

  get max(): number {
    return this.options.max;
  }

  get size(): number {
    return this.sandboxes.size;
  }

  /** Throws unless `name` is a sandbox name and sandboxes are on. */
  static check(name: string, mode: SandboxMode): void {
    if (mode === 'off') throw missing('sandboxes are off (SANDBOXES=off): start the emulator with SANDBOXES=auto or explicit');
    if (!SANDBOX_NAME.test(name)) throw invalid(`sandbox name '${name.slice(0, 80)}' is not valid: use ${SANDBOX_NAME_RULE}`);
  }

  /**
   * The world a request to /sandbox/<name>/... is served by: an existing sandbox, or (auto
   * mode) a new one from the seed. Marks it used.
   */
  resolve(name: string): World {
    const used = this.used(name);
    if (used) return used;
    Sandboxes.check(name, this.options.mode);
    if (this.options.mode === 'explicit') throw this.notFound(name);
    return this.add(name, this.options.create(name), this.options.now()).world;
  }

  /** The world of an existing sandbox, marked used now (after expired ones are swept); undefined when there is none. */
  private used(name: string): World | undefined {
    const now = this.options.now();
    this.sweep(now);
    const found = this.sandboxes.get(name);
    if (!found) return undefined;
    found.lastUsedAt = now;
    return found.world;
  }

  /** The world of an existing sandbox, without marking it used (undefined when there is none). */
  find(name: string): World | undefined {
    this.sweep(this.options.now());
    return this.sandboxes.get(name)?.world;
  }

  /** Marks `name` used now: only a request that passed its checks keeps a sandbox alive. */
  touch(name: string): void {
    const found = this.sandboxes.get(name);
    if (found) found.lastUsedAt = this.options.now();
  }

  /**
   * A world from the seed for an unknown name (auto mode), not registered: a request is
   * served by it until its checks have passed, and only then adopted, so that a refused
   * request leaves nothing behind. Throws as resolve() does for a bad name or explicit mode.
   */
  provisional(name: string): World {
    Sandboxes.check(name, this.options.mode);
    if (this.options.mode === 'explicit') throw this.notFound(name);
    // Full already: refused before a world is built for nothing.
    if (this.sandboxes.size >= this.options.max) throw this.full(name);
    return this.options.create(name);
  }

  /**
   * Registers a provisional world under `name` and marks it used; when the name was created
   * meanwhile, keeps that one and returns it instead. 503 past MAX_SANDBOXES.
   */
  adopt(name: string, world: World): World {
    return this.used(name) ?? this.add(name, world, this.options.now()).world;
  }

  private full(name: string): DomainError {
    return unavailable(`cannot create sandbox '${name}': ${this.sandboxes.size} sandboxes exist and MAX_SANDBOXES is ${this.options.max}; delete some (DELETE /_emulator/sandboxes/<name>) or raise MAX_SANDBOXES`);
  }

  /** The answer for an unknown name in explicit mode. */
  notFound(name: string): DomainError {
    return missing(`no sandbox '${name}': create it with PUT /_emulator/sandboxes/${name} (SANDBOXES=explicit), or start with SANDBOXES=auto`);
  }

  /** Creates `name`, or replaces its whole world; from `state`, else from the seed. */
  put(name: string, state?: State, clock?: ClockMode): { summary: SandboxSummary; created: boolean } {
    Sandboxes.check(name, this.options.mode);
    const now = this.options.now();
    this.sweep(now);
    const existing = this.sandboxes.get(name);
    const world = this.options.create(name, state, clock);
    if (existing) {
      retire(existing.world);
      this.sandboxes.set(name, { world, createdAt: existing.createdAt, lastUsedAt: now });
      world.activate();
      return { summary: this.summaryOf(name)!, created: false };
    }
    this.add(name, world, now);
    return { summary: this.summaryOf(name)!, created: true };
  }

  /** Restores a sandbox from a state file, keeping its times; replaces one of the same name. */
  restore(name: string, world: World, createdAt: number, lastUsedAt: number): void {
    Sandboxes.check(name, this.options.mode);
    const replaced = this.sandboxes.get(name)?.world;
    if (replaced) retire(replaced);
    this.sandboxes.set(name, { world, createdAt, lastUsedAt });
    world.activate();
  }

  delete(name: string): boolean {
    // A sandbox's journal gives back its share of the process's journal bytes (JOURNAL_MAX_BYTES).
    const sandbox = this.sandboxes.get(name);
    if (!sandbox) return false;
    retire(sandbox.world);
    this.sandboxes.delete(name);
    this.options.onChange?.(name, 'deleted');
    return true;
  }

  summaryOf(name: string): SandboxSummary | undefined {
    this.sweep(this.options.now());
    const sandbox = this.sandboxes.get(name);
    if (!sandbox) return undefined;
    return { name, createdAt: sandbox.createdAt, lastUsedAt: sandbox.lastUsedAt, counts: sandbox.world.counts() };
  }

  list(): SandboxSummary[] {
    this.sweep(this.options.now());
    return [...this.sandboxes.keys()].sort().map((name) => this.summaryOf(name)!);
  }

  /** Every sandbox with its times, for the state file. */
  entries(): Array<{ name: string; world: World; createdAt: number; lastUsedAt: number }> {
    return [...this.sandboxes].map(([name, s]) => ({ name, ...s }));
  }

  clear(): void {
    for (const s of this.sandboxes.values()) retire(s.world);
    this.sandboxes.clear();
  }

  /** The app closes: every sandbox's wake-up timer goes, and no delivery is started any more; the worlds stay, for the state file's last write. */
  dispose(): void {
    for (const s of this.sandboxes.values()) s.world.dispose();
  }

  private add(name: string, world: World, now: number): Sandbox {
    if (this.sandboxes.size >= this.options.max) throw this.full(name);
    const sandbox = { world, createdAt: now, lastUsedAt: now };
    this.sandboxes.set(name, sandbox);
    world.activate();
    this.options.onChange?.(name, 'created');
    return sandbox;
  }

  /** Removes the sandboxes idle for longer than the timeout; looks at most 10 times per timeout. */
  private sweep(now: number): void {
    const { idleTimeoutMs } = this.options;
    if (idleTimeoutMs <= 0 || now < this.nextSweepAt) return;
    this.nextSweepAt = now + Math.max(1, Math.floor(idleTimeoutMs / 10));
    for (const [name, s] of this.sandboxes) if (now - s.lastUsedAt >= idleTimeoutMs) this.delete(name);
  }
}
