import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';

/**
 * Every operation of the control API has a method in the typed client (src/client/index.ts):
 * the client's calls, read from its source as `this.call('METHOD', '/path...')`, against the
 * /_emulator operations of the OpenAPI document, which is made from the routes themselves.
 */

/** A client call's path with each `${...}` as one segment: `/lifecycles/environment/${id}/fail` -> `/lifecycles/environment/_/fail`. */
const called = (path: string) => path.replace(/\$\{[^}]*\}/g, '_');
/** Whether an operation's path (`/lifecycles/{kind}/{id}/fail`) matches a called path, each `{param}` one segment. */
const matches = (pattern: string, path: string) => pattern.split('/').length === path.split('/').length && pattern.split('/').every((p, i) => p.startsWith('{') || p === path.split('/')[i]);

describe('the typed client', () => {
  it('has a method for every operation of the control API', async () => {
    const source = readFileSync(new URL('../../src/client/index.ts', import.meta.url), 'utf8');
    const calls = [...source.matchAll(/this\.call(?:<[^>]*>)?\(\s*'([A-Z]+)',\s*['`]([^'`]*)['`]/g)].map((m) => ({ method: m[1], path: called(m[2]) }));
    expect(calls.length).toBeGreaterThan(10);

    const { app } = await makeApp();
    try {
      await app.ready();
      const document = app.swagger() as { paths: Record<string, Record<string, unknown>> };
      const operations = Object.entries(document.paths)
        .filter(([path]) => path.startsWith('/_emulator/'))
        .flatMap(([path, item]) => Object.keys(item).filter((m) => m !== 'head').map((m) => ({ method: m.toUpperCase(), path: path.slice('/_emulator'.length) })));
      expect(operations.length).toBeGreaterThan(10);
      const missing = operations
        .filter((o) => !calls.some((c) => c.method === o.method && matches(o.path, c.path)))
        .map((o) => `${o.method} /_emulator${o.path}`);
      expect(missing, 'control operations without a method in src/client/index.ts').toEqual([]);
    } finally {
      await app.close();
    }
  });
});
