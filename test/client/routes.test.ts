import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { controlOperations, matchesCall, operationName } from '../helpers/control-operations.js';

/**
 * Every operation of the control API has a method in the typed client (src/client/index.ts):
 * the client's calls, read from its source as `this.call('METHOD', '/path...')`, against the
 * /_emulator operations of the OpenAPI document, which is made from the routes themselves.
 */

/** A client call's path with each `${...}` as one segment: `/lifecycles/environment/${id}/fail` -> `/lifecycles/environment/_/fail`. */
const called = (path: string) => path.replace(/\$\{[^}]*\}/g, '_');

describe('the typed client', () => {
  it('has a method for every operation of the control API', async () => {
    const source = readFileSync(new URL('../../src/client/index.ts', import.meta.url), 'utf8');
    const calls = [...source.matchAll(/this\.call(?:<[^>]*>)?\(\s*'([A-Z]+)',\s*['`]([^'`]*)['`]/g)].map((m) => ({ method: m[1], path: called(m[2]) }));
    expect(calls.length).toBeGreaterThan(10);

    const operations = await controlOperations();
    expect(operations.length).toBeGreaterThan(10);
    const missing = operations.filter((o) => !calls.some((c) => c.method === o.method && matchesCall(o.path, c.path))).map(operationName);
    expect(missing, 'control operations without a method in src/client/index.ts').toEqual([]);
  });
});
