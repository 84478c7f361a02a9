import { Type, type Static, type TObject, type TOptional, type TPartial, type TSchema, type TString } from '@sinclair/typebox';
import { FixtureError, MAX_LISTED_PROBLEMS, problemMessage, readFixtureFiles, validate } from '../core/fixtures.js';
import type { AnyInterfaceModel, SectionKeys, SectionSchemasOf } from '../core/interface.js';
import { ClockAnchorSchema, type ClockAnchor } from '../core/clock.js';
import { timeShifter, type Shifter } from '../core/time-shift.js';

/**
 * The state format: the whole state of the emulator, in the fixture format, made of the
 * sections of every interface the world is given (src/interfaces.ts makes the one format the
 * emulator uses). A fixture file holds any subset of the sections; a folder of them is merged
 * into one state. An export of the running emulator is a state too, so an export is always a
 * valid fixture set.
 */

/** A section of the state (users, grids, ...); which there are, the list of interfaces says. */
export type SectionName = string;

/** A state of some list of interfaces, as the world handles it without knowing which. */
export type State = { $schema?: string; clock?: ClockAnchor } & { [section: string]: unknown };

/** Reads and validates a whole state, naming `where` in its errors (a FixtureError). */
export type ParseState<S = State> = (data: unknown, where: string, options?: { owned?: boolean }) => S;

export interface StateFormat<T extends TObject, S = Static<T>> {
  /** The sections, in export order. */
  readonly sectionNames: readonly SectionName[];
  /** The whole state's schema. */
  readonly schema: T;
  /** What a fixture file may hold: any subset of the sections. */
  readonly fileSchema: TPartial<T>;
  /** A state with every section empty. */
  empty(): S;
  /**
   * Validates a whole state (a PUT of /_emulator/state, a state file). `owned`: nobody else
   * holds `data` (a file just parsed), so its defaults go in without copying it first.
   */
  parse: ParseState<S>;
  /**
   * Reads and merges every fixture file of a folder into one state. An id defined twice, in
   * one file or two, is refused naming both places; the identities found on the way serve
   * the reference checks too.
   */
  load(dir: string): Promise<S>;
  /** Duplicates and references to things that do not exist (see below). */
  consistencyProblems(state: S): { listed: string[]; total: number };
  /**
   * The state with every emulated time (core/time-shift.ts) moved by `delta` ms, and without
   * its clock: a copy of the entries that hold one, the others shared. The state itself is not
   * changed.
   */
  shift(state: S, delta: number): S;
}

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

/** Throws the problems found, if any, prefixed by `where`. */
function throwProblems(where: string, { listed, total }: { listed: string[]; total: number }): void {
  if (total) throw new FixtureError(problemMessage(where, listed.map((p) => `${where}: ${p}`), total - listed.length));
}


const shifters = new WeakMap<readonly AnyInterfaceModel[], (state: State, delta: number) => State>();

/**
 * How a state of these interfaces is moved in time (StateFormat.shift), made once per list:
 * the sections whose entries hold emulated times (core/time-shift.ts), and how to move them.
 */
export function stateShifter(interfaces: readonly AnyInterfaceModel[]): (state: State, delta: number) => State {
  let shift = shifters.get(interfaces);
  if (shift) return shift;
  const sections: Array<[SectionName, Shifter]> = [];
  for (const i of interfaces) {
    for (const [name, schema] of Object.entries(i.sections as Record<string, TSchema>)) {
      const shifter = timeShifter(schema);
      if (shifter) sections.push([name, shifter]);
    }
  }
  shift = (state, delta) => {
    const { clock: _clock, ...rest } = state;
    if (delta !== 0) for (const [name, shifter] of sections) if (rest[name] !== undefined) rest[name] = shifter(rest[name], delta);
    return rest;
  };
  shifters.set(interfaces, shift);
  return shift;
}

/** The whole state of a list of interfaces. */
export type StateOfList<L extends readonly AnyInterfaceModel[]> = Static<StateSchemaOf<L>>;

/** The state format of a list of interfaces: their sections, in the order of the list. */
/** The schema of the whole state of a list of interfaces. */
export type StateSchemaOf<L extends readonly AnyInterfaceModel[]> = TObject<
  { $schema: TOptional<TString>; clock: TOptional<typeof ClockAnchorSchema> } & SectionSchemasOf<L>
>;

export function stateFormat<L extends readonly AnyInterfaceModel[]>(interfaces: L): StateFormat<StateSchemaOf<L>> {
  type S = Static<StateSchemaOf<L>>;
  const sections: Record<string, TSchema> = {};
  const keyOf: Record<string, (item: never) => string | number> = {};
  for (const i of interfaces) {
    for (const name of Object.keys(i.sections)) {
      if (name in sections || name === '$schema' || name === 'clock') throw new Error(`interface ${i.name}: the state already has a section '${name}'`);
      sections[name] = i.sections[name];
      keyOf[name] = i.keys[name];
    }
  }
  const sectionNames: readonly SectionName[] = Object.freeze(Object.keys(sections));
  const schema = Type.Object(
    {
      $schema: Type.Optional(Type.String({ description: 'path of the JSON Schema, for editors' })),
      // An export's clock: its emulated times are relative to clock.now (docs/fixtures.md, "Time").
      clock: Type.Optional(ClockAnchorSchema),
      ...sections,
    },
    { additionalProperties: false, $id: 'State' },
  ) as unknown as StateSchemaOf<L>;
  const fileSchema = Type.Partial(schema, { additionalProperties: false });
  const empty = (): S => Object.fromEntries(sectionNames.map((name) => [name, []])) as unknown as S;
  const shift = stateShifter(interfaces) as unknown as (state: S, delta: number) => S;

  /** References to things that do not exist, given the identities of every section: each interface checks its own. */
  const referenceProblems = (state: S, keys: Record<SectionName, SectionKeys>, problem: (text: () => string) => void): void => {
    for (const i of interfaces) i.references?.(state, keys, problem);
  };

  /**
   * Problems a schema cannot see: duplicates and references to things that do not exist. Lists
   * the first MAX_LISTED_PROBLEMS and counts the rest, so a state with a million of them costs
   * no more than one pass.
   */
  const consistencyProblems = (state: S): { listed: string[]; total: number } => {
    const { problem, result } = problemList();
    const keys = {} as Record<SectionName, Set<string | number>>;
    for (const name of sectionNames) {
      keys[name] = new Set();
      ((state as Record<string, never[]>)[name]).forEach((item, i) => {
        const key = keyOf[name](item);
        if (keys[name].has(key)) problem(() => `$.${name}[${i}]: duplicate ${name} entry ${JSON.stringify(key)}`);
        keys[name].add(key);
      });
    }
    referenceProblems(state, keys, problem);
    return result();
  };

  const parse: ParseState<S> = (data, where, { owned = false } = {}) => {
    const state = validate(schema, { ...empty(), ...(data as object) }, where, { owned }) as S;
    throwProblems(where, consistencyProblems(state));
    return state;
  };

  const load = async (dir: string): Promise<S> => {
    const files = await readFixtureFiles(dir, fileSchema);
    const state = empty() as Record<string, never[]>;
    const origins = {} as Record<SectionName, Map<string | number, string>>;
    for (const name of sectionNames) origins[name] = new Map();
    // A folder takes the clock of the export in it (docs/fixtures.md, "Time"): one, as the
    // times of every file are read against it.
    let clockFrom: string | undefined;
    for (const { file, data } of files) {
      const { clock } = data as { clock?: ClockAnchor };
      if (clock) {
        if (clockFrom !== undefined) throw new FixtureError(`${file}: $.clock: ${clockFrom} carries a clock too; a folder holds at most one file with a clock (an export)`);
        clockFrom = file;
        (state as Record<string, unknown>).clock = clock;
      }
      for (const name of sectionNames) {
        const items = ((data as Record<string, never[] | undefined>)[name] ?? []) as never[];
        const origin = origins[name];
        const into = state[name];
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
    referenceProblems(state as S, origins, problem);
    throwProblems(dir, result());
    return state as S;
  };

  return { sectionNames, schema, fileSchema, empty, parse, load, consistencyProblems, shift };
}
