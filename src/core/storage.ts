import { full, type DomainError } from './errors.js';

/**
 * What requests add to a world's stores, in bytes, per world and for the whole process.
 *
 * Everything a request can make grow (an alert's history, annotations, repository objects)
 * is charged to its world's account here before it is kept: past the world's bound or the
 * process's, the request is refused (507, `full`) and nothing is kept. The process bound is
 * the one that protects the server: a hundred sandboxes each just under their own bound
 * would otherwise add up to more memory than the process has.
 *
 * Only growth is charged, not the seed a world starts from: a sandbox shares its seed with
 * the default world without copying it. An account belongs to a world's clock (each world has
 * its own, which a reset keeps): stores built anew for it (a reset, an import) start their
 * kind's account at zero, and a removed sandbox gives its bytes back (`release`). A world only
 * gets an entry once something is charged, so a sandbox that was never adopted leaves none.
 */

export const STORAGE_KINDS = ['alerts', 'annotations', 'repository', 'deliveries'] as const;
export type StorageKind = (typeof STORAGE_KINDS)[number];

/** The bounds of one kind: per world and for the process, with the settings that name them. */
export interface KindBounds {
  worldMaxBytes: number;
  worldSetting: string;
  maxBytes: number;
  setting: string;
  /** How the refusal names what is kept ("alert history", "annotations"). */
  what: string;
}

type Balances = Record<StorageKind, number>;
const emptyBalances = (): Balances => ({ alerts: 0, annotations: 0, repository: 0, deliveries: 0 });

/**
 * A check that sees every world's total growth: the state file's bounds (control/persistence.ts).
 * Answers why the growth cannot be kept, or undefined when it can.
 */
export type StorageGuard = (world: object, growth: number, totals: { world: number; all: number }) => string | undefined;

export class StorageLedger {
  private readonly accounts = new Map<object, Balances>();
  /** Bytes of each kind held by every world together (each world's negative balance counted as 0). */
  private readonly used: Balances = emptyBalances();
  /** Bytes of every kind held by every world together. */
  private total = 0;
  /** Set while a state file is kept: the growth that would take it past its bounds is refused too. */
  guard?: StorageGuard;

  constructor(readonly bounds: Readonly<Record<StorageKind, KindBounds>>) {}

  /** Bytes of `kind` held by every world together. */
  usedBytes(kind: StorageKind): number {
    return this.used[kind];
  }

  /** Bytes `world` added, of one kind or of every kind. */
  balance(world: object, kind?: StorageKind): number {
    const balances = this.accounts.get(world);
    if (!balances) return 0;
    return kind ? balances[kind] : STORAGE_KINDS.reduce((sum, k) => sum + positive(balances[k]), 0);
  }

  /** How many worlds hold an account (for tests: one that was released holds none). */
  get worlds(): number {
    return this.accounts.size;
  }

  /** A store of `kind` built anew for `world` (a reset, an import, a new sandbox): its account starts at zero. */
  open(world: object, kind: StorageKind): StorageAccount {
    this.set(world, kind, 0);
    return new StorageAccount(this, world, kind);
  }

  /** `world` is gone (a sandbox removed or replaced): everything it held is given back. */
  release(world: object): void {
    for (const kind of STORAGE_KINDS) this.set(world, kind, 0);
  }

  /** Throws a `full` DomainError when `growth` bytes of `kind` more would pass a bound. */
  check(world: object, kind: StorageKind, growth: number): void {
    if (growth <= 0) return;
    const problem = this.problem(world, kind, growth);
    if (problem) throw problem;
  }

  /** Records a change of `delta` bytes (checked before when positive). */
  add(world: object, kind: StorageKind, delta: number): void {
    if (delta !== 0) this.set(world, kind, (this.accounts.get(world)?.[kind] ?? 0) + delta);
  }

  private problem(world: object, kind: StorageKind, growth: number): DomainError | undefined {
    const b = this.bounds[kind];
    const mine = this.accounts.get(world)?.[kind] ?? 0;
    const after = positive(mine + growth);
    if (after > b.worldMaxBytes) {
      return full(`this world holds ${positive(mine)} bytes of ${b.what} added since it was loaded and ${b.worldSetting} is ${b.worldMaxBytes}: ${growth} bytes more do not fit; delete some, reset the world, or raise ${b.worldSetting}`);
    }
    const process = this.used[kind] - positive(mine) + after;
    if (process > b.maxBytes) {
      return full(`the emulator holds ${this.used[kind]} bytes of ${b.what} over all worlds and ${b.setting} is ${b.maxBytes}: ${growth} bytes more do not fit; delete some, reset or delete sandboxes, or raise ${b.setting}`);
    }
    if (this.guard) {
      const added = after - positive(mine);
      const why = this.guard(world, added, { world: this.balance(world) + added, all: this.total + added });
      if (why) return full(why);
    }
    return undefined;
  }

  private set(world: object, kind: StorageKind, value: number): void {
    let balances = this.accounts.get(world);
    if (!balances) {
      if (value === 0) return;
      this.accounts.set(world, (balances = emptyBalances()));
    }
    const change = positive(value) - positive(balances[kind]);
    this.used[kind] += change;
    this.total += change;
    balances[kind] = value;
    if (STORAGE_KINDS.every((k) => balances[k] === 0)) this.accounts.delete(world);
  }
}

const positive = (n: number) => (n > 0 ? n : 0);

/** One store's account: what it charges goes to its world's balance of its kind. */
export class StorageAccount {
  constructor(
    private readonly ledger: StorageLedger,
    private readonly world: object,
    readonly kind: StorageKind,
  ) {}

  /** Throws a `full` DomainError (507) when `growth` more bytes would pass a bound; nothing is recorded. */
  check(growth: number): void {
    this.ledger.check(this.world, this.kind, growth);
  }

  /** Records a change once made (after a check of the growth). */
  add(delta: number): void {
    this.ledger.add(this.world, this.kind, delta);
  }

  /** Bytes this world added of this kind (negative when it removed more than it added). */
  get bytes(): number {
    return this.ledger.balance(this.world, this.kind);
  }
}

/** The settings the ledger reads. */
export interface StorageSettings {
  alertHistoryWorldMaxBytes: number;
  alertHistoryMaxBytes: number;
  annotationsWorldMaxBytes: number;
  annotationsMaxBytes: number;
  repositoryMaxBytes: number;
  repositoryProcessMaxBytes: number;
  deliveriesWorldMaxBytes: number;
  deliveriesMaxBytes: number;
}

const ledgers = new WeakMap<object, StorageLedger>();

/**
 * The ledger shared by every world built from one configuration: the default world and its
 * sandboxes (forked from it) share their configuration, and so one ledger per process (as the
 * journal's byte budget, world/journal.ts). A configuration without the settings (a store
 * built alone in a test) gets no bounds.
 */
export function storageLedgerOf(config: Partial<StorageSettings> | undefined): StorageLedger {
  const key = config ?? NO_CONFIG;
  let ledger = ledgers.get(key);
  if (!ledger) {
    const c = config ?? {};
    const inf = Number.POSITIVE_INFINITY;
    ledger = new StorageLedger({
      alerts: {
        worldMaxBytes: c.alertHistoryWorldMaxBytes ?? inf,
        worldSetting: 'ALERT_HISTORY_WORLD_MAX_BYTES',
        maxBytes: c.alertHistoryMaxBytes ?? inf,
        setting: 'ALERT_HISTORY_MAX_BYTES',
        what: 'alert history',
      },
      annotations: {
        worldMaxBytes: c.annotationsWorldMaxBytes ?? inf,
        worldSetting: 'ANNOTATIONS_WORLD_MAX_BYTES',
        maxBytes: c.annotationsMaxBytes ?? inf,
        setting: 'ANNOTATIONS_MAX_BYTES',
        what: 'annotations',
      },
      // The world's own bound of the repository is REPOSITORY_MAX_BYTES, which the object
      // store checks itself (it counts the seed's objects too): here only the process's.
      repository: {
        worldMaxBytes: inf,
        worldSetting: 'REPOSITORY_MAX_BYTES',
        maxBytes: c.repositoryProcessMaxBytes ?? inf,
        setting: 'REPOSITORY_PROCESS_MAX_BYTES',
        what: 'repository objects',
      },
      deliveries: {
        worldMaxBytes: c.deliveriesWorldMaxBytes ?? inf,
        worldSetting: 'DELIVERIES_WORLD_MAX_BYTES',
        maxBytes: c.deliveriesMaxBytes ?? inf,
        setting: 'DELIVERIES_MAX_BYTES',
        what: 'alert deliveries',
      },
    });
    ledgers.set(key, ledger);
  }
  return ledger;
}
const NO_CONFIG = {};
