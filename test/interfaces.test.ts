import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AREAS, INTERFACES } from '../src/interfaces.js';
import { SECTION_NAMES } from '../src/state.js';

import { makeApp } from './helpers/app.js';

/**
 * The one list of interfaces (src/interfaces.ts): everything else reads it, so an interface
 * missing from it is an interface nobody serves. See "Adding an interface" in docs/development.md.
 */

/** The folders of src/ that are not emulated interfaces: the floors every interface shares or sits below. */
const NOT_INTERFACES = new Set(['cli', 'client', 'control', 'core', 'http', 'mcp', 'testcontainers', 'ui', 'world']);

describe('the list of interfaces', () => {
  it('holds every interface folder of src/, each by the object its interface.ts exports', async () => {
    const folders = readdirSync(new URL('../src/', import.meta.url), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !NOT_INTERFACES.has(entry.name))
      .map((entry) => entry.name);
    expect(folders.length).toBeGreaterThan(0);
    for (const folder of folders) {
      const exported = Object.values(await import(`../src/${folder}/interface.ts`).catch(() => ({})));
      const listed = exported.filter((value) => (INTERFACES as readonly unknown[]).includes(value));
      expect(listed, `src/${folder}/ is an interface folder: export its contract from src/${folder}/interface.ts and add it to INTERFACES in src/interfaces.ts`).toHaveLength(1);
    }
  });

  it('names each interface, section and tag once', () => {
    const unique = (values: string[]) => expect(new Set(values).size, values.join(', ')).toBe(values.length);
    unique(INTERFACES.map((i) => i.name));
    unique(INTERFACES.map((i) => i.tag.name));
    unique(INTERFACES.flatMap((i) => Object.keys(i.sections)));
  });

  it('makes the state of their sections, in the order of the list, then the world\'s own', () => {
    expect(SECTION_NAMES).toEqual([...INTERFACES.flatMap((i) => Object.keys(i.sections)), 'faults', 'scenarios']);
  });

  it('serves each interface under its prefix, in its own areas, with routes tagged with its tag', async () => {
    const { app } = await makeApp();
    try {
      await app.ready();
      const document = app.swagger() as { paths: Record<string, Record<string, { tags?: string[] }>>; tags: Array<{ name: string }> };
      expect(document.tags.map((t) => t.name)).toEqual([...INTERFACES.map((i) => i.tag.name), 'Control']);
      for (const i of INTERFACES) {
        const paths = Object.entries(document.paths).filter(([path]) => path.startsWith(`${i.prefix}/`) || path === i.prefix);
        expect(paths.length, i.name).toBeGreaterThan(0);
        for (const [path, item] of paths) {
          expect(i.areas.map((a) => a.prefix), `${path} lies in an area of ${i.name}`).toContain(AREAS.of(path).prefix);
          for (const operation of Object.values(item)) expect(operation.tags, `${path} of ${i.name}`).toEqual([i.tag.name]);
        }
      }
    } finally {
      await app.close();
    }
  });
});
