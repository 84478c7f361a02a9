import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PATHS } from '../../src/http/paths.js';
import { controlOperations, matchesCall, operationName } from '../helpers/control-operations.js';

/**
 * The Python package (clients/python) has a method for every operation of the control API,
 * as the typed client has (routes.test.ts): its calls, read from its source as
 * `self._call("METHOD", "/path...")` (or `self._stream(...)` for the event stream), against the
 * /_emulator operations of the OpenAPI document, which is made from the routes themselves.
 * And its table of base paths is the server's.
 */

const SOURCE = new URL('../../clients/python/src/cloud_emulator/client.py', import.meta.url);

/**
 * Operations the Python client leaves out on purpose, each with why. An entry that no longer
 * names an operation of the document fails the test, so the list stays true.
 */
const NOT_IN_PYTHON: Record<string, string> = {};

/** A call's path with each `{...}` of its f-string as one segment: `/lifecycles/{_segment(kind)}/x` -> `/lifecycles/_/x`. */
const called = (path: string) => path.replace(/\{[^}]*\}/g, '_');

describe('the Python client', () => {
  const source = readFileSync(SOURCE, 'utf8');

  it('has a method for every operation of the control API', async () => {
    const calls = [...source.matchAll(/self\._(?:call|stream)\(\s*"([A-Z]+)",\s*f?"([^"]*)"/g)].map((m) => ({ method: m[1], path: called(m[2]) }));
    expect(calls.length).toBeGreaterThan(10);

    const operations = await controlOperations();
    expect(operations.length).toBeGreaterThan(10);
    const stale = Object.keys(NOT_IN_PYTHON).filter((excluded) => !operations.some((o) => operationName(o) === excluded));
    expect(stale, 'entries of NOT_IN_PYTHON that are no operation of the control API').toEqual([]);
    const missing = operations
      .filter((o) => !(operationName(o) in NOT_IN_PYTHON))
      .filter((o) => !calls.some((c) => c.method === o.method && matchesCall(o.path, c.path)))
      .map(operationName);
    expect(missing, 'control operations without a method in clients/python/src/cloud_emulator/client.py').toEqual([]);
  });

  it("has the server's base paths, for client.urls", () => {
    const block = /^PATHS: Dict\[str, str\] = \{\n([\s\S]*?)^\}/m.exec(source);
    expect(block, 'the PATHS table in client.py').not.toBeNull();
    const python = Object.fromEntries([...block![1].matchAll(/^\s*"(\w+)": "([^"]*)",$/gm)].map((m) => [m[1], m[2]]));
    // The emulator's own pages and documents are no base URL of an interface, as in the typed client.
    const own = new Set(['health', 'openapi', 'docs', 'ui']);
    const server = Object.fromEntries(Object.entries(PATHS).filter(([name]) => !own.has(name)));
    expect(python).toEqual(server);
    // Urls, the dataclass client.urls answers, has a field for each, and rum.
    const fields = /^class Urls:\n([\s\S]*?)^\S/m.exec(source);
    expect(fields).not.toBeNull();
    const declared = [...fields![1].matchAll(/^ {4}(\w+): str$/gm)].map((m) => m[1]);
    expect(declared.sort()).toEqual([...Object.keys(server), 'rum'].sort());
  });
});
