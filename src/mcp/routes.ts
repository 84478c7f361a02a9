import type { FastifyPluginAsync } from 'fastify';
import { PATHS } from '../http/paths.js';
import type { McpHttpSessions } from './http.js';

export const MCP_PATH = `${PATHS.control}/mcp`;

/**
 * /_emulator/mcp: the MCP server (see docs/agents.md) over the streamable HTTP transport.
 * Under /_emulator, so the admin token is checked as for every control call; the SDK is
 * loaded on the endpoint's first request, so a start neither loads nor runs any of it, and no
 * other request passes through anything of it.
 */
export const mcpRoutes: FastifyPluginAsync<{ url: () => string }> = async (app, { url }) => {
  let sessions: Promise<McpHttpSessions> | undefined;
  const load = () => (sessions ??= import('./http.js').then(({ McpHttpSessions }) => new McpHttpSessions(url)));
  app.addHook('preClose', async () => {
    if (sessions) await (await sessions).close();
  });
  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: MCP_PATH,
    schema: { hide: true },
    handler: async (request, reply) => {
      // A session picks its world itself (?sandbox=); the endpoint belongs to the default world.
      if (request.sandbox !== null) return reply.callNotFound();
      return (await load()).handle(request, reply);
    },
  });
};
