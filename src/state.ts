import type { TPartial } from '@sinclair/typebox';
import type { SectionSchemasOf } from './core/interface.js';
import { INTERFACES, type Interfaces } from './interfaces.js';
import { WORLD_SECTION_SCHEMAS, type FullStateSchema, type InterfaceSectionSchemas, type Scenario, type State } from './state-schema.js';
import { stateFormat, type FolderReport, type LoadOptions, type WorldSections } from './world/state.js';
import type { FaultRuleInput } from './world/fault-schemas.js';
import { FaultStore } from './world/faults.js';
import { inspectFolder } from './world/state-parser.js';
import { START_OUTCOMES, type StartableKind } from './provisioning/schemas.js';

export type { State } from './state-schema.js';

/** The section of the state each startable kind lives in. */
const SECTION_OF: { readonly [K in StartableKind]: 'grids' | 'environments' | 'rsdbs' } = { grid: 'grids', environment: 'environments', rsdb: 'rsdbs' };
const NAME_OF: { readonly [K in StartableKind]: string } = { grid: 'grid', environment: 'test environment', rsdb: 'RSDB' };

/** The control API's message for an outcome a kind does not have, so that both places say the same. */
function unknownOutcome(kind: StartableKind, outcome: string): string {
  const outcomes = START_OUTCOMES[kind];
  return outcomes.length === 1
    ? `unknown start outcome '${outcome}' for an ${NAME_OF[kind]}: the only one is ${outcomes[0]}`
    : `unknown start outcome '${outcome}' for a ${NAME_OF[kind]}: use ${outcomes.join(', ')}`;
}

/** Fault rules are checked as if added at time 0; only their shape and limits matter here. */
const CHECK_CLOCK = { now: () => 0 };

/** A rule written without an id gets one when added; here it only needs an identity no id can have. */
let unnamedRules = 0;

const WORLD_SECTIONS: WorldSections = {
  schemas: WORLD_SECTION_SCHEMAS,
  keys: {
    faults: (rule: FaultRuleInput) => rule.id ?? `(no id) ${unnamedRules++}`,
    scenarios: (s: Scenario) => `${s.kind} ${s.id}`,
  },
  problems: (state, keys, problem) => {
    FaultStore.check(state.faults as FaultRuleInput[], CHECK_CLOCK, problem);
    (state.scenarios as Scenario[]).forEach((s, i) => {
      if (!keys[SECTION_OF[s.kind]].has(s.id)) problem(() => `$.scenarios[${i}].id: no ${NAME_OF[s.kind]} ${s.id}`);
      if (!START_OUTCOMES[s.kind].includes(s.nextStart.outcome)) problem(() => `$.scenarios[${i}].nextStart.outcome: ${unknownOutcome(s.kind, s.nextStart.outcome)}`);
    });
  },
  // A scenario sets its resource's nextStartOutcome, as the control API does; an RSDB has one outcome only.
  apply: (state) => {
    const scenarios = state.scenarios as Scenario[];
    if (scenarios.length === 0) return;
    for (const kind of ['grid', 'environment'] as const) {
      const section = state[SECTION_OF[kind]] as Array<{ id: number; nextStartOutcome?: string }>;
      const outcomes = new Map(scenarios.filter((s) => s.kind === kind).map((s) => [s.id, s.nextStart.outcome]));
      if (outcomes.size === 0) continue;
      section.forEach((resource, i) => {
        const outcome = outcomes.get(resource.id);
        // A new object: the entry may be shared with whoever handed the state over.
        if (outcome !== undefined) section[i] = { ...resource, nextStartOutcome: outcome };
      });
    }
  },
};

/**
 * The emulator's state format: the sections of every interface of src/interfaces.ts, in its
 * order (world/state.ts makes a format from any list), then the world's own (`faults`,
 * `scenarios`). A fixture file holds any subset of these sections; an export is always a
 * valid fixture set.
 */
export const STATE = stateFormat(INTERFACES, WORLD_SECTIONS);

/**
 * The sections state-schema.ts names (for the typed client, which reads no interface) are
 * those of the list: adding an interface to one and not the other fails to compile here.
 */
type ListedSections = SectionSchemasOf<Interfaces>;
const _sameSections: [ListedSections] extends [InterfaceSectionSchemas] ? ([InterfaceSectionSchemas] extends [ListedSections] ? true : never) : never = true;

export const StateSchema = STATE.schema as unknown as FullStateSchema;
export const FixtureFileSchema = STATE.fileSchema as unknown as TPartial<FullStateSchema>;
export type SectionName = Exclude<keyof State, '$schema' | 'demo' | 'clock' | 'timeline'>;
export const SECTION_NAMES = STATE.sectionNames as readonly SectionName[];
/** The sections of the interfaces alone (what the import's answer counts). */
export const INTERFACE_SECTION_NAMES = SECTION_NAMES.filter((name) => !(name in WORLD_SECTIONS.schemas));

export const emptyState = (): State => STATE.empty() as State;
export const parseState = (data: unknown, where: string, options?: { owned?: boolean; now?: number }): State => STATE.parse(data, where, options) as State;
export const loadFixtures = async (dir: string, options?: LoadOptions): Promise<State> => (await STATE.load(dir, options)) as State;
/** Every problem of a fixture folder, without throwing them: what start, `check` and a reload run. */
export const inspectFixtures = async (dir: string, options?: LoadOptions): Promise<FolderReport<State>> =>
  (await STATE.inspect(dir, options)) as FolderReport<State>;
/** inspectFixtures, in the state worker when the folder's files are large (a reload of WATCH; see world/state-parser.ts). */
export const inspectFixturesOffThread = async (dir: string, options: LoadOptions = {}): Promise<FolderReport<State>> =>
  inspectFolder(dir, options, inspectFixtures);
export const consistencyProblems = (state: State): { listed: string[]; total: number } => STATE.consistencyProblems(state);
