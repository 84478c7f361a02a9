import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { AnnotationStore } from '../../src/annotations/store.js';
import type { AnnotationSeed } from '../../src/annotations/schemas.js';

const T0 = Date.UTC(2026, 0, 1);
const domains = [
  { id: 11, name: 'www.example.com' },
  { id: 12, name: 'shop.example.com' },
];

function seeded(id: number, start: number): AnnotationSeed {
  return { id, title: `seed ${id}`, text: 'x', start, domainIds: [11], source: 'REST API', type: 'USER_ENTERED', user: 'a' };
}

function store(annotations: AnnotationSeed[] = [seeded(5, T0), seeded(7, T0 + 2000)]): AnnotationStore {
  return new AnnotationStore({ domains, annotations }, new ManualClock(T0));
}

const add = (s: AnnotationStore, start: number, domainIds: number[] = []) => s.create({ title: 't', text: 'x', start, domainIds }, 'u');
const listed = (s: AnnotationStore) => s.list().map((a) => a.id);

describe('AnnotationStore: created annotations next to seeded ones', () => {
  it('keeps the list in start order, then id, wherever a new annotation falls', () => {
    const s = store();
    const late = add(s, T0 + 5000);
    const early = add(s, T0 - 1000);
    const tie = add(s, T0 + 2000);
    const last = add(s, T0 + 5000);
    expect(listed(s)).toEqual([early, 5, 7, tie, late, last]);
    expect(s.list({ from: T0 + 2000, to: T0 + 2000 }).map((a) => a.id)).toEqual([7, tie]);
  });

  it('reads, updates and deletes created and seeded annotations alike, and never hands out an id again', () => {
    const s = store();
    const [a, b, c] = [add(s, T0 + 10), add(s, T0 + 20), add(s, T0 + 30)];
    expect([a, b, c]).toEqual([1_000_000, 1_000_001, 1_000_002]);
    expect(s.update(b, { title: 'changed', start: T0 - 10 })).toMatchObject({ id: b, title: 'changed', start: T0 - 10 });
    s.delete(b);
    s.delete(c);
    s.delete(5);
    expect(() => s.get(b)).toThrow(`annotation ${b} does not exist`);
    expect(() => s.get(c)).toThrow(`annotation ${c} does not exist`);
    expect(() => s.delete(5)).toThrow('annotation 5 does not exist');
    expect(s.get(a)).toMatchObject({ id: a, start: T0 + 10 });
    expect(s.counts().annotations).toBe(2);
    s.delete(a);
    expect(s.counts().annotations).toBe(1);
    const d = add(s, T0);
    expect(d).toBe(1_000_003);
    expect(s.get(d).id).toBe(d);
    expect(() => s.get(a)).toThrow(`annotation ${a} does not exist`);
    expect(listed(s)).toEqual([d, 7]);
  });

  it('exports seeded and created annotations together, by id, and a store built from the export answers the same', () => {
    const s = store();
    add(s, T0 + 1, [12]);
    const gone = add(s, T0 + 2);
    add(s, T0 + 3, [11, 12, 11]);
    s.delete(gone);
    const exported = s.export(T0);
    expect(exported.annotations.map((a) => a.id)).toEqual([5, 7, 1_000_000, 1_000_002]);
    expect(exported.annotations[3].domainIds).toEqual([11, 12]);
    const again = new AnnotationStore(exported, new ManualClock(T0));
    expect(again.list()).toEqual(s.list());
    expect(add(again, T0)).toBe(1_000_003);
  });

  it('an updated created annotation is held once: get, list, counts and export all see the new version only', () => {
    const s = store();
    const a = add(s, T0 + 10);
    const b = add(s, T0 + 20);
    s.update(a, { title: 'same start' });
    s.update(b, { start: T0 - 5 });
    expect(s.get(a).title).toBe('same start');
    expect(listed(s)).toEqual([b, 5, a, 7]);
    expect(s.counts().annotations).toBe(4);
    const exported = s.export(T0).annotations;
    expect(exported.map((x) => x.id)).toEqual([5, 7, a, b]);
    expect(exported.find((x) => x.id === a)?.title).toBe('same start');
    // Given on stage: written relative to the export's clock (docs/fixtures.md, "Time").
    expect(exported.find((x) => x.id === b)?.startAgoMs).toBe(5);
  });
});
