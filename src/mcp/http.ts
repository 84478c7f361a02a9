/**
 * The MCP sessions of /_emulator/mcp, over the SDK's streamable HTTP transport: an
 * initialize request opens a session (its id in the Mcp-Session-Id header), later requests
 * name it, a DELETE ends it. Each session calls the server it runs in over HTTP (server.ts),
 * with the Authorization header that opened it. Loaded on the first request of the endpoint.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { SANDBOX_NAME, SANDBOX_NAME_RULE } from '../world/sandboxes.js';
import { createMcpServer, type Binding } from './server.js';

/** The most sessions open at once: one more ends the one unused longest. */
export const MAX_MCP_SESSIONS = 64;

interface Open {
  transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
}

/** A JSON-RPC error answered over HTTP, before any session handles the request. */
function refuse(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** The world a new session works in, from ?sandbox=<name> or ?world=default; undefined: a sandbox of its own. */
function bindingOf(query: Record<string, unknown>): Binding | string[] {
  const problems: string[] = [];
  for (const name of Object.keys(query)) if (name !== 'sandbox' && name !== 'world') problems.push(`unknown query parameter '${name}': use sandbox=<name> or world=default`);
  const { sandbox, world } = query;
  if (world !== undefined && world !== 'default') problems.push("query 'world': the only value is 'default'");
  if (sandbox !== undefined && (typeof sandbox !== 'string' || !SANDBOX_NAME.test(sandbox))) problems.push(`query 'sandbox': ${SANDBOX_NAME_RULE}`);
  if (sandbox !== undefined && world !== undefined) problems.push('give sandbox or world, not both');
  if (problems.length) return problems;
  return world === 'default' ? null : (sandbox as string | undefined);
}

export class McpHttpSessions {
  /** Open sessions by id, the one used last at the end. */
  private readonly sessions = new Map<string, Open>();

  /** `url`: where the server this runs in listens (known once it listens). */
  constructor(private readonly url: () => string) {}

  get size(): number {
    return this.sessions.size;
  }

  async handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const header = request.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header[0] : header;
    if (id !== undefined) {
      const open = this.sessions.get(id);
      if (!open) return refuse(reply, 404, `no MCP session '${id.slice(0, 80)}': it ended or was never opened; initialize a new one`);
      this.sessions.delete(id);
      this.sessions.set(id, open);
      return this.serve(open.transport, request, reply);
    }
    if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
      return refuse(reply, 400, 'no Mcp-Session-Id header: the first request of a session is an initialize request (POST)');
    }
    const binding = bindingOf(request.query as Record<string, unknown>);
    if (Array.isArray(binding)) return refuse(reply, 400, binding.join('; '));
    if (this.sessions.size >= MAX_MCP_SESSIONS) {
      const [oldest] = this.sessions.keys();
      await this.sessions.get(oldest)?.close();
    }
    const { authorization } = request.headers;
    const { server } = createMcpServer({ url: this.url(), ...(authorization ? { authorization } : {}) }, binding);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        this.sessions.set(sessionId, { transport, close: () => server.close() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return this.serve(transport, request, reply);
  }

  private async serve(transport: StreamableHTTPServerTransport, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
    return reply;
  }

  /** Ends every session (the app closes). */
  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((open) => open.close().catch(() => undefined)));
    this.sessions.clear();
  }
}
