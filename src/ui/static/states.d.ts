// Types of states.js, for the tests that import it (the page itself needs no build step).
export type Family = 'idle' | 'progress' | 'ready' | 'failed' | 'terminated';
export interface Row {
  state: string;
  holds?: string;
  monitorsOnly?: boolean;
}
export interface Position {
  state: string;
  isFinal?: boolean;
  since?: number;
  next?: { state: string; at: number };
  nextStart?: { outcome: string; once: boolean };
  currentStart?: { outcome: string; startedAt: number };
  /** States of its start tables the resource never takes (a grid without monitors). */
  skips?: string[];
}
export interface Path {
  rows: Row[];
  current: number;
}
export interface Families {
  failed: readonly string[];
  terminated: readonly string[];
}
export function family(state: string, isFinal: boolean | undefined, families: Families): Family;
export function tablesOf(kindTables: unknown): Row[][];
export function pathOf(kindTables: unknown, position: Position, previous?: Path, startOutcome?: string): Path;
export function startTable(kindTables: unknown, outcome: string | undefined): Row[] | undefined;
export function moveTo<P extends Position>(kindTables: unknown, position: P, state: string, at: number | undefined): P;
