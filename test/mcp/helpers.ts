import { expect } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

/** A tool's answer as the SDK's client hands it over. */
export type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ type?: string; text?: string }> };

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  return (await client.callTool({ name, arguments: args })) as ToolAnswer;
}

/** Calls a tool that must succeed (the failure's text is shown otherwise); its structured answer. */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const answer = await call(client, name, args);
  expect(answer.isError, `${name}: ${answer.content[0]?.text}`).toBeFalsy();
  return answer.structuredContent ?? {};
}

/** The request that starts grid 101 of the demo seed, as the system under test sends it. */
export const START_GRID_101 = {
  method: 'POST',
  path: '/concerto/services/rest/CloudService/v1/grid/101/action',
  headers: { 'X-Auth-Token': 'demo-token' },
  body: { action: 'start' },
};
