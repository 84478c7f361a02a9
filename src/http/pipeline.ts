import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/**
 * A step of the one onRequest hook every request passes: true when the request goes on,
 * false when the step answered it (and so nothing after it runs).
 */
export type RequestStep = (request: FastifyRequest, reply: FastifyReply) => boolean;

/** A step that marks the request or its answer and never answers. */
export type RequestMark = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * A step that may wait before the request goes on (a fault's latency): it calls
 * `next(request, reply, done)` when the request goes on, at once or later, and nothing when it
 * answered the request; an error it meets while waiting goes to `done`.
 */
export type WaitingStep = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, next: Continue) => void;
export type Continue = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

export interface RequestPipeline {
  /** Marks every answer (headers); never answers. */
  mark: readonly RequestMark[];
  /** Steps before the waiting one, in order. */
  before: readonly RequestStep[];
  /** The step that may wait (fault injection). */
  wait: WaitingStep;
  /** Steps after it, in order. */
  after: readonly RequestStep[];
}

/**
 * Installs the steps every request passes before routing's own hooks as ONE callback
 * onRequest hook. Each hook costs a request a turn of Fastify's hook runner; the root used to
 * have seven (request id, CORS, area, world, preflight, control API and faults, token guard),
 * run on every request whatever it was. The order is the steps' order; a step that answers
 * ends the request as a hook that answers without calling `done` does.
 */
export function installPipeline(app: FastifyInstance, { mark, before, wait, after }: RequestPipeline): void {
  const runAfter: Continue = (request, reply, done) => {
    for (let i = 0; i < after.length; i++) if (!after[i](request, reply)) return;
    done();
  };
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    for (let i = 0; i < mark.length; i++) mark[i](request, reply);
    for (let i = 0; i < before.length; i++) if (!before[i](request, reply)) return;
    wait(request, reply, done, runAfter);
  });
}
