// How the dashboard writes times and durations. Emulated times are shown in UTC, like the
// interfaces speak them, and always on the 24-hour clock: nothing here follows the
// browser's locale, so a time reads the same in every panel and every browser.

const pad = (n, w = 2) => String(n).padStart(w, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "09:05:07" */
export function hms(ms) {
  const d = new Date(ms);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** "2026-11-22" */
export function ymd(ms) {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** "2026-11-22 09:05:07": also the form the annotation form's time fields take. */
export const dateTime = (ms) => `${ymd(ms)} ${hms(ms)}`;

/** "Nov 22" */
export function shortDate(ms) {
  const d = new Date(ms);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
}

const FIELD = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

/**
 * Reads a time typed in the form "2026-11-22 09:05:07" (UTC, 24-hour; the seconds and a
 * "T" for the space are allowed): epoch ms; undefined for an empty field, NaN for anything
 * that is no such time.
 */
export function parseDateTime(text) {
  const value = String(text ?? '').trim();
  if (!value) return undefined;
  const m = FIELD.exec(value);
  if (!m) return NaN;
  const [year, month, day, hour, minute, second] = m.slice(1).map((part) => Number(part ?? 0));
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return NaN;
  // Not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  // 2026-02-30 would roll over into March.
  return d.getUTCDate() === day ? d.getTime() : NaN;
}

/** "45 s", "3 min 05 s", "2 h 07 min", "3 d 4 h". */
export function duration(ms) {
  if (ms < 0) ms = 0;
  const sec = Math.round(ms / 1000);
  if (sec < 60) return `${sec} s`;
  if (sec < 3600) return `${Math.floor(sec / 60)} min ${pad(sec % 60)} s`;
  if (sec < 86400) return `${Math.floor(sec / 3600)} h ${pad(Math.floor((sec % 3600) / 60))} min`;
  return `${Math.floor(sec / 86400)} d ${Math.floor((sec % 86400) / 3600)} h`;
}

/**
 * Time left until `at`, in whole seconds rounded up: the clock shows whole seconds rounded
 * down, so 09:00:03 with a transition at 09:00:06 reads "in 3 s" even at 09:00:03.6.
 */
export const countdown = (at, now) => duration(Math.ceil(Math.max(0, at - now) / 1000) * 1000);

/**
 * The query of a repository-object search box: words `key=value` filter that attribute
 * (`name=...` the name), anything else is the exact name. "apiKey=ABC" → {apiKey: "ABC"};
 * "www.example.com" → {name: "www.example.com"}; "" → {}.
 */
export function objectQuery(text) {
  const query = {};
  const words = String(text ?? '').trim().split(/\s+/).filter(Boolean);
  const plain = [];
  for (const word of words) {
    const eq = word.indexOf('=');
    if (eq > 0) query[word.slice(0, eq)] = word.slice(eq + 1);
    else plain.push(word);
  }
  if (plain.length && query.name === undefined) query.name = plain.join(' ');
  return query;
}
