import type { Static } from '@sinclair/typebox';
import { INTERFACES } from './interfaces.js';
import { stateFormat, type FolderReport, type LoadOptions } from './world/state.js';

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
export type SectionName = Exclude<keyof State, '$schema'>;

export const emptyState = (): State => STATE.empty();
export const parseState = (data: unknown, where: string, options?: { owned?: boolean; now?: number }): State => STATE.parse(data, where, options);
export const loadFixtures = (dir: string, options?: LoadOptions): Promise<State> => STATE.load(dir, options);
/** Every problem of a fixture folder, without throwing them: what start, `check` and a reload run. */
export const inspectFixtures = (dir: string, options?: LoadOptions): Promise<FolderReport<State>> => STATE.inspect(dir, options);
export const consistencyProblems = (state: State): { listed: string[]; total: number } => STATE.consistencyProblems(state);
