import type { Area } from './paths.js';

/**
 * The types of what the floors above http/ hand Fastify: the worlds and the state file's
 * writer. http/ may not import them, so the floor that knows them fills this in
 * (control/hooks.ts, `declare module '../http/fastify.js'`); until then each is `unknown`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface EmulatorTypes {}

/** The type filled in for `K`, or unknown. */
type Filled<K extends string> = EmulatorTypes extends { [P in K]: infer T } ? T : unknown;

/**
 * Everything the emulator adds to Fastify, declared once: the hooks that set these run before
 * any route (app.ts installs them in order).
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** No fault rule strikes this route, whatever its scope (the fault routes: a rule can always be removed). */
    faultExempt?: boolean;
  }
  interface FastifyInstance {
    /** The default world (what paths without /sandbox/<name> are served by). */
    world: Filled<'world'>;
    /** @deprecated The same default world, by the name it had before sandboxes: use `world`. */
    emulator: Filled<'world'>;
    /** The named sandboxes beside the default world. */
    sandboxes: Filled<'sandboxes'>;
    /** The state file's writer (control/persistence.ts); null without STATE_FILE. */
    statePersistence: Filled<'statePersistence'> | null;
    /** The seed's fixtures folder and its live reload (world/seed-watch.ts); null when the seed came from no folder. */
    seedWatch: Filled<'seedWatch'> | null;
  }
  interface FastifyRequest {
    /** The world that serves this request: the default one, or the sandbox its path names. */
    world: Filled<'world'>;
    /** Emulated time when the request arrived (for the journal). */
    arrivedAt: number;
    /** stopwatch() when the request arrived (the journal's duration). */
    startedAt: number;
    /** Ids of the fault rules that acted on this request. */
    faultRuleIds: string[] | null;
    /** The sandbox a request to /sandbox/<name>/... is for, as named in its path; null for the default world. */
    sandbox: string | null;
    /** The area of the request (http/areas.ts), worked out before any other hook; null when its path cannot be decoded. */
    area: Area | null;
    /** The session of a valid X-Auth-Token, set by the token guard on protected paths; null elsewhere. */
    session: RequestSession | null;
    /** The body's text as sent, kept by the body parser for the request journal (http/bodies.ts). */
    journalText: string | null;
  }
}

/** A session as the token guard finds it (the Repository interface's sessions). */
export interface RequestSession {
  readonly token: string;
  readonly userName: string;
  readonly tenant: string;
}
