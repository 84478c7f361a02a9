import type { Static, TArray, TSchema } from '@sinclair/typebox';
import type { Clock } from './clock.js';
import type { SectionSnapshot } from './snapshot.js';
import type { ObjectViews } from './objects.js';

/**
 * What an emulated interface (a folder such as provisioning/) tells the world, with no HTTP in
 * it: the world builds, exports, counts and snapshots every interface through this alone, so
 * it never imports an interface folder. The HTTP half (routes, areas, OpenAPI tag) is in
 * http/interface.ts; an interface's folder exports one object that is both. See "Adding an
 * interface" in docs/development.md.
 */

/** The schemas of an interface's sections of the state, by section name, in export order. */
export type SectionSchemas = Record<string, TArray<TSchema>>;

/** The sections' contents, as a state holds them. */
export type SectionsOf<S extends SectionSchemas> = { [K in keyof S]: Static<S[K]> };

/** The identities of one section, for `has` lookups. */
export interface SectionKeys {
  has(key: string | number): boolean;
}

/** What a world gives an interface's build; `Config` is the settings' type (config.ts, above this floor). */
export interface BuildContext<Config = unknown> {
  /** The world's clock: every time the store reads comes from it. */
  readonly clock: Clock;
  /**
   * When the state was loaded, emulated epoch ms: what a time the state leaves out reads (the
   * since of a resource never started, the creation of an object never stored). The clock's
   * now, unless the state is an export that says when its own state was loaded.
   */
  readonly loadedAt: number;
  readonly config: Config;
  /**
   * The stores of the interfaces earlier in the list, by interface name, for an interface
   * whose data is a view of another's. Untyped here: an interface folder never imports
   * another, so it states the little it reads as a type of its own.
   */
  readonly stores: Readonly<Record<string, unknown>>;
  /**
   * The repository objects of every interface (their `objects`), by type: filled once every
   * store of the world is built, so read it when asked, never while building.
   */
  readonly views: ObjectViews;
  /** The sandbox the world is; absent for the default world. */
  readonly world?: string;
  /**
   * Records a change that no request made (a delivery that ended on its own) on the world's
   * event stream, while this store is the world's; `type` is one of the stream's event types.
   */
  readonly record?: (event: WorldEventInput) => void;
  /**
   * The store's earliest work due at an emulated instant (`nextDueAt`) changed, while this
   * store is the world's: the world sets its wake-up timer again.
   */
  readonly dueChanged?: () => void;
}

/** An event of the world's stream, as a store hands it over (world/events.ts EventInput). */
export interface WorldEventInput {
  type: string;
  kind?: string;
  resourceId?: string | number;
  state?: string;
  view?: unknown;
}

/** What every store answers for the state routes: its sections, their sizes, and a cheap snapshot. */
export interface SectionsStore<K extends string> {
  export(): Record<K, unknown[]>;
  counts(): Record<K, number>;
  snapshot(): StoreSnapshot<K>;
}

/** An interface's sections at one moment (core/snapshot.ts), and what to call when they are written out. */
export interface StoreSnapshot<K extends string> {
  sections: Record<K, SectionSnapshot>;
  release?: () => void;
}

/** Resources whose lifecycle moves with the clock: what `clock/advance` and the clock status read. */
export interface Timed<Store> {
  /** The `kind`s of `{"until":{"kind","id"}}` this interface owns. */
  readonly kinds: readonly string[];
  /**
   * The earliest instant after `after` (default now) at which anything changes on its own;
   * undefined when nothing will. The event stream asks from the last instant it looked at.
   */
  nextTransitionAt(store: Store, after?: number): number | undefined;
  /** When one resource settles: undefined when there is no such resource, null when it never started. */
  settlesAt(store: Store, kind: string, id: number | string): number | null | undefined;
  /**
   * Every step of every resource's schedule that begins in [from, to], for the event stream.
   * A step another step of the same schedule replaces at the same instant (a state of no
   * length) is left out: no read ever shows it.
   */
  stepsBetween?(store: Store, from: number, to: number, visit: (kind: string, id: number | string, state: string, at: number) => void): void;
  /** The resource's public view at `at`, as its GET answers it; undefined when there is no such resource. */
  viewAt?(store: Store, kind: string, id: number | string, at: number): unknown;
  /**
   * For changes that happen on their own but are no lifecycle step (an alert rule's fire, which
   * clock/advance `to: next` and the clock's nextTransitionAt leave out): the first instant
   * after `after` at which the event stream must look again, for such a change or because what
   * is known ahead ends there; undefined when never.
   */
  wakeAt?(store: Store, after: number): number | undefined;
}

export interface InterfaceModel<Name extends string = string, Sections extends SectionSchemas = SectionSchemas, Store = unknown, Config = unknown> {
  /** The key of its store in `world.stores`, and its name in the list of interfaces. */
  readonly name: Name;
  /** Its sections of the state and of a fixture file, in export order. */
  readonly sections: Sections;
  /** The identity of an entry of each section: duplicates are refused, references checked against it. */
  readonly keys: { readonly [K in keyof Sections]: (item: Static<Sections[K]>[number]) => string | number };
  /** References between its own sections that point at nothing: each reported through `problem`. */
  references?(state: SectionsOf<Sections>, keys: { readonly [K in keyof Sections]: SectionKeys }, problem: (text: () => string) => void): void;
  /**
   * Rules of its own entries that the schema cannot express (exactly one of start and
   * startAgoMs, a range that ends before it starts...): each reported through `problem`, as
   * `$.section[i]...: what is wrong`. `now` is when the state would be loaded (absent: check
   * only what holds at any moment). Its store may refuse the same, but this is what the loader,
   * `check` and an import report, every problem at once.
   */
  checks?(state: SectionsOf<Sections>, context: { now?: number }, problem: (text: () => string) => void): void;
  /** A fresh store from a state (validated, and only read: the store copies what it changes). */
  build(state: SectionsOf<Sections>, context: BuildContext<Config>): Store;
  /**
   * Optional: what `build` would work out from a large state (indexes, sorting), done ahead
   * in slices that let the event loop turn (core/slices.ts) and kept for the state, so that
   * the build itself is quick. Throws what the build would throw. Called before an import.
   */
  prepare?(state: SectionsOf<Sections>, context: { now: number }): Promise<void>;
  /**
   * Its sections of the state, their sizes and a snapshot, from its store. `at` is the
   * emulated time the export's clock says: a time kept relative (`startAgoMs`) is written
   * relative to it.
   */
  readonly state: {
    export(store: Store, at: number): SectionsOf<Sections>;
    counts(store: Store): Record<keyof Sections & string, number>;
    snapshot(store: Store, at: number): StoreSnapshot<keyof Sections & string>;
  };
  /**
   * Work that falls due at emulated instants (a delivery's retry): the world calls it after
   * every change of its clock, before each request it serves, and when its wake-up timer
   * (set to `nextDueAt`) goes off. Must cost next to nothing when nothing is due.
   */
  due?(store: Store, now: number): void;
  /** The earliest emulated instant `due` has work for; undefined when none waits. Read to set the world's wake-up timer. */
  nextDueAt?(store: Store): number | undefined;
  /** The store is no longer its world's (a reset, an import, a reload, a sandbox deleted, the app closed): it starts no more work of its own. */
  dispose?(store: Store): void;
  /** Present when the interface has lifecycles that move with the clock. */
  readonly timed?: Timed<Store>;
  /** The repository objects its store shows (a grid, a domain...), by object type, read from the store when asked. */
  objects?(store: Store): ObjectViews;
}

/** Any interface model, whatever its name, sections and store. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyInterfaceModel = InterfaceModel<string, any, any, any>;

/** The store of each interface of a list, by interface name. */
export type StoresOf<L extends readonly AnyInterfaceModel[]> = { [M in L[number] as M['name']]: ReturnType<M['build']> };

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** The whole state of a list of interfaces: every section of each. */
export type StateOf<L extends readonly AnyInterfaceModel[]> = {
  [K in keyof SectionSchemasOf<L>]: SectionSchemasOf<L>[K] extends TSchema ? Static<SectionSchemasOf<L>[K]> : never;
};

/** The section schemas of every interface of a list, as one record. */
export type SectionSchemasOf<L extends readonly AnyInterfaceModel[]> = UnionToIntersection<L[number]['sections']>;
