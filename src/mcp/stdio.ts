/**
 * `cloud-emulator mcp`: one MCP session over stdio (the SDK's transport), steering the
 * emulator at a URL over HTTP. Standard output carries the protocol alone. Loaded by that
 * command only.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, type Binding } from './server.js';

export interface StdioOptions {
  url: string;
  adminToken?: string;
  sandbox?: Binding;
}

/** Serves one session on stdin and stdout until the client closes stdin; the session's own sandbox is deleted then. */
export async function serveStdio(options: StdioOptions): Promise<void> {
  const { server, session } = createMcpServer({ url: options.url, ...(options.adminToken !== undefined ? { authorization: `Bearer ${options.adminToken}` } : {}) }, options.sandbox);
  const closed = new Promise<void>((resolve) => {
    const before = server.onclose;
    server.onclose = () => {
      before?.();
      resolve();
    };
  });
  process.stdin.once('end', () => void server.close());
  await server.connect(new StdioServerTransport());
  await closed;
  // The session's own sandbox is deleted before the process ends.
  await session.end();
}
