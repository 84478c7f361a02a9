import type { StateOf, StoresOf } from './core/interface.js';
import type { World as AnyWorld } from './world/world.js';
import { AreaTable } from './http/paths.js';
import { repository } from './repository/interface.js';
import { provisioning } from './provisioning/interface.js';
import { annotations } from './annotations/interface.js';
import { alerts } from './alerts/interface.js';
import { compositions } from './compositions/interface.js';
import { query } from './query/interface.js';

/**
 * Every emulated interface, one line each: the app registers their routes, the world builds
 * their stores, and the state format, the path table, OpenAPI, the home page, the dashboard
 * and the client read their names, sections, prefixes and labels from here. The order is the
 * order of the state's sections, of the home page and of the dashboard; an interface may
 * read the stores of those above it when its store is built. Adding an interface: see
 * "Adding an interface" in docs/development.md.
 */
export const INTERFACES = [repository, provisioning, annotations, compositions, query, alerts] as const;

export type Interfaces = typeof INTERFACES;

/** The store of each interface, by interface name. */
export type Stores = StoresOf<Interfaces>;

/** The whole state, as the interfaces of the list define it. */
export type ListedState = StateOf<Interfaces>;

/** The world of this emulator: world/world.ts's World over the interfaces listed here. */
export type World = AnyWorld<Interfaces>;

/** Who may call what: the emulator's own paths, then each interface's areas, in the order of the list. */
export const AREAS = new AreaTable(INTERFACES.flatMap((i) => i.areas));
