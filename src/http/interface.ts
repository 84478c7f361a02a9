import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import type { InterfaceModel, SectionSchemas } from '../core/interface.js';
import type { Access, AuthorizationScheme } from './paths.js';
import type { StoreOf } from './routing.js';

/**
 * The HTTP half of an emulated interface; core/interface.ts has the half the world reads. An
 * interface folder exports one object that is both (its `interface.ts`), and src/interfaces.ts
 * lists it: the app, the state format, the path table, OpenAPI, the home page, the dashboard
 * and the client all read that one list. See "Adding an interface" in docs/development.md.
 */

/** What the app hands an interface's routes plugin. */
export interface InterfaceRouteOptions<Store> {
  /** The interface's own store, in the request's world (the default one or a sandbox's). */
  store: StoreOf<Store>;
  config: Config;
  /**
   * Every store of the request's world, by interface name: for routes that show another
   * interface's data. Untyped, as an interface folder never imports another.
   */
  stores: StoreOf<Readonly<Record<string, unknown>>>;
}

/** A path prefix the interface answers under, and who may call it (http/paths.ts). */
export interface InterfaceArea {
  readonly prefix: string;
  readonly access: Exclude<Access, 'admin'>;
  /** The prefix and everything below it (the default), or the path alone. */
  readonly tree?: boolean;
  /** The headers a `token` area reads the session token from, first present wins (lower case); absent: X-Auth-Token. */
  readonly tokenHeaders?: readonly string[];
  /** The schemes of the Authorization header a `token` area takes instead, for one request: `bearer` (an API token), `basic` (a name and password). */
  readonly authorization?: readonly AuthorizationScheme[];
}

export interface Interface<Name extends string = string, Sections extends SectionSchemas = SectionSchemas, Store = unknown>
  extends InterfaceModel<Name, Sections, Store, Config> {
  /** Its base path, e.g. /concerto/services/rest/CloudService/v1: where its routes are registered, unless `routePrefix` says otherwise. */
  readonly prefix: string;
  /** Where its routes are registered when they lie under two bases (compositions and results): their common root. */
  readonly routePrefix?: string;
  /** Further bases of its routes, by name, listed beside `prefix` (the home page): e.g. `{ results: ... }`. */
  readonly bases?: Readonly<Record<string, string>>;
  /**
   * Who may call what: most specific first. The trees may be wider than `prefix` (an unknown
   * version of a protected interface is refused like the interface itself); every route must
   * lie in one of them.
   */
  readonly areas: readonly InterfaceArea[];
  /** Its routes, registered under `prefix`. */
  readonly routes: FastifyPluginAsyncTypebox<InterfaceRouteOptions<Store>>;
  /** Its tag in the OpenAPI document; every route of it names this tag. */
  readonly tag: { readonly name: string; readonly description?: string };
  /** How the home page, the dashboard and the journal name it. */
  readonly label: string;
}

/** Any interface, whatever its name, sections and store. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyInterface = Interface<string, any, any>;
