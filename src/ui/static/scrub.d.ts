// Types of scrub.js, for the tests that import it (the page itself needs no build step).
export interface StepLike {
  atMs: number;
  name?: string;
  request?: { method?: string; path?: string };
}
export function formatOffset(ms: number): string;
export function stepLabel(step: Partial<StepLike> | null | undefined): string;
export function spanOf(lengthMs: number): number;
export function fractionOf(offsetMs: number, spanMs: number): number;
export function offsetAt(fraction: number, spanMs: number, step?: number): number;
export function offsetNow(timeline: { startedAt?: number; offsetMs?: number } | null | undefined, readAt: number, now: number): number;
export function neighbourStep(steps: ReadonlyArray<{ atMs: number }>, offsetMs: number, direction: 1 | -1): number;
export function ticksOf(spanMs: number, most?: number): number[];
