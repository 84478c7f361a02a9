/**
 * Deterministic numbers for generated data (results of a composition run, real-user data):
 * a value is a pure function of its keys, never of a stream's position, so any minute, sample
 * or page can be computed on its own, in any order, and is the same in every run and process.
 * Not for secrets.
 */

/** Mixes one 32-bit word into a hash state (murmur3's finaliser over a running state). */
function mix(h: number, k: number): number {
  return mixWord(h, keyWord(k));
}

/**
 * The part of mix() that depends on the key word alone: a loop that mixes the same key into
 * many states works it out once (mix(h, k) === mixWord(h, keyWord(k))).
 */
export function keyWord(k: number): number {
  let x = Math.imul(k | 0, 0xcc9e2d51);
  x = (x << 15) | (x >>> 17);
  return Math.imul(x, 0x1b873593);
}

/** Mixes a key word (of keyWord) into a hash state. */
export function mixWord(h: number, x: number): number {
  let y = h ^ x;
  y = (y << 13) | (y >>> 19);
  return (Math.imul(y, 5) + 0xe6546b64) | 0;
}

function finish(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** A key part: an integer (taken as two 32-bit words, so epoch ms fit) or a string. */
export type Key = number | string;

const SEED = 0x9747b28c;

/** Mixes one integer key into a running hash state (of hashState): mixKey for a number, for hot loops. */
export function mixNumber(h: number, key: number): number {
  return mix(mix(h, key | 0), Math.floor(key / 0x100000000) | 0);
}

/** Mixes one key into a running hash state (of hashState). */
export function mixKey(h: number, key: Key): number {
  if (typeof key === 'number') return mixNumber(h, key);
  // Bounded by the key, which the caller's data bounds.
  for (let i = 0; i < key.length; i++) h = mix(h, key.charCodeAt(i));
  return mix(h, key.length);
}

/**
 * The running state of hash32 after `keys`: a loop that hashes many keys after the same
 * first ones mixes only the rest into it (hash32(a, b) === finishHash(mixKey(hashState(a), b))).
 */
export function hashState(...keys: Key[]): number {
  let h = SEED;
  for (const key of keys) h = mixKey(h, key);
  return h;
}

/** The hash of a running state (hash32 of the keys mixed into it). */
export const finishHash = finish;

/** An unsigned 32-bit hash of the keys, in order. */
export function hash32(...keys: Key[]): number {
  return finish(hashState(...keys));
}

/** A number in [0, 1) determined by the keys. */
export function unit(...keys: Key[]): number {
  return hash32(...keys) / 0x100000000;
}

/** A standard normal variate determined by the keys (Box-Muller over two derived units). */
export function normal(...keys: Key[]): number {
  return normalOf(hashState(...keys));
}

/** normal() of the keys of a running state. */
export function normalOf(state: number): number {
  // mixKey(state, 'n1') and mixKey(state, 'n2'), their constant key words worked out once (the 'n' they share mixed once).
  const n = mixWord(state, KEY_N);
  const u = 1 - finish(mixWord(mixWord(n, KEY_1), KEY_LENGTH_2)) / 0x100000000; // (0, 1]: log is finite
  const v = finish(mixWord(mixWord(n, KEY_2), KEY_LENGTH_2)) / 0x100000000;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** The key words of the characters 'n', '1', '2' and of a key's length 2, for normalOf. */
const KEY_N = keyWord(0x6e);
const KEY_1 = keyWord(0x31);
const KEY_2 = keyWord(0x32);
const KEY_LENGTH_2 = keyWord(2);

/** A log-normal variate with the given median and shape (sigma of the underlying normal). */
export function logNormal(median: number, sigma: number, ...keys: Key[]): number {
  return median * Math.exp(sigma * normal(...keys));
}
