import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';
import { ToolArgumentError, WITHOUT_TOOL, requestOf, toolsOf, type OpenApiDocument } from '../../src/mcp/tools.js';

/** The OpenAPI document of an app, made from its routes. */
async function documentOf(): Promise<OpenApiDocument> {
  const { app } = await makeApp();
  try {
    await app.ready();
    return app.swagger() as unknown as OpenApiDocument;
  } finally {
    await app.close();
  }
}

describe('the MCP tools of the control API', () => {
  it('has a tool for every operation of the control API, or a reason on the short list of those without one', async () => {
    const document = await documentOf();
    const tools = toolsOf(document);
    const operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/_emulator'))
      .flatMap(([path, item]) => Object.keys(item).filter((m) => m !== 'head').map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations.length).toBeGreaterThan(30);
    const uncovered = operations.filter((o) => !(o in WITHOUT_TOOL) && !tools.some((t) => `${t.method} ${t.path}` === o));
    expect(uncovered, 'control operations with neither a tool (give the route an operationId) nor an entry in WITHOUT_TOOL (src/mcp/tools.ts)').toEqual([]);
    // The list names operations that exist, each with its reason.
    for (const [operation, reason] of Object.entries(WITHOUT_TOOL)) {
      expect(operations, operation).toContain(operation);
      expect(reason.length).toBeGreaterThan(20);
    }
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    for (const t of tools) expect(t.name).toMatch(/^[a-z][a-z0-9_]*$/);
  });

  it("takes the route's own schemas: path and query parameters, and the body", async () => {
    const document = await documentOf();
    const tools = toolsOf(document);
    const advance = tools.find((t) => t.name === 'advance_clock')!;
    const route = document.paths['/_emulator/clock/advance'].post.requestBody!.content!['application/json'].schema!;
    expect(advance.inputSchema.properties).toEqual({ body: { ...route, description: `the request body: ${route.description}` } });
    expect(advance.description).toContain('Move time forward');
    const journal = tools.find((t) => t.name === 'list_journal')!;
    expect(journal.queryParams).toEqual(expect.arrayContaining(['method', 'status', 'limit']));
    // The whole state's schema is too long to list: the tool points to the document.
    const importState = tools.find((t) => t.name === 'import_state')!;
    expect(JSON.stringify(importState.inputSchema.properties)).toContain('emulator://openapi.json');
    // Sandboxes are managed from the default world.
    expect(tools.filter((t) => t.root).map((t) => t.name).sort()).toEqual(['delete_sandbox', 'get_sandbox', 'list_sandboxes', 'put_sandbox']);
  });

  it("turns arguments into the operation's request, refusing those it does not take", async () => {
    const tools = toolsOf(await documentOf());
    const nextStart = tools.find((t) => t.name === 'set_next_start')!;
    expect(requestOf(nextStart, { kind: 'grid', id: 101, body: { outcome: 'ALLOCATE_FAILED' } })).toEqual({
      method: 'PUT',
      path: '/_emulator/lifecycles/grid/101/next-start',
      query: {},
      body: { outcome: 'ALLOCATE_FAILED' },
    });
    expect(requestOf(tools.find((t) => t.name === 'get_fault')!, { id: 'a/b' }).path).toBe('/_emulator/faults/a%2Fb');
    expect(requestOf(tools.find((t) => t.name === 'reset')!, { clock: 'real' })).toEqual({ method: 'POST', path: '/_emulator/reset', query: { clock: 'real' } });
    expect(() => requestOf(nextStart, { kind: 'grid', id: 101, outcome: 'X' })).toThrow(new ToolArgumentError("unknown argument 'outcome': set_next_start takes kind, id, body"));
    expect(() => requestOf(nextStart, { kind: 'grid' })).toThrow(/missing argument 'id'/);
    expect(() => requestOf(nextStart, { kind: { a: 1 }, id: 1 })).toThrow(/argument 'kind' must be a string or a number/);
  });
});
