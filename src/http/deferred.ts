import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

/**
 * Running a Fastify plugin after start, on its first use. A plugin is registered before the
 * server is ready, and its module is loaded and run then; a plugin whose work only a later
 * request needs (the OpenAPI document, the API reference, the dashboard's files) is instead
 * run against a PluginRecorder when first asked for: the recorder takes down what it does to
 * the instance it is given (its hooks, decorations, routes, the plugins it registers in turn),
 * and the stand-in registered at start hands the request to what was recorded. The stand-in
 * declares at start what the server routes (the router is built then); the recorded routes
 * must match it (test/http/deferred.test.ts compares them).
 */

/** A route as a recorded plugin adds it, its url with the prefixes of the plugins above it. */
export interface RecordedRoute {
  url: string;
  method: string | string[];
  handler: (this: unknown, request: FastifyRequest, reply: FastifyReply) => unknown;
  errorHandler?: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown;
  options: Record<string, unknown>;
}

type Plugin = (instance: never, options: never, done: (err?: Error) => void) => unknown;

const SKIP_OVERRIDE = Symbol.for('skip-override');

/**
 * The instance a deferred plugin is run against. It has what the plugins run this way use of
 * an instance; a plugin that uses more fails on its first use (tests run each of them).
 */
export class PluginRecorder {
  readonly routes: RecordedRoute[] = [];
  readonly hooks: Array<{ name: string; fn: (...args: never[]) => unknown }> = [];
  readonly replyDecorations = new Map<string, unknown>();
  private readonly pending: Array<Promise<void>>;
  [decoration: string]: unknown;

  /**
   * `real`: the instance the stand-in is registered on, whose logger and error handler the
   * plugin is given. `prefix`: the prefix of the routes recorded (the plugins' own prefixes are added).
   */
  constructor(
    private readonly real: FastifyInstance,
    private readonly prefix = '',
    pending?: Array<Promise<void>>,
    decorations: Record<string, unknown> = {},
  ) {
    this.pending = pending ?? [];
    Object.assign(this, decorations);
  }

  get log(): FastifyInstance['log'] {
    return this.real.log;
  }

  get errorHandler(): FastifyInstance['errorHandler'] {
    return this.real.errorHandler;
  }

  addHook(name: string, fn: (...args: never[]) => unknown): this {
    this.hooks.push({ name, fn });
    return this;
  }

  decorate(name: string, value: unknown): this {
    this[name] = value;
    return this;
  }

  decorateReply(name: string, value: unknown): this {
    this.replyDecorations.set(name, value);
    return this;
  }

  route(options: RouteOptions & { path?: string }): this {
    const { url, path, method, handler, errorHandler, ...rest } = options;
    this.routes.push({
      url: this.prefix + (url ?? path ?? ''),
      method,
      handler: handler as RecordedRoute['handler'],
      ...(errorHandler ? { errorHandler: errorHandler as RecordedRoute['errorHandler'] } : {}),
      options: rest,
    });
    return this;
  }

  get(url: string, options: Partial<RouteOptions>, handler: RouteOptions['handler']): this {
    return this.route({ ...options, method: 'GET', url, handler } as RouteOptions);
  }

  /**
   * Runs a plugin against this recorder (one wrapped by fastify-plugin) or a child of it
   * with the plugin's prefix; the plugin may finish by its callback or its promise.
   */
  register(plugin: Plugin, options: Record<string, unknown> = {}): Promise<void> {
    const own = (plugin as unknown as Record<symbol, unknown>)[SKIP_OVERRIDE] === true;
    const { prefix, ...rest } = options;
    const inherited = Object.fromEntries(Object.entries(this).filter(([key]) => !PluginRecorder.OWN.has(key)));
    const target = own ? this : new PluginRecorder(this.real, this.prefix + (typeof prefix === 'string' ? prefix : ''), this.pending, inherited);
    const run = new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => (err ? reject(err) : resolve());
      try {
        const result = plugin(target as never, { ...rest, ...(prefix !== undefined ? { prefix } : {}) } as never, done) as Promise<void> | undefined;
        if (result && typeof result.then === 'function') result.then(() => resolve(), reject);
      } catch (err) {
        reject(err as Error);
      }
    }).then(() => {
      if (target !== this) {
        this.routes.push(...target.routes);
        this.hooks.push(...target.hooks);
        for (const [name, value] of target.replyDecorations) this.replyDecorations.set(name, value);
      }
    });
    this.pending.push(run);
    return run;
  }

  /** Runs a plugin, and every plugin it registers, to their end. */
  async run(plugin: Plugin, options: Record<string, unknown> = {}): Promise<this> {
    await this.register(plugin, options);
    // A plugin may register others without waiting for them (as avvio lets it).
    for (let done = 0; done < this.pending.length; done = this.pending.length) await Promise.all(this.pending.slice(done));
    return this;
  }

  /** The recorded route of this url (prefixes included) and method. */
  routeOf(url: string, method: string): RecordedRoute | undefined {
    return this.routes.find((r) => r.url === url && [r.method].flat().includes(method));
  }

  private static readonly OWN = new Set(['routes', 'hooks', 'replyDecorations', 'pending', 'real', 'prefix']);
}
