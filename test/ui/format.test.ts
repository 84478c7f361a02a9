import { describe, expect, it } from 'vitest';
import { countdown, dateTime, duration, hms, objectQuery, parseDateTime, shortDate, ymd } from '../../src/ui/static/format.js';

const AFTERNOON = Date.UTC(2026, 10, 22, 15, 4, 5);
const MIDNIGHT = Date.UTC(2026, 10, 23, 0, 0, 7);

describe('dashboard times', () => {
  it('writes every time in UTC on the 24-hour clock', () => {
    expect(hms(AFTERNOON)).toBe('15:04:05');
    expect(hms(MIDNIGHT)).toBe('00:00:07');
    expect(ymd(AFTERNOON)).toBe('2026-11-22');
    expect(dateTime(AFTERNOON)).toBe('2026-11-22 15:04:05');
    expect(shortDate(MIDNIGHT)).toBe('Nov 23');
    for (const text of [hms(AFTERNOON), dateTime(AFTERNOON), dateTime(MIDNIGHT)]) expect(text).not.toMatch(/AM|PM/i);
  });

  it('reads back what it writes in the form, and nothing else', () => {
    for (const ms of [AFTERNOON, MIDNIGHT, Date.UTC(2028, 1, 29, 23, 59, 59)]) expect(parseDateTime(dateTime(ms))).toBe(ms);
    expect(parseDateTime('2026-11-22T15:04:05')).toBe(AFTERNOON);
    expect(parseDateTime('0050-01-01 00:00:00')).toBe(Date.parse('0050-01-01T00:00:00Z'));
    expect(parseDateTime(' 2026-11-22 15:04 ')).toBe(Date.UTC(2026, 10, 22, 15, 4));
    expect(parseDateTime('')).toBeUndefined();
    expect(parseDateTime(undefined)).toBeUndefined();
    for (const bad of ['3:04:05 PM', '2026-11-22 3:04:05 PM', '11/22/2026 15:04:05', '2026-11-22 24:00:00', '2026-02-30 10:00:00', '2026-13-01 10:00:00', '2026-11-22 10:60:00', 'soon']) {
      expect(parseDateTime(bad), bad).toBeNaN();
    }
  });

  it('counts down in whole seconds rounded up, so that the countdown agrees with the times shown', () => {
    // 09:00:03.6 shows as 09:00:03; a transition at 09:00:06 is 3 s after that.
    const next = Date.UTC(2026, 10, 22, 9, 0, 6);
    expect(countdown(next, next - 2400)).toBe('3 s');
    expect(countdown(next, next - 3000)).toBe('3 s');
    expect(countdown(next, next)).toBe('0 s');
    expect(countdown(next, next + 5000)).toBe('0 s');
    expect(countdown(next, next - 61_500)).toBe('1 min 02 s');
    expect(duration(3_723_000)).toBe('1 h 02 min');
  });
});

describe('objectQuery (the objects panel search box)', () => {
  it('makes key=value words attribute filters and the other words the exact name', () => {
    expect(objectQuery('')).toEqual({});
    expect(objectQuery(undefined)).toEqual({});
    expect(objectQuery('www.example.com')).toEqual({ name: 'www.example.com' });
    expect(objectQuery('Load Test Grid')).toEqual({ name: 'Load Test Grid' });
    expect(objectQuery(' apiKey=ABC  domain=shop.example.com ')).toEqual({ apiKey: 'ABC', domain: 'shop.example.com' });
    expect(objectQuery('name=a=b key=')).toEqual({ name: 'a=b', key: '' });
    expect(objectQuery('=x')).toEqual({ name: '=x' });
  });
});
