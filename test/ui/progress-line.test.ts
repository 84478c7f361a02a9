import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp } from '../helpers/app.js';
import { moveTo, pathOf, type Path, type Position } from '../../src/ui/static/states.js';

// The dashboard's progress line of a start set to fail, drawn as the page draws it: from
// GET /_emulator/lifecycles after each read, and from a transition event alone in between
// (the event carries the new state, not the next step nor the start).

const CLOUD = '/concerto/services/rest/CloudService/v1';
const DEMO_TOKEN = { 'x-auth-token': 'demo-token' };
let app: FastifyInstance;
afterEach(async () => app?.close());

type Entry = Position & { kind: string; id: number; isFinal: boolean; since: number };
const lifecycles = async () => (await app.inject({ url: '/_emulator/lifecycles' })).json();
const grid103 = async (): Promise<Entry> => (await lifecycles()).resources.find((r: Entry) => r.kind === 'grid' && r.id === 103);
const states = (path: Path) => path.rows.map((r) => r.state);
/** The states but the one a grid without monitors skips (its lifecycle's `skips`): the line never shows it. */
const taken = (path: Path) => states(path).filter((s) => s !== 'STARTING_MONITORS');
/** As the page calls it: the path shown before, and how the next start is set to end. */
const draw = (tables: unknown, position: Entry, previous?: Path) => pathOf(tables, position, previous, position.nextStart?.outcome);

describe('the progress line of the demo grid 103 (CHECKED_WITH_FAILURES)', () => {
  it('shows the way to the failure before the start, at every step of it, and after each transition event', async () => {
    ({ app } = await makeDemoApp());
    const { tables } = await lifecycles();
    const failing: string[] = tables.grid.start.CHECKED_WITH_FAILURES.map((r: { state: string }) => r.state);
    expect(failing.at(-1)).toBe('CHECKED_WITH_FAILURES');
    const way = failing.filter((s) => s !== 'STARTING_MONITORS');

    const loaded = await grid103();
    expect(loaded.skips).toEqual(['STARTING_MONITORS']);
    // Grid 102 has monitors: it takes every step.
    expect((await lifecycles()).resources.find((r: Entry) => r.kind === 'grid' && r.id === 102).skips).toBeUndefined();
    let path = draw(tables.grid, loaded);
    expect(states(path)).toEqual(['LOADED', ...way]);

    // A start the page sees only through its event: the start it set off is the one the grid was set to.
    const seen = moveTo(tables.grid, structuredClone(loaded), 'ALLOCATING', loaded.since + 1);
    expect(taken(draw(tables.grid, seen, path))).toEqual(way);

    const res = await app.inject({ method: 'POST', url: `${CLOUD}/grid/103/action`, headers: DEMO_TOKEN, payload: { action: 'start' } });
    expect(res.statusCode, res.body).toBe(202);
    const visited: string[] = [];
    for (let guard = 0; guard < 10; guard++) {
      const position = await grid103();
      path = draw(tables.grid, position, path);
      visited.push(position.state);
      expect(taken(path), `at ${position.state}`).toEqual(way);
      expect(path.rows[path.current].state).toBe(position.state);
      if (!position.next) break;
      // The transition event comes before the lifecycles are read again.
      const moved = moveTo(tables.grid, structuredClone(position), position.next.state, position.next.at);
      expect(moved.next).toBeUndefined();
      const between = draw(tables.grid, moved, path);
      expect(taken(between), `event to ${position.next.state}`).toEqual(way);
      expect(between.rows[between.current].state).toBe(position.next.state);
      path = between;
      await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { to: position.next.at } });
    }
    expect(visited).toEqual(way);
    // Grid 103 has no monitors: the step it skips is never drawn.
    expect(states(path)).toEqual(way);
  });

  it('leaves the start behind when a terminate comes as an event', async () => {
    ({ app } = await makeDemoApp());
    const { tables } = await lifecycles();
    await app.inject({ method: 'POST', url: `${CLOUD}/grid/103/action`, headers: DEMO_TOKEN, payload: { action: 'start' } });
    await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { until: { kind: 'grid', id: 103 } } });
    const ended = await grid103();
    const path = draw(tables.grid, ended);
    expect(path.rows.at(-1)?.state).toBe('CHECKED_WITH_FAILURES');
    const terminating = moveTo(tables.grid, structuredClone(ended), 'TERMINATING', ended.since + 1);
    expect(terminating.currentStart).toBeUndefined();
    expect(states(draw(tables.grid, terminating, path))).toEqual(['TERMINATING', 'TERMINATED']);
  });
});
