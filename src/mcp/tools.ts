/**
 * The MCP tools of the control API, made from its OpenAPI document (which is made from the
 * routes' own schemas): one tool per operation, named after its operationId, described by its
 * summary, taking its path and query parameters and its body as arguments. A call becomes the
 * HTTP request of that operation, so the route itself validates it, answers it and is the one
 * place that behaves. No MCP code here: the SDK is loaded only by a session (server.ts).
 */
import { PATHS } from '../http/paths.js';

export type JsonSchema = Record<string, unknown>;

interface OpenApiParameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}

export interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

/** The part of an OpenAPI 3.1 document the tools are made from. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/**
 * Operations of the control API that have no tool, each with the reason. Every other
 * operation has one (test/mcp/tools.test.ts fails otherwise).
 */
export const WITHOUT_TOOL: Readonly<Record<string, string>> = {
  'GET /_emulator': 'the index of the control API: the list of tools is its MCP form',
  'GET /_emulator/events': 'a stream that does not end, which no tool result can hold: the wait_for tool reads it until the state or event waited for',
};

/** Operations that replace or remove state (a DELETE always does). */
const REPLACING = new Set(['reset', 'importState', 'putSandbox']);

/** The paths served by the default world alone: sandboxes are managed from there. */
const ROOT_ONLY = `${PATHS.control}/sandboxes`;

/** A body schema longer than this (the whole state's) is not listed in the tool; the OpenAPI document has it. */
const MAX_LISTED_BODY_SCHEMA = 4096;

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A tool made from one operation of the control API. */
export interface ControlTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
  operationId: string;
  method: string;
  /** The operation's path, `{param}` for each parameter, e.g. /_emulator/lifecycles/{kind}/{id}. */
  path: string;
  /** Served by the default world whatever world the session works in (sandbox management). */
  root: boolean;
  pathParams: readonly string[];
  queryParams: readonly string[];
  hasBody: boolean;
}

/** An argument a tool cannot turn into its request: the call is answered with this message. */
export class ToolArgumentError extends Error {}

/** `advanceClock` -> `advance_clock`: the usual spelling of tool names. */
export const toolName = (operationId: string): string => operationId.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** `#/components/schemas/X` replaced by X itself, so that the schema stands alone. */
function inline(schema: unknown, components: Record<string, JsonSchema>, depth = 0): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, components, depth));
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/') && depth < 16) {
    const target = components[ref.slice('#/components/schemas/'.length)];
    if (target) return inline(target, components, depth + 1);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inline(v, components, depth)]));
}

function bodySchemaOf(operation: OpenApiOperation, components: Record<string, JsonSchema>): JsonSchema | undefined {
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  if (!schema) return undefined;
  const full = inline(schema, components) as JsonSchema;
  if (JSON.stringify(full).length <= MAX_LISTED_BODY_SCHEMA) return { ...full, description: `the request body${full.description ? `: ${String(full.description)}` : ''}` };
  return {
    type: 'object',
    description: `the request body, a JSON object: its schema is the requestBody of ${operation.operationId} in the OpenAPI document (resource emulator://openapi.json)`,
  };
}

/** The tool of one operation; undefined for an operation without an operationId. */
function toolOf(method: string, path: string, operation: OpenApiOperation, components: Record<string, JsonSchema>): ControlTool | undefined {
  const { operationId } = operation;
  if (!operationId) return undefined;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const pathParams: string[] = [];
  const queryParams: string[] = [];
  for (const p of operation.parameters ?? []) {
    if (p.in !== 'path' && p.in !== 'query') continue;
    const schema = inline(p.schema ?? {}, components) as JsonSchema;
    // A path parameter is a segment of text; an id may be given as a number all the same.
    const given = p.in === 'path' && schema.type === 'string' ? { ...schema, type: ['string', 'integer'] } : schema;
    properties[p.name] = { ...given, ...(p.description ? { description: p.description } : {}) };
    if (p.in === 'path') {
      pathParams.push(p.name);
      required.push(p.name);
    } else {
      queryParams.push(p.name);
      if (p.required) required.push(p.name);
    }
  }
  const body = bodySchemaOf(operation, components);
  if (body) properties.body = body;
  const upper = method.toUpperCase();
  const root = path === ROOT_ONLY || path.startsWith(`${ROOT_ONLY}/`);
  const where = root ? 'Sandboxes are managed from the default world, whatever world the session works in.' : "Runs in the session's world (see use_sandbox).";
  return {
    name: toolName(operationId),
    description: `${operation.summary ?? operationId}. ${where} (${upper} ${path})`,
    inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    annotations: {
      title: operation.summary ?? operationId,
      readOnlyHint: upper === 'GET',
      destructiveHint: upper === 'DELETE' || REPLACING.has(operationId),
      idempotentHint: upper === 'GET' || upper === 'PUT' || upper === 'DELETE',
      openWorldHint: false,
    },
    operationId,
    method: upper,
    path,
    root,
    pathParams,
    queryParams,
    hasBody: body !== undefined,
  };
}

/** A tool for every operation of the control API in the document, but those WITHOUT_TOOL (and those without an operationId). */
export function toolsOf(document: OpenApiDocument): ControlTool[] {
  const components = document.components?.schemas ?? {};
  const tools: ControlTool[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (path !== PATHS.control && !path.startsWith(`${PATHS.control}/`)) continue;
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'head' || `${method.toUpperCase()} ${path}` in WITHOUT_TOOL) continue;
      const tool = toolOf(method, path, operation, components);
      if (tool) tools.push(tool);
    }
  }
  return tools;
}

/** Refuses an argument the tool `name` does not take: `known` are those it does. */
export function refuseUnknown(name: string, args: Record<string, unknown>, known: readonly string[]): void {
  for (const arg of Object.keys(args)) {
    if (!known.includes(arg)) throw new ToolArgumentError(`unknown argument '${arg}': ${name} takes ${known.length ? known.join(', ') : 'no arguments'}`);
  }
}

/** The request a call of `tool` with `args` makes: its path filled in, its query and body. */
export function requestOf(tool: ControlTool, args: Record<string, unknown>): { method: string; path: string; query: Record<string, string>; body?: unknown } {
  const known = [...tool.pathParams, ...tool.queryParams, ...(tool.hasBody ? ['body'] : [])];
  refuseUnknown(tool.name, args, known);
  const scalar = (name: string): string => {
    const value = args[name];
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new ToolArgumentError(`argument '${name}' must be a string or a number`);
    }
    return String(value);
  };
  const path = tool.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (args[name] === undefined) throw new ToolArgumentError(`missing argument '${name}': ${tool.name} takes ${known.join(', ')}`);
    return encodeURIComponent(scalar(name));
  });
  const query: Record<string, string> = {};
  for (const name of tool.queryParams) if (args[name] !== undefined) query[name] = scalar(name);
  return { method: tool.method, path, query, ...(args.body !== undefined ? { body: args.body } : {}) };
}
