/**
 * One MCP session (the official SDK's low-level Server): the tools of the control API
 * (tools.ts), three of its own (use_sandbox, wait_for, request) and four resources. It talks
 * to a running emulator over HTTP only, as any client does: the stdio command to the URL it is
 * given, the endpoint /_emulator/mcp to the server it runs in. Every call is the control API's
 * own request, with the session's Authorization header, so the routes validate, answer and
 * refuse it as they would anyone's. Loaded only when an MCP session starts.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { EmulatorClient, EmulatorError, type LifecycleKind } from '../client/index.js';
import { PATHS } from '../http/paths.js';
import { version } from '../config.js';
import { packageRoot } from '../core/package-root.cjs';
import { EVENT_KINDS, EVENT_TYPES } from '../world/event-types.js';
import { SANDBOX_NAME, SANDBOX_NAME_RULE } from '../world/sandboxes.js';
import { ToolArgumentError, refuseUnknown, requestOf, toolsOf, type ControlTool, type JsonSchema, type OpenApiDocument, type ToolAnnotations } from './tools.js';

/** Where a session finds the emulator, and the credentials it calls it with. */
export interface Connection {
  /** The emulator's base URL, without a sandbox, e.g. http://127.0.0.1:8080. */
  url: string;
  /** Sent on every call: `Bearer <ADMIN_TOKEN>` when the emulator has one. */
  authorization?: string;
  fetch?: typeof fetch;
}

/**
 * The world a session works in: a sandbox by name (created when missing), null for the default
 * world, undefined for a sandbox of its own, named mcp-<random>, created on the first call
 * that needs it and deleted when the session ends.
 */
export type Binding = string | null | undefined;

/** How long wait_for waits at most (real time), and by default. */
const MAX_WAIT_MS = 10 * 60 * 1000;
const DEFAULT_WAIT_MS = 30_000;
/** The most of an answer's text a tool result carries. */
const MAX_TEXT = 256 * 1024;
const LIFECYCLE_KINDS: readonly LifecycleKind[] = ['grid', 'server', 'rsdb', 'environment', 'instance'];

/** Answers of the control API are JSON; anything else is kept as text. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function result(value: unknown, isError = false): CallToolResult {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? { structuredContent: value as Record<string, unknown> } : {};
  return { content: [{ type: 'text', text: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\n... (cut at ${MAX_TEXT} characters)` : text }], ...structured, ...(isError ? { isError } : {}) };
}

const failure = (message: string): CallToolResult => result(message, true);

/** The tools a session has besides those of the control API. */
interface OwnTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
  run(args: Record<string, unknown>): Promise<CallToolResult>;
}

interface SendOptions {
  query?: Record<string, string>;
  body?: unknown;
  /** In the session's world (under /sandbox/<name>), not from the root. */
  world?: boolean;
  headers?: Record<string, string>;
}

/** The OpenAPI document of each emulator, read once per process. */
const documents = new Map<string, Promise<OpenApiDocument>>();

export class Session {
  private sandbox: string | null;
  /** The sandbox is this session's own: made by it, deleted with it. */
  private own: boolean;
  /** The sandbox is known to exist (found or created). */
  private ready = false;
  /** The deletion of its own sandbox, once the session has ended. */
  private ending: Promise<void> | undefined;
  /** The first look for (or creation of) the sandbox, while it runs. */
  private ensuring: Promise<boolean> | undefined;
  private readonly fetcher: typeof fetch;

  constructor(
    private readonly connection: Connection,
    binding: Binding,
  ) {
    this.own = binding === undefined;
    this.sandbox = binding === undefined ? `mcp-${randomBytes(4).toString('hex')}` : binding;
    this.fetcher = connection.fetch ?? globalThis.fetch;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'user-agent': `cloud-emulator-mcp/${version()}`, ...(this.connection.authorization ? { authorization: this.connection.authorization } : {}), ...extra };
  }

  /** One HTTP request to the emulator: `path` from the root, or (world) in the session's world. */
  async send(method: string, path: string, options: SendOptions = {}) {
    const prefix = options.world && this.sandbox !== null ? `/sandbox/${this.sandbox}` : '';
    const query = options.query && Object.keys(options.query).length ? `?${new URLSearchParams(options.query)}` : '';
    const json = options.body !== undefined && typeof options.body !== 'string';
    const res = await this.fetcher(`${this.connection.url}${prefix}${path}${query}`, {
      method,
      headers: this.headers({ ...(json ? { 'content-type': 'application/json' } : {}), ...options.headers }),
      ...(options.body !== undefined ? { body: json ? JSON.stringify(options.body) : (options.body as string) } : {}),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  /**
   * Makes sure the session's sandbox exists (creating it from the seed when missing); its name,
   * or null. Calls made at once wait for the one creation, which a second PUT would replace.
   */
  async ensureWorld(): Promise<string | null> {
    if (this.sandbox === null || this.ready) return this.sandbox;
    const name = this.sandbox;
    this.ensuring ??= this.findOrCreate(name, true).finally(() => (this.ensuring = undefined));
    await this.ensuring;
    if (this.sandbox === name) this.ready = true;
    return this.sandbox;
  }

  /** Finds the sandbox `name`, or creates it from the seed (PUT, within MAX_SANDBOXES) when `create`; true when created. */
  private async findOrCreate(name: string, create: boolean): Promise<boolean> {
    const path = `${PATHS.control}/sandboxes/${name}`;
    const found = await this.send('GET', path);
    if (found.status === 200) return false;
    if (found.status !== 404 || !create) throw new ToolArgumentError(`no sandbox '${name}': ${found.status} ${messageOf(found.text)}`);
    const made = await this.send('PUT', path);
    if (made.status !== 201 && made.status !== 200) {
      throw new ToolArgumentError(`cannot create sandbox '${name}': ${made.status} ${messageOf(made.text)} (use_sandbox with sandbox null works in the default world)`);
    }
    return true;
  }

  /** A typed client of the session's world (for waiting on its event stream). */
  client(): EmulatorClient {
    const { authorization } = this.connection;
    return new EmulatorClient(this.connection.url, {
      ...(this.sandbox !== null ? { sandbox: this.sandbox } : {}),
      ...(this.connection.fetch ? { fetch: this.connection.fetch } : {}),
      headers: { 'user-agent': `cloud-emulator-mcp/${version()}`, ...(authorization ? { authorization } : {}) },
    });
  }

  /** What the session works in: its world and the base URLs a system under test is given. */
  where(): Record<string, unknown> {
    const client = this.client();
    return { world: this.sandbox === null ? 'default' : 'sandbox', sandbox: this.sandbox, own: this.own, baseUrl: client.url, urls: client.urls };
  }

  /** Binds the session to another world; the sandbox it made itself is deleted. */
  async bind(sandbox: string | null, create: boolean): Promise<{ created: boolean }> {
    if (sandbox !== null && !SANDBOX_NAME.test(sandbox)) throw new ToolArgumentError(`sandbox name '${sandbox.slice(0, 80)}' is not valid: use ${SANDBOX_NAME_RULE}`);
    const created = sandbox !== null && (await this.findOrCreate(sandbox, create));
    if (sandbox !== this.sandbox) await this.end();
    this.sandbox = sandbox;
    this.own = false;
    this.ready = true;
    return { created };
  }

  /** The session is over: the sandbox it made itself goes with it. */
  end(): Promise<void> {
    if (!this.own || !this.ready || this.sandbox === null) return this.ending ?? Promise.resolve();
    this.ready = false;
    this.ending = this.send('DELETE', `${PATHS.control}/sandboxes/${this.sandbox}`).then(
      () => undefined,
      () => undefined,
    );
    return this.ending;
  }

  document(): Promise<OpenApiDocument> {
    const key = this.connection.url;
    let document = documents.get(key);
    if (!document) {
      document = this.send('GET', PATHS.openapi).then(({ status, text }) => {
        if (status !== 200) throw new Error(`GET ${PATHS.openapi}: ${status} ${messageOf(text)}`);
        return JSON.parse(text) as OpenApiDocument;
      });
      // A failed read is tried again by the next session.
      document.catch(() => documents.delete(key));
      documents.set(key, document);
    }
    return document;
  }
}

function messageOf(text: string): string {
  const body = parsed(text) as { message?: unknown };
  return typeof body?.message === 'string' ? body.message : text.slice(0, 500);
}

/** Runs a tool of the control API: the operation's request, in the session's world (or the default one, for sandboxes). */
async function runControlTool(session: Session, tool: ControlTool, args: Record<string, unknown>): Promise<CallToolResult> {
  const request = requestOf(tool, args);
  if (!tool.root) await session.ensureWorld();
  const answer = await session.send(request.method, request.path, { query: request.query, body: request.body, world: !tool.root });
  if (answer.status >= 400) return failure(`${request.method} ${request.path}: ${answer.status} ${messageOf(answer.text)}`);
  if (answer.status === 204 || answer.text === '') return result({ status: answer.status, done: tool.operationId });
  return result(parsed(answer.text));
}

function ownTools(session: Session): OwnTool[] {
  return [
    {
      name: 'use_sandbox',
      description:
        "Chooses the world this session works in: a sandbox by name (created from the seed when missing, unless create is false), or null for the emulator's default world. " +
        'Without arguments, tells which world the session works in. Answers the base URLs to give the system under test. ' +
        'A session starts in a sandbox of its own, made on its first call and deleted when it ends.',
      inputSchema: {
        type: 'object',
        properties: {
          sandbox: { type: ['string', 'null'], description: `a sandbox name (${SANDBOX_NAME_RULE}), or null for the default world` },
          create: { type: 'boolean', description: 'create the sandbox when it does not exist (default true)' },
        },
        additionalProperties: false,
      },
      annotations: { title: 'Choose the world of the session', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(args) {
        refuseUnknown('use_sandbox', args, ['sandbox', 'create']);
        if (args.sandbox === undefined) {
          await session.ensureWorld();
          return result(session.where());
        }
        if (args.sandbox !== null && typeof args.sandbox !== 'string') throw new ToolArgumentError("argument 'sandbox' must be a sandbox name or null");
        const { created } = await session.bind(args.sandbox, args.create !== false);
        return result({ ...session.where(), created });
      },
    },
    {
      name: 'wait_for',
      description:
        "Waits, reading the event stream of the session's world, until a resource is in a state (kind, id, state) or until an event comes (types, and optionally kind and id); " +
        'at once when the resource already is in the state. Fails after timeoutMs of real time. Emulated time must pass meanwhile: a faster clock, or advance_clock from another call.',
      inputSchema: {
        type: 'object',
        properties: {
          kind: { type: 'string', enum: [...EVENT_KINDS], description: `with state, one of ${LIFECYCLE_KINDS.join(', ')} (a cloud server is 'server', a composition instance 'instance')` },
          id: { type: ['string', 'integer'], description: "the resource's id (a composition instance's instanceID)" },
          state: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1 }], description: 'the state, or any of the states, to wait for' },
          types: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] }, minItems: 1, description: 'instead of a state: wait for the next event of one of these types' },
          timeoutMs: { type: 'integer', minimum: 1, maximum: MAX_WAIT_MS, description: `real time to wait at most (default ${DEFAULT_WAIT_MS})` },
        },
        additionalProperties: false,
      },
      annotations: { title: 'Wait for a state or an event', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(args) {
        refuseUnknown('wait_for', args, ['kind', 'id', 'state', 'types', 'timeoutMs']);
        const timeoutMs = args.timeoutMs ?? DEFAULT_WAIT_MS;
        if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_WAIT_MS) {
          throw new ToolArgumentError(`argument 'timeoutMs' must be an integer from 1 to ${MAX_WAIT_MS}`);
        }
        await session.ensureWorld();
        const client = session.client();
        if (args.state !== undefined) {
          if (!LIFECYCLE_KINDS.includes(args.kind as LifecycleKind)) throw new ToolArgumentError(`argument 'kind' must be one of ${LIFECYCLE_KINDS.join(', ')} to wait for a state`);
          if (typeof args.id !== 'string' && typeof args.id !== 'number') throw new ToolArgumentError("argument 'id' is needed to wait for a state");
          const state = args.state as string | string[];
          return result(await client.waitFor({ kind: args.kind as LifecycleKind, id: args.id, state }, { timeoutMs }));
        }
        if (!Array.isArray(args.types)) throw new ToolArgumentError("give either state (with kind and id) or types");
        const stop = new AbortController();
        const timer = setTimeout(() => stop.abort(), timeoutMs);
        try {
          const filter = { types: args.types, ...(args.kind !== undefined ? { kind: args.kind } : {}), ...(args.id !== undefined ? { id: args.id } : {}) } as Parameters<EmulatorClient['events']>[0];
          for await (const event of client.events({ ...filter, signal: stop.signal })) if (event.type !== 'stream.reset') return result(event);
          return failure(stop.signal.aborted ? `waited ${timeoutMs} ms for an event of type ${(args.types as string[]).join(' or ')}` : 'the event stream ended');
        } finally {
          clearTimeout(timer);
          stop.abort();
        }
      },
    },
    {
      name: 'request',
      description:
        "Sends an HTTP request to an emulated interface in the session's world, as the system under test would (it is journaled, faults apply, and most paths need an X-Auth-Token header: " +
        'list_users lists the tokens). path is from the root, e.g. POST /concerto/services/rest/CloudService/v1/grid/101/action with the body {"action":"start"}; ' +
        'alerts are fired and cleared here too (POST /concerto/mpulse/api/alerts/<uid>/fire). The control API is reached through the other tools.',
      inputSchema: {
        type: 'object',
        properties: {
          method: { type: 'string', pattern: '^[A-Za-z]+$', description: 'GET, PUT, POST, PATCH, DELETE, ...' },
          path: { type: 'string', pattern: '^/', description: 'the path (with its query, if any), as on the service' },
          headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'e.g. {"X-Auth-Token": "demo-token"}' },
          body: { description: 'a JSON body (sent as application/json), or a string sent as it is' },
        },
        required: ['method', 'path'],
        additionalProperties: false,
      },
      annotations: { title: 'Send a request to an emulated interface', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      async run(args) {
        refuseUnknown('request', args, ['method', 'path', 'headers', 'body']);
        const { method, path, headers = {} } = args as { method: unknown; path: unknown; headers?: unknown };
        if (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method)) throw new ToolArgumentError("argument 'method' must be an HTTP method");
        if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//')) throw new ToolArgumentError("argument 'path' must be a path starting with /");
        const lower = path.toLowerCase();
        if (lower === PATHS.control || lower.startsWith(`${PATHS.control}/`) || lower.startsWith(`${PATHS.control}?`) || lower.startsWith('/sandbox/')) {
          throw new ToolArgumentError(`argument 'path': the control API and other sandboxes are not reached through request (use the other tools, and use_sandbox)`);
        }
        if (typeof headers !== 'object' || headers === null || Object.values(headers).some((v) => typeof v !== 'string')) throw new ToolArgumentError("argument 'headers' must map names to strings");
        await session.ensureWorld();
        const answer = await session.send(method.toUpperCase(), path, { body: args.body, world: true, headers: headers as Record<string, string> });
        const shown = ['content-type', 'location', 'retry-after', 'www-authenticate', 'x-emulator-fault'];
        const answered = Object.fromEntries(shown.flatMap((name) => (answer.headers.get(name) !== null ? [[name, answer.headers.get(name)]] : [])));
        return result({ status: answer.status, headers: answered, body: answer.text === '' ? null : parsed(answer.text) }, answer.status >= 400);
      },
    },
  ];
}

/** The resources of a session, each read when asked. */
function resources(session: Session) {
  const control = async (path: string) => {
    await session.ensureWorld();
    const { status, text } = await session.send('GET', `${PATHS.control}${path}`, { world: true });
    if (status !== 200) throw new Error(`GET ${PATHS.control}${path}: ${status} ${messageOf(text)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  return [
    {
      uri: 'emulator://world/lifecycles',
      name: 'lifecycles',
      description: "The lifecycle tables, their durations, and where every resource of the session's world is (GET /_emulator/lifecycles)",
      mimeType: 'application/json',
      read: async () => JSON.stringify(await control('/lifecycles'), null, 2),
    },
    {
      uri: 'emulator://world/summary',
      name: 'world summary',
      description: "The session's world: which one, the base URLs for the system under test, its clock, counts of every kind of resource, fault rules",
      mimeType: 'application/json',
      read: async () => {
        const { clock, counts, faultRules } = await control('/health');
        return JSON.stringify({ ...session.where(), clock, counts, faultRules }, null, 2);
      },
    },
    {
      uri: 'emulator://openapi.json',
      name: 'OpenAPI document',
      description: 'Every route of the emulator, the emulated interfaces and the control API, with every body and answer',
      mimeType: 'application/json',
      read: async () => JSON.stringify(await session.document()),
    },
    {
      uri: 'emulator://behaviour-reference.md',
      name: 'behaviour reference',
      description: 'What the emulated service does, call by call, and what the emulator does not do',
      mimeType: 'text/markdown',
      read: () =>
        readFile(join(packageRoot(), 'docs', 'behaviour-reference.md'), 'utf8').catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
          throw new Error('the behaviour reference is not installed here (the container image holds no documentation): read docs/behaviour-reference.md of the package');
        }),
    },
  ];
}

/** An MCP server for one session, on `connection`, working in the world `binding` says. */
export function createMcpServer(connection: Connection, binding: Binding): { server: Server; session: Session } {
  const session = new Session(connection, binding);
  const server = new Server(
    { name: 'cloud-emulator', version: version() },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Steers a cloud-emulator: a stateful emulator of a cloud load-testing service with a virtual clock. ' +
        'This session works in a sandbox of its own (use_sandbox tells which, and the URLs to give the system under test). ' +
        'Typical: set_next_start, then start the resource through request, advance_clock with until, get_lifecycle; find_requests shows what was sent.',
    },
  );
  const own = ownTools(session);
  const listed = resources(session);
  const controlTools = async () => toolsOf(await session.document());

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...(await controlTools()), ...own].map(({ name, description, inputSchema, annotations }) => ({ name, description, inputSchema: inputSchema as { type: 'object' }, annotations })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    try {
      const mine = own.find((t) => t.name === name);
      if (mine) return await mine.run(args);
      const tool = (await controlTools()).find((t) => t.name === name);
      if (!tool) return failure(`no tool '${name}'`);
      return await runControlTool(session, tool, args);
    } catch (err) {
      if (err instanceof ToolArgumentError || err instanceof EmulatorError) return failure(err.message);
      return failure(`${name}: the emulator at ${connection.url} did not answer (${err instanceof Error ? err.message : String(err)})`);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: listed.map(({ uri, name, description, mimeType }) => ({ uri, name, description, mimeType })),
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const found = listed.find((r) => r.uri === request.params.uri);
    if (!found) throw new Error(`no resource '${request.params.uri}'`);
    return { contents: [{ uri: found.uri, mimeType: found.mimeType, text: await found.read() }] };
  });

  const closed = server.onclose;
  server.onclose = () => {
    closed?.();
    void session.end();
  };
  return { server, session };
}
