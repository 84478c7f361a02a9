import { describe, expect, it } from 'vitest';
import { T0 } from '../helpers/app.js';
import { CALL_WORK_BUDGET, Journal } from '../../src/world/journal.js';
import { QUERY_PARAM_WORK, queryMatches } from '../../src/world/journal-query.js';

/** What parsing the whole query answers: each wanted parameter present with that value. */
function parsed(query: string, wanted: Array<[string, string]>): boolean {
  const params = new URLSearchParams(query);
  return wanted.every(([name, value]) => params.getAll(name).includes(value));
}

/** A small deterministic generator, so a failure names its case. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = ['a', 'b', '=', '&', '&&', '%41', '%4', '%', '+', '?', 'é', '%C3%A9', '1', 'a b', '=1', '%26', '%3D', '\u{1F600}'];

describe('matching a journal entry by its query parameters', () => {
  it('answers what parsing the whole query answers, for queries of every spelling', () => {
    const next = random(7);
    const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
    const values = ['a', 'b', '', '1', 'A', 'é', 'a b', '+', '&', '=', '=1', 'ab', 'a=1', '?a', '\u{1F600}'];
    let matched = 0;
    for (let n = 0; n < 20_000; n++) {
      // Parameters spelled raw, percent-encoded or with '+' for a space, among stray pieces.
      const spell = (text: string) => pick([text, encodeURIComponent(text), text.replace(/ /g, '+')]);
      const param = () => (next() < 0.3 ? pick(PIECES) : `${spell(pick(values))}${next() < 0.9 ? `=${spell(pick(values))}` : ''}`);
      const query = (next() < 0.1 ? '?' : '') + Array.from({ length: 1 + Math.floor(next() * 6) }, param).join(pick(['&', '&', '&&']));
      // Half the time, parameters the query has (as parsed), so that many cases match.
      const present = [...new URLSearchParams(query)];
      const want = (): [string, string] => (present.length && next() < 0.5 ? pick(present) : [pick(values), pick(values)]);
      const wanted = Array.from({ length: 1 + Math.floor(next() * 2) }, want);
      const unique = [...new Map(wanted).entries()];
      const expected = parsed(query, unique);
      expect(queryMatches(query, unique, { work: 0 }), JSON.stringify({ query, unique })).toBe(expected);
      if (expected) matched++;
    }
    // Not a test of nothing: many cases match.
    expect(matched).toBeGreaterThan(1000);
  });

  it('counts each parameter as work, so a count over long queries of tiny parameters stops at its bound and pages', () => {
    const journal = new Journal(1000);
    // 4,000 parameters in 8 KB: parsing them all took longer than the bound allows a call.
    const url = `/x?${'a&'.repeat(4000)}b=1`;
    for (let i = 0; i < 1000; i++) journal.record(T0, 'GET', url, 200, 0, null);
    let total = 0;
    let calls = 0;
    let before: number | undefined;
    do {
      const page = journal.count({ query: { b: '1' } }, before);
      total += page.items;
      before = page.next;
      calls++;
    } while (before !== undefined && calls < 1000);
    expect(total).toBe(1000);
    // Each call examines at most the entries whose parameters fit in its work.
    expect(calls).toBeGreaterThanOrEqual(Math.floor((1000 * 4001 * QUERY_PARAM_WORK) / CALL_WORK_BUDGET));
  });
});
