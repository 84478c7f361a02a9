/**
 * Matching a journal entry's query string against the parameters a search asks for, in one
 * pass over its text and without parsing what cannot match: a parameter whose text holds no
 * `%`, `+` or non-ASCII character is its own decoded form, and is compared where it lies;
 * only one that holds one is decoded (by URLSearchParams, so the answer is always the one
 * parsing the whole query gives). The work done is counted for the journal's per-call
 * bound, the parameters as well as the bytes: a query of many tiny parameters costs far
 * more than its length, and a decoded one more again.
 */

/** Work counted for each byte of a query examined: a search for `&` and `=`, slower than one for a fixed text. */
export const QUERY_BYTE_WORK = 2;
/** Work counted for each parameter of a query examined (besides its bytes). */
export const QUERY_PARAM_WORK = 64;
/** Work counted for each parameter that has to be decoded (`%`, `+` or non-ASCII text). */
export const QUERY_DECODE_WORK = 640;

/** The next character from `from` on that makes a parameter need decoding. */
const NEEDS_DECODING = /[%+\u0080-\uffff]/g;

function nextSpecial(query: string, from: number): number {
  NEEDS_DECODING.lastIndex = from;
  return NEEDS_DECODING.exec(query)?.index ?? -1;
}

/** The work counted for examining a query: its bytes, its parameters, those decoded. */
export interface QueryWork {
  work: number;
}

/**
 * Whether every wanted `[name, value]` is among the query's parameters (any of a repeated
 * one), as `new URLSearchParams(query)` reads them. `query` is the text after the `?`.
 * Adds the work done to `spent.work`.
 */
export function queryMatches(query: string, wanted: ReadonlyArray<readonly [string, string]>, spent: QueryWork): boolean {
  const n = query.length;
  // URLSearchParams drops one leading '?' of its text.
  let pos = query.charCodeAt(0) === 0x3f ? 1 : 0;
  const found = new Array<boolean>(wanted.length).fill(false);
  let missing = wanted.length;
  let special = nextSpecial(query, pos);
  let equals = query.indexOf('=', pos);
  let params = 0;
  let decoded = 0;
  let examined = pos;
  while (pos < n && missing > 0) {
    let end = query.indexOf('&', pos);
    if (end < 0) end = n;
    examined = end;
    if (end > pos) {
      params++;
      // The next '=' and special character are looked for again only once passed: one pass in all.
      if (equals >= 0 && equals < pos) equals = query.indexOf('=', pos);
      if (special >= 0 && special < pos) special = nextSpecial(query, pos);
      if (special >= 0 && special < end) {
        decoded++;
        // After an '&', which keeps URLSearchParams from dropping a leading '?' of the parameter.
        const [name, value] = new URLSearchParams(`&${query.slice(pos, end)}`).entries().next().value ?? ['', ''];
        for (let k = 0; k < wanted.length; k++) {
          if (!found[k] && wanted[k][0] === name && wanted[k][1] === value) {
            found[k] = true;
            missing--;
          }
        }
      } else {
        const nameEnd = equals >= 0 && equals < end ? equals : end;
        const valueStart = nameEnd < end ? nameEnd + 1 : end;
        for (let k = 0; k < wanted.length; k++) {
          if (found[k]) continue;
          const name = wanted[k][0];
          const value = wanted[k][1];
          if (name.length !== nameEnd - pos || value.length !== end - valueStart) continue;
          if (query.startsWith(name, pos) && query.startsWith(value, valueStart)) {
            found[k] = true;
            missing--;
          }
        }
      }
    }
    pos = end + 1;
  }
  spent.work += examined * QUERY_BYTE_WORK + params * QUERY_PARAM_WORK + decoded * QUERY_DECODE_WORK;
  return missing === 0;
}
