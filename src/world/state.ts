import { Type, type Static } from '@sinclair/typebox';
import { FixtureError, MAX_LISTED_PROBLEMS, problemMessage, readFixtureFiles, validate } from '../core/fixtures.js';
import { RepositorySectionsSchema } from '../repository/schemas.js';
import { ProvisioningSectionsSchema } from '../provisioning/schemas.js';
import { AnnotationSectionsSchema } from '../annotations/schemas.js';
import { AlertSectionsSchema } from '../alerts/schemas.js';
import { QuerySectionsSchema } from '../query/schemas.js';

/**
 * The whole state of the emulator, in the fixture format. A fixture file holds any subset of
 * these lists; a folder of them is merged into one State. An export of the running emulator
 * is a State too, so an export is always a valid fixture set.
 */
const sections = {
  ...RepositorySectionsSchema,
  ...ProvisioningSectionsSchema,
  ...AnnotationSectionsSchema,
  ...AlertSectionsSchema,
  ...QuerySectionsSchema,
};
export type SectionName = keyof typeof sections;
export const SECTION_NAMES = Object.keys(sections) as SectionName[];

export const StateSchema = Type.Object(
  { $schema: Type.Optional(Type.String({ description: 'path of the JSON Schema, for editors' })), ...sections },
  { additionalProperties: false, $id: 'State' },
);
export type State = Static<typeof StateSchema>;

/** What a fixture file may hold: any subset of the sections. */
export const FixtureFileSchema = Type.Partial(StateSchema, { additionalProperties: false });

export function emptyState(): State {
  return Object.fromEntries(SECTION_NAMES.map((name) => [name, []])) as unknown as State;
}

/** Identity of an element of each section, for duplicate detection and cross references. */
const keyOf: Record<SectionName, (item: never) => string | number> = {
  users: (u: { userName: string }) => u.userName,
  tokens: (t: { token: string }) => t.token,
  grids: (g: { id: number }) => g.id,
  cloudServers: (c: { id: number }) => c.id,
  rsdbs: (r: { id: number }) => r.id,
  environments: (e: { id: number }) => e.id,
  domains: (d: { id: number }) => d.id,
  annotations: (a: { id: number }) => a.id,
  alerts: (a: { uid: string }) => a.uid,
  rumModels: (m: { domainId: number }) => m.domainId,
  incidents: (i: { id: number }) => i.id,
};

/** The identities of one section, for `has` lookups. */
type Keys = Record<SectionName, { has(key: string | number): boolean }>;

/** Collects problems: the first MAX_LISTED_PROBLEMS as text, the rest only counted. */
function problemList() {
  const listed: string[] = [];
  let total = 0;
  return {
    problem: (text: () => string) => {
      if (total++ < MAX_LISTED_PROBLEMS) listed.push(text());
    },
    result: () => ({ listed, total }),
  };
}

/** References to things that do not exist, given the identities of every section. */
function referenceProblems(state: State, keys: Keys, problem: (text: () => string) => void): void {
  state.tokens.forEach((t, i) => {
    if (!keys.users.has(t.userName)) problem(() => `$.tokens[${i}].userName: no user '${t.userName}'`);
  });
  state.cloudServers.forEach((c, i) => {
    if (!keys.grids.has(c.gridId)) problem(() => `$.cloudServers[${i}].gridId: no grid ${c.gridId}`);
  });
  state.grids.forEach((g, i) => {
    g.deployment?.cloudServerIds.forEach((id, j) => {
      if (!keys.cloudServers.has(id)) problem(() => `$.grids[${i}].deployment.cloudServerIds[${j}]: no cloud server ${id}`);
    });
  });
  state.rumModels.forEach((m, i) => {
    if (!keys.domains.has(m.domainId)) problem(() => `$.rumModels[${i}].domainId: no domain ${m.domainId}`);
  });
  state.incidents.forEach((m, i) => {
    if (!keys.domains.has(m.domainId)) problem(() => `$.incidents[${i}].domainId: no domain ${m.domainId}`);
  });
  // Plain loops: a seed can hold hundreds of thousands of annotations.
  const { annotations } = state;
  for (let i = 0; i < annotations.length; i++) {
    const { domainIds } = annotations[i];
    for (let j = 0; j < domainIds.length; j++) {
      const d = domainIds[j];
      if (!keys.domains.has(d)) problem(() => `$.annotations[${i}].domainIds[${j}]: no domain ${d}`);
    }
  }
}

/**
 * Problems a schema cannot see: duplicates and references to things that do not exist. Lists
 * the first MAX_LISTED_PROBLEMS and counts the rest, so a state with a million of them costs
 * no more than one pass.
 */
export function consistencyProblems(state: State): { listed: string[]; total: number } {
  const { problem, result } = problemList();
  const keys = {} as Record<SectionName, Set<string | number>>;
  for (const name of SECTION_NAMES) {
    keys[name] = new Set();
    (state[name] as never[]).forEach((item, i) => {
      const key = keyOf[name](item);
      if (keys[name].has(key)) problem(() => `$.${name}[${i}]: duplicate ${name} entry ${JSON.stringify(key)}`);
      keys[name].add(key);
    });
  }
  referenceProblems(state, keys, problem);
  return result();
}

/** Throws the problems found, if any, prefixed by `where`. */
function throwProblems(where: string, { listed, total }: { listed: string[]; total: number }): void {
  if (total) throw new FixtureError(problemMessage(where, listed.map((p) => `${where}: ${p}`), total - listed.length));
}

/**
 * Validates a whole state (a PUT of /_emulator/state, a state file). `owned`: nobody else
 * holds `data` (a file just parsed), so its defaults go in without copying it first.
 */
export function parseState(data: unknown, where: string, { owned = false } = {}): State {
  const state = validate(StateSchema, { ...emptyState(), ...(data as object) }, where, { owned });
  throwProblems(where, consistencyProblems(state));
  return state;
}

/**
 * Reads and merges every fixture file of a folder into one State. An id defined twice, in
 * one file or two, is refused naming both places; the identities found on the way serve
 * the reference checks too.
 */
export async function loadFixtures(dir: string): Promise<State> {
  const files = await readFixtureFiles(dir, FixtureFileSchema);
  const state = emptyState();
  const origins = {} as Record<SectionName, Map<string | number, string>>;
  for (const name of SECTION_NAMES) origins[name] = new Map();
  for (const { file, data } of files) {
    for (const name of SECTION_NAMES) {
      const items = (data[name] ?? []) as never[];
      const origin = origins[name];
      const into = state[name] as never[];
      for (const item of items) {
        const key = keyOf[name](item);
        const earlier = origin.get(key);
        if (earlier !== undefined) throw new FixtureError(`${file}: $.${name}: ${JSON.stringify(key)} is also defined in ${earlier}`);
        origin.set(key, file);
        into.push(item);
      }
    }
  }
  const { problem, result } = problemList();
  referenceProblems(state, origins, problem);
  throwProblems(dir, result());
  return state;
}
