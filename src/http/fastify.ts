import type { Area } from './paths.js';

/**
 * What the request pipeline adds to every Fastify request, declared once: the hooks that set
 * these run before any route (app.ts installs them in order). The world of the request, which
 * the world's own types describe, is declared beside the hook that picks it (control/hooks.ts).
 */
declare module 'fastify' {
  interface FastifyRequest {
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
