// Spellings of a request target, as an attacker would vary a protected path to slip past a
// check that reads the path differently from the router. Deterministic: the same path always
// gives the same list, so a failure names a spelling that can be replayed with curl
// --request-target. Used by the path-spelling tests and by `npm run soak`.

/** Endings that a lenient reader might cut, decode or ignore. */
const TAILS = [
  '#', '#%zz', '#%', '#%G0', '#x%zz/y', '#/../../etc', '#?a=%zz',
  '?%zz', '?a=%', '?a=%zz#%zz', '?#%zz', ';jsessionid=1', ';%zz', '%20', '%00', '%23%zz',
  '/', '//', '/./', '/.', '/%2e', '/%2E/', '/..', '/%2e%2e',
];

/** Ways to spell the leading part of a target before the path proper. */
const HEADS = ['http://127.0.0.1', 'HTTP://example.com:8080', 'http://user@h', 'https://h'];

/** A character spelled as an escape, in lower- or upper-case hex. */
const escape = (c, upper) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')[upper ? 'toUpperCase' : 'toLowerCase']()}`;

/**
 * Every spelling of `path` (which may carry a query) this corpus knows. `limit` keeps the
 * count bounded for long paths: each family contributes in turn until the limit.
 */
export function spellings(path, limit = 120) {
  const q = path.indexOf('?');
  const base = q < 0 ? path : path.slice(0, q);
  const query = q < 0 ? '' : path.slice(q);
  const families = [];

  // One character percent-encoded, in both hex cases; '/' encoded too (routes nowhere).
  const encoded = [];
  for (let i = 1; i < base.length; i++) {
    for (const upper of [false, true]) encoded.push(`${base.slice(0, i)}${escape(base[i], upper)}${base.slice(i + 1)}`);
  }
  families.push(encoded);
  // Every character encoded.
  families.push([base.slice(0, 1) + [...base.slice(1)].map((c) => (c === '/' ? c : escape(c, true))).join('')]);
  // Fragments, malformed escapes, parameters and dots after the path, alone and with one encoded character.
  families.push(TAILS.map((t) => `${base}${t}`));
  families.push(TAILS.map((t, i) => `${encoded[(i * 7) % encoded.length] ?? base}${t}`));
  // Dot segments inside the path.
  const slashes = [...base].map((c, i) => (c === '/' ? i : -1)).filter((i) => i > 0);
  const dots = [];
  for (const s of slashes) {
    for (const dot of ['/./', '/x/../', '/%2e/', '/%2E%2E/x/../', '/./%2e/']) dots.push(`${base.slice(0, s)}${dot}${base.slice(s + 1)}`);
  }
  families.push(dots);
  // Repeated slashes.
  families.push([base.replace(/\//g, '//'), `/${base}`, ...slashes.map((s) => `${base.slice(0, s)}//${base.slice(s)}`)]);
  // Case: all upper, all lower, and one letter flipped at a time.
  const flips = [base.toUpperCase(), base.toLowerCase()];
  for (let i = 0; i < base.length; i++) {
    const c = base[i];
    if (/[a-z]/i.test(c)) flips.push(`${base.slice(0, i)}${c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()}${base.slice(i + 1)}`);
  }
  families.push(flips);
  // The absolute form a client sends to a proxy.
  families.push(HEADS.map((h) => `${h}${base}`));

  const out = [];
  const seen = new Set();
  for (let round = 0; out.length < limit; round++) {
    let added = false;
    for (const family of families) {
      if (round >= family.length || out.length >= limit) continue;
      added = true;
      const target = `${family[round]}${family[round].includes('?') || family[round].includes('#') ? '' : query}`;
      if (!seen.has(target)) {
        seen.add(target);
        out.push(target);
      }
    }
    if (!added) break;
  }
  return out;
}
