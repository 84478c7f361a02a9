import type { Static } from '@sinclair/typebox';
import { INTERFACES } from './interfaces.js';
import { stateFormat } from './world/state.js';

/**
 * The emulator's state format: the sections of every interface of src/interfaces.ts, in its
 * order (world/state.ts makes a format from any list). A fixture file holds any subset of
 * these sections; an export is always a valid fixture set.
 */
export const STATE = stateFormat(INTERFACES);

export const StateSchema = STATE.schema;
export const FixtureFileSchema = STATE.fileSchema;
export const SECTION_NAMES = STATE.sectionNames as readonly SectionName[];
export type State = Static<typeof StateSchema>;
export type SectionName = Exclude<keyof State, '$schema' | 'clock'>;

export const emptyState = (): State => STATE.empty();
export const parseState = (data: unknown, where: string, options?: { owned?: boolean }): State => STATE.parse(data, where, options);
export const loadFixtures = (dir: string): Promise<State> => STATE.load(dir);
export const consistencyProblems = (state: State): { listed: string[]; total: number } => STATE.consistencyProblems(state);
