import type { FastifyReply, FastifyRequest } from 'fastify';
import type { World } from '../interfaces.js';
import type { EventType } from '../world/event-types.js';
import type { EventInput } from '../world/events.js';
import { PATHS } from '../http/paths.js';
import { routePattern } from '../http/route-context.js';

/**
 * The changes a request made, as events of its world's stream: read from the route the router
 * matched and the answer given, once the answer is sent, and only while someone listens. A
 * lifecycle's steps are not here (the world finds them in the schedules); this is for what
 * has no schedule: annotations, alerts, repository objects, fault rules.
 */

type Params = Record<string, string | undefined>;

/** What one route's success means: the event, from its parameters and its answer (parsed when JSON). */
type Change = (world: World, params: Params, answer: unknown) => EventInput | undefined;

const idOf = (answer: unknown): number | string | undefined => {
  const id = (answer as { id?: unknown } | null)?.id;
  return typeof id === 'number' || typeof id === 'string' ? id : undefined;
};

/** Reads a view, or leaves it out when the resource cannot be read (gone meanwhile). */
function tryView(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return undefined;
  }
}

function annotation(type: EventType, id: number | string | undefined, world: World): EventInput | undefined {
  if (id === undefined) return undefined;
  const view = type === 'annotation.deleted' ? undefined : tryView(() => world.stores.annotations.get(Number(id)));
  return { type, kind: 'annotation', resourceId: Number(id), view };
}

/**
 * An alert's change: the alert as it is now, less its history (which grows with every fire,
 * and would make each event carry all those before it), and for a fire or a clear the entry
 * it recorded (`entry`), the last of that history.
 */
function alert(type: EventType, uid: string | undefined, world: World): EventInput | undefined {
  if (uid === undefined) return undefined;
  const latest = tryView(() => world.stores.alerts.latest(uid)) as ReturnType<World['stores']['alerts']['latest']> | undefined;
  const entry = (type === 'alert.fired' || type === 'alert.cleared') && latest?.last ? { entry: latest.last } : undefined;
  return { type, kind: 'alert', resourceId: uid, view: latest?.alert, ...(entry ? { extra: entry } : {}) };
}

const objectId = (params: Params, answer: unknown) => (params.id !== undefined ? Number(params.id) : idOf(answer));

/** By method and route (as registered, without a trailing slash). */
const CHANGES = new Map<string, Change>([
  [`POST ${PATHS.annotations}`, (world, _p, answer) => annotation('annotation.created', idOf(answer), world)],
  [`PUT ${PATHS.annotations}/:id`, (world, p) => annotation('annotation.updated', p.id, world)],
  [`DELETE ${PATHS.annotations}/:id`, (world, p) => annotation('annotation.deleted', p.id, world)],
  [`POST ${PATHS.alerts}/:uid/fire`, (world, p) => alert('alert.fired', p.uid, world)],
  [`POST ${PATHS.alerts}/:uid/clear`, (world, p) => alert('alert.cleared', p.uid, world)],
  [
    `PATCH ${PATHS.control}/alerts/:uid`,
    (world, p, answer) => alert((answer as { enabled?: boolean } | null)?.enabled === false ? 'alert.disabled' : 'alert.enabled', p.uid, world),
  ],
  [`PUT ${PATHS.repository}/Objects`, (_w, p, answer) => ({ type: 'object.created', kind: 'object', resourceId: objectId(p, answer), extra: { objectType: p.type } })],
  [`PUT ${PATHS.repository}/Objects/:type`, (_w, p, answer) => ({ type: 'object.created', kind: 'object', resourceId: objectId(p, answer), extra: { objectType: p.type } })],
  [`POST ${PATHS.repository}/Objects/:type/:id`, (_w, p) => ({ type: 'object.updated', kind: 'object', resourceId: objectId(p, undefined), extra: { objectType: p.type } })],
  [`DELETE ${PATHS.repository}/Objects/:type/:id`, (_w, p) => ({ type: 'object.deleted', kind: 'object', resourceId: objectId(p, undefined), extra: { objectType: p.type } })],
  [`POST ${PATHS.control}/faults`, (_w, _p, answer) => ({ type: 'fault.added', kind: 'fault', resourceId: idOf(answer), view: answer })],
  [`DELETE ${PATHS.control}/faults/:id`, (_w, p) => ({ type: 'fault.removed', kind: 'fault', resourceId: p.id })],
  // Every rule at once: an event about no one rule.
  [`DELETE ${PATHS.control}/faults`, () => ({ type: 'fault.removed' })],
]);

/**
 * Called (from the journal's onSend hook) for every answered request that was not a read, on
 * a world someone listens to: the world looks at its lifecycles again (an action may have
 * started one now), and a change of the table above becomes an event.
 */
export function noteChange(world: World, request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
  world.events.poke();
  const status = reply.statusCode;
  if (status < 200 || status >= 300) return;
  let route = routePattern(request) ?? '';
  if (route.length > 1 && route.endsWith('/')) route = route.slice(0, -1);
  const change = CHANGES.get(`${request.method} ${route}`);
  if (!change) return;
  let answer: unknown;
  if (typeof payload === 'string' && payload.length > 0) {
    try {
      answer = JSON.parse(payload);
    } catch {
      answer = undefined;
    }
  }
  const event = change(world, (request.params ?? {}) as Params, answer);
  if (event) world.events.record(event);
}
