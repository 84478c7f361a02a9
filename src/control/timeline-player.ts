import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { World } from '../interfaces.js';
import { stopwatch } from '../core/clock.js';
import { SLICE_MS, turn } from '../core/slices.js';
import { CLIENT_HEADER, TIMELINE_CLIENT } from '../world/journal.js';
import { PATHS, SANDBOX_PREFIX } from '../http/paths.js';
import { MAX_STEP_BODY_BYTES, bodyAt, requestProblem, type StepRequest } from '../world/timeline-schemas.js';


/** Whether a request says it is a timeline's step (X-Emulator-Client: timeline). */
function markedAsStep(request: FastifyRequest): boolean {
  return request.headers[CLIENT_HEADER] === TIMELINE_CLIENT;
}

/** The path of the control API's clock settings, whose steps a seek follows (see seek). */
const CLOCK_PATH = `${PATHS.control}/clock`;

/**
 * Plays the timelines of every world (docs/timelines.md). A step is the HTTP request it
 * describes, injected into the app (light-my-request), so it passes the same hooks,
 * validation, journal (marked X-Emulator-Client: timeline) and events as a client's request.
 *
 * No timer of its own: like the lifecycles, a timeline is brought up to the clock when the
 * world is used. Before a request of a world is handled, the steps due by then are played; on
 * a running clock, while an event stream listens, its wake-up timer plays each at its instant
 * (World.player, catchUp), and with none open they wait for the next request (late by however
 * long nobody asked). An advance of the clock plays each step at its own instant on the way
 * (playTo). A seek builds the world again from the seed at the timeline's start and replays
 * the steps up to the offset asked for.
 *
 * One world's timeline work runs one piece at a time, and the world's other requests wait for
 * it; the steps' own requests do not.
 */
export class TimelinePlayer {
  /** The work of each world's timeline under way (playing, seeking). */
  private readonly running = new WeakMap<World, Promise<unknown>>();
  /** The worlds whose steps are being played: their requests marked as steps go straight on. */
  private readonly playing = new WeakSet<World>();

  constructor(
    private readonly app: FastifyInstance,
    private readonly adminToken: string | undefined,
  ) {}

  /**
   * The root hooks: before a request is handled, its world's due steps are played; while the
   * world records, each request that changed it becomes a step. Installed before every route.
   */
  install(): void {
    this.app.addHook('preHandler', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const world = request.world;
      if (!world || (this.playing.has(world) && markedAsStep(request))) return done();
      const waiting = this.catchUp(world);
      if (!waiting) return done();
      waiting.then(() => done(), done);
    });
    this.app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: HookHandlerDoneFunction) => {
      const world = request.world;
      if (world?.timeline.recording && !markedAsStep(request)) this.recordRequest(world, request, reply.statusCode);
      done();
    });
  }

  /** Plays the steps due by now, after any work under way; undefined when there is nothing to wait for. */
  catchUp(world: World): Promise<unknown> | undefined {
    const running = this.running.get(world);
    if (running) return running.then(() => this.catchUp(world));
    if (!world.timeline.due(world.clock.now())) return undefined;
    return this.exclusive(world, () => this.playDue(world));
  }

  /**
   * Moves the world's clock forward to `at`, playing every step due on the way at its own
   * instant (an advance of the clock through the control API).
   */
  playTo(world: World, at: number): Promise<void> {
    return this.exclusive(world, async () => {
      let started = stopwatch();
      for (;;) {
        const next = world.timeline.nextAt();
        if (next === undefined || next > at) break;
        const now = world.clock.now();
        if (next > now) world.clock.advance(next - now);
        await this.runStep(world);
        if (stopwatch() - started >= SLICE_MS) {
          await turn();
          started = stopwatch();
        }
      }
      const now = world.clock.now();
      if (at > now) world.clock.advance(at - now);
    });
  }

  /**
   * The world exactly as playing its timeline from the start to `offsetMs` makes it: built
   * again from the seed at the timeline's start, on a frozen clock, each step up to the offset
   * replayed at its instant, the clock moved to the offset. The clock's scale and frozen setting
   * are then those before the seek, or those the last step replayed gave the clock. Returns
   * how many steps were replayed.
   */
  seek(world: World, offsetMs: number): Promise<number> {
    return this.exclusive(world, async () => {
      const { timeline, clock } = world;
      const settings = { ...clock.status() };
      const start = timeline.startedAt;
      const fromMs = clock.now() - start;
      // The long part of building the stores, in slices, as an import does.
      await world.prepare(world.seedState);
      world.restartAt(start);
      const target = start + offsetMs;
      let replayed = 0;
      let started = stopwatch();
      for (;;) {
        const next = timeline.nextAt();
        if (next === undefined || next > target) break;
        const now = clock.now();
        if (next > now) clock.advance(next - now);
        const step = timeline.peek()!;
        await this.runStep(world);
        replayed++;
        // A step that set the clock's speed: kept for the end, the clock kept frozen meanwhile.
        if (step.request.method === 'PUT' && step.request.path.split('?')[0] === CLOCK_PATH) {
          const { scale, frozen } = clock.status();
          Object.assign(settings, { scale, frozen });
          clock.setFrozen(true);
        }
        if (stopwatch() - started >= SLICE_MS) {
          await turn();
          started = stopwatch();
        }
      }
      const now = clock.now();
      if (target > now) clock.advance(target - now);
      clock.setScale(settings.scale);
      clock.setFrozen(settings.frozen);
      world.events.record({ type: 'timeline.seek', kind: 'timeline', extra: { fromMs, toMs: offsetMs, replayed } });
      return replayed;
    });
  }

  /** Runs `work` once the world's timeline work under way is over, and as the world's only such work. */
  private exclusive<T>(world: World, work: () => Promise<T>): Promise<T> {
    const before = this.running.get(world);
    const run = async (): Promise<T> => {
      if (before) await before.catch(() => undefined);
      this.playing.add(world);
      try {
        return await work();
      } finally {
        this.playing.delete(world);
      }
    };
    const promise = run();
    const settled = promise.catch(() => undefined);
    this.running.set(world, settled);
    void settled.then(() => {
      if (this.running.get(world) === settled) this.running.delete(world);
    });
    return promise;
  }

  /** Plays every step due by now, at the clock's time (a running clock: as late as the world was left alone). */
  private async playDue(world: World): Promise<void> {
    let started = stopwatch();
    while (world.timeline.due(world.clock.now())) {
      await this.runStep(world);
      if (stopwatch() - started >= SLICE_MS) {
        await turn();
        started = stopwatch();
      }
    }
  }

  /** Makes the next step's request in the world, and marks it played. */
  private async runStep(world: World): Promise<void> {
    const step = world.timeline.peek();
    if (!step) return;
    const { method, path, body, headers } = step.request;
    const prefix = world.name === undefined ? '' : `${SANDBOX_PREFIX}${world.name}`;
    const control = path === PATHS.control || path.startsWith(`${PATHS.control}/`) || path.startsWith(`${PATHS.control}?`);
    let status: number;
    try {
      const answer = await this.app.inject({
        method,
        url: `${prefix}${path}`,
        headers: {
          ...headers,
          [CLIENT_HEADER]: TIMELINE_CLIENT,
          ...(control && this.adminToken !== undefined ? { authorization: `Bearer ${this.adminToken}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { payload: JSON.stringify(bodyAt(body, step.at)) } : {}),
      });
      status = answer.statusCode;
    } catch {
      // A fault rule that drops the connection: no answer.
      status = 0;
    }
    world.timeline.played(status);
    world.events.record({
      type: 'timeline.step',
      kind: 'timeline',
      resourceId: step.index,
      extra: { atMs: step.at - world.timeline.startedAt, ...(step.name !== undefined ? { name: step.name } : {}), method, path, status },
    });
  }

  /** A request that changed the world, answered with `status`, added as a step (recording). */
  private recordRequest(world: World, request: FastifyRequest, status: number): void {
    const method = request.method;
    if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH' && method !== 'DELETE') return;
    // A refused request changed nothing; a fault's answer is the world's, not the presenter's.
    if (status >= 400 || status < 200 || request.faultRuleIds) return;
    const path = request.url;
    // The passing of time is the steps' offsets themselves.
    if (path.split('?')[0].startsWith(`${PATHS.control}/clock/advance`)) return;
    const body = request.body;
    // Only JSON bodies (or none) can be written in a step; anything else is not recorded.
    if (body !== undefined && body !== null && (typeof body !== 'object' || Buffer.isBuffer(body))) return;
    const control = path === PATHS.control || path.startsWith(`${PATHS.control}/`);
    const headers: Record<string, string> = {};
    // The credentials of an interface's request, as sent (a seed's token plays again after a seek).
    if (!control) {
      for (const name of ['x-auth-token', 'authorization']) {
        const value = request.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
    }
    const step: StepRequest = {
      method,
      path,
      ...(body !== undefined && body !== null ? { body } : {}),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
    if (requestProblem(step) !== undefined) return;
    if (step.body !== undefined && Buffer.byteLength(JSON.stringify(step.body)) > MAX_STEP_BODY_BYTES) return;
    world.timeline.record(world.clock.now(), structuredClone(step), status);
  }
}
