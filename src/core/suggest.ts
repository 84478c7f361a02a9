import { closest, distance } from 'fastest-levenshtein';

/** Whether `a` is `b` with two neighbouring characters swapped (PSOT for POST). */
function swapped(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i + 1 < a.length && a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
}

/**
 * " (did you mean 'x'?)" for a name that is not one of `known`, when one of them is near
 * enough to be a typo (two neighbouring characters swapped, or an edit distance of at most a
 * third of its length, case ignored); else ''.
 */
export function didYouMean(name: string, known: readonly string[]): string {
  if (known.length === 0 || name.length > 200) return '';
  const lower = known.map((k) => k.toLowerCase());
  const typed = name.toLowerCase();
  const transposed = lower.findIndex((k) => swapped(typed, k));
  if (transposed !== -1) return ` (did you mean '${known[transposed]}'?)`;
  const best = closest(typed, lower);
  const d = distance(typed, best);
  return d <= Math.max(1, Math.floor(best.length / 3)) ? ` (did you mean '${known[lower.indexOf(best)]}'?)` : '';
}
