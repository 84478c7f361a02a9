import { closest, distance } from 'fastest-levenshtein';

/**
 * " (did you mean 'x'?)" for a name that is not one of `known`, when one of them is near
 * enough to be a typo (an edit distance of at most a third of its length, case ignored); else ''.
 */
export function didYouMean(name: string, known: readonly string[]): string {
  if (known.length === 0 || name.length > 200) return '';
  const lower = known.map((k) => k.toLowerCase());
  const best = closest(name.toLowerCase(), lower);
  const d = distance(name.toLowerCase(), best);
  return d <= Math.max(1, Math.floor(best.length / 3)) ? ` (did you mean '${known[lower.indexOf(best)]}'?)` : '';
}
