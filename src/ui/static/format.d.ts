// Types of format.js, for the tests that import it (the page itself needs no build step).
export function hms(ms: number): string;
export function ymd(ms: number): string;
export function dateTime(ms: number): string;
export function shortDate(ms: number): string;
export function parseDateTime(text: string | null | undefined): number | undefined;
export function duration(ms: number): string;
export function countdown(at: number, now: number): string;
export function objectQuery(text: string | null | undefined): Record<string, string>;
