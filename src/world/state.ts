import { Type, type Static, type TObject, type TPartial, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  ProblemList,
  fillDefaults,
  formatProblem,
  isValid,
  leadingPath,
  locateProblems,
  parseJsonText,
  readFixtureTexts,
  schemaProblems,
  tooDeep,
  type IgnoredEntry,
  type Problem,
} from '../core/fixtures.js';
import type { AnyInterfaceModel, SectionKeys, SectionSchemasOf } from '../core/interface.js';
import { ClockAnchorSchema, type ClockAnchor } from '../core/clock.js';
import { timeShifter, type Shifter } from '../core/time-shift.js';
import { DemoSchema, type Demo, type StateSchemaWith } from './state-schemas.js';
import { TimelineStateSchema, timelineProblems, type TimelineState } from './timeline-schemas.js';

/**
 * The state format: the whole state of the emulator, in the fixture format, made of the
 * sections of every interface the world is given (src/interfaces.ts makes the one format the
 * emulator uses). A fixture file holds any subset of the sections; a folder of them is merged
 * into one state. An export of the running emulator is a state too, so an export is always a
 * valid fixture set.
 */

/** A section of the state (users, grids, ...); which there are, the list of interfaces says. */
export type SectionName = string;

export { DemoSchema, type Demo } from './state-schemas.js';

/** A state of some list of interfaces, as the world handles it without knowing which. */
export type State = { $schema?: string; demo?: Demo; clock?: ClockAnchor; timeline?: TimelineState } & { [section: string]: unknown };

/**
 * What the loader is told besides the data. `now`: the moment the state would be loaded at,
 * which times relative to the load (`startAgoMs`, ...) are checked against (a start passes its
 * clock's time, `check` the wall clock's); absent, only what holds at any moment is checked.
 * `maxListed`: how many problems are listed (default MAX_LISTED_PROBLEMS).
 */
export interface LoadOptions {
  now?: number;
  maxListed?: number;
  /** Aborted: the reading of files stops (a reload given up at its deadline). */
  signal?: AbortSignal;
}

/** Reads and validates a whole state, naming `where` in its errors (a FixtureError). */
export type ParseState<S = State> = (data: unknown, where: string, options?: { owned?: boolean; now?: number }) => S;

/** What a look at a fixture folder found: the state when it is valid, every problem (up to the bound), warnings. */
export interface FolderReport<S> {
  state?: S;
  problems: ProblemList;
  /** Not errors: a folder with no fixture file, say. */
  warnings: string[];
  /** The fixture files read, in name order. */
  files: string[];
  /** What is named like a fixture file but is not a regular file (a FIFO, a folder): not read. */
  ignored: IgnoredEntry[];
  /** The file that gives the folder's clock (an export), when one does. */
  clockFile?: string;
}

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
   * Validates a whole state (a PUT of /_emulator/state, a state file), as inspect checks a
   * folder. `owned`: nobody else holds `data` (a file just parsed), so its defaults go in
   * without copying it first.
   */
  parse: ParseState<S>;
  /** Reads and merges every fixture file of a folder into one state; throws a FixtureError listing the problems (see inspect). */
  load(dir: string, options?: LoadOptions): Promise<S>;
  /**
   * Reads a fixture folder and reports every problem of every file at once, each with its
   * file, line and column: JSON syntax, the schema, an id defined twice (in one file or two,
   * naming both places), references to things that do not exist, and what each interface
   * checks of its entries (`checks`). What start, reload, `check` and an import all run.
   * Throws a FixtureError only when the folder itself cannot be read.
   */
  inspect(dir: string, options?: LoadOptions): Promise<FolderReport<S>>;
  /** Duplicates, references to things that do not exist, and the interfaces' checks, of a valid state. */
  consistencyProblems(state: S): { listed: string[]; total: number };
  /**
   * The state with every emulated time (core/time-shift.ts) moved by `delta` ms, and without
   * its clock: a copy of the entries that hold one, the others shared. The state itself is not
   * changed.
   */
  shift(state: S, delta: number): S;
}

/** One input of the loader: a fixture file, or a whole posted state. */
interface Source {
  file?: string;
  /** The text, when there is one to find lines and columns in. */
  text?: string;
  data: unknown;
}

/** Where entries of a merged section came from: `count` entries of one source. */
interface Segment {
  source: number;
  merged: number;
  /** Their indexes in the source's section, when not consecutive (invalid ones were left out). */
  locals?: number[];
  count: number;
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

/** The schema of the whole state of a list of interfaces (and of the world's own sections `X`). */
export type StateSchemaOf<L extends readonly AnyInterfaceModel[]> = StateSchemaWith<SectionSchemasOf<L>>;

/**
 * The sections of the state that belong to the world rather than to an interface (its fault
 * rules, the scenarios applied to its resources), after the interfaces' own.
 */
export interface WorldSections {
  /** Each a `Type.Array(..., { default: [] })`. */
  readonly schemas: Readonly<Record<string, TSchema>>;
  /** Per section, the identity of an entry: duplicates are refused, naming both places. */
  readonly keys: Readonly<Record<string, (item: never) => string | number>>;
  /** Problems a schema cannot see, given the identities of every section (see InterfaceModel.references). */
  readonly problems?: (state: Record<string, unknown>, keys: Record<SectionName, SectionKeys>, problem: (text: () => string) => void) => void;
  /**
   * Applies the sections to the rest of a valid state, in place, once it is checked (a
   * scenario sets what its resource's next start does). The state is the caller's own copy.
   */
  readonly apply?: (state: Record<string, unknown>) => void;
}


/**
 * From how many entries (all sections of all sources together) a state is checked by the
 * schema's compiled checker: compiling the whole state's schema takes about what Value.Check
 * takes over a thousand entries, and the bundled demo seed has a few dozen.
 */
const COMPILED_CHECK_ENTRIES = 500;

/** How many entries the top-level arrays of the sources hold (what a check's time grows with). */
function entryCount(sources: readonly { data: unknown }[]): number {
  let count = 0;
  for (const { data } of sources) {
    if (data === null || typeof data !== 'object') continue;
    for (const value of Object.values(data)) if (Array.isArray(value)) count += value.length;
  }
  return count;
}

/**
 * The state format of a list of interfaces, and of the world's own sections when given (the
 * schema's type then names the interfaces' sections only: the caller that adds sections
 * types them).
 */
export function stateFormat<L extends readonly AnyInterfaceModel[]>(interfaces: L, world?: WorldSections): StateFormat<StateSchemaOf<L>> {
  type S = Static<StateSchemaOf<L>>;
  const sections: Record<string, TSchema> = {};
  const keyOf: Record<string, (item: never) => string | number> = {};
  for (const i of interfaces) {
    for (const name of Object.keys(i.sections)) {
      if (name in sections || name === '$schema' || name === 'demo' || name === 'clock' || name === 'timeline') throw new Error(`interface ${i.name}: the state already has a section '${name}'`);
      sections[name] = i.sections[name];
      keyOf[name] = i.keys[name];
    }
  }
  for (const name of Object.keys(world?.schemas ?? {})) {
    if (name in sections || name === '$schema' || name === 'demo' || name === 'clock' || name === 'timeline') throw new Error(`the world's section '${name}' is already a section of the state`);
    sections[name] = world!.schemas[name];
    keyOf[name] = world!.keys[name];
  }
  const sectionNames: readonly SectionName[] = Object.freeze(Object.keys(sections));
  const schema = Type.Object(
    {
      $schema: Type.Optional(Type.String({ description: 'path of the JSON Schema, for editors' })),
      demo: Type.Optional(DemoSchema),
      // An export's clock: its emulated times are relative to clock.now (docs/fixtures.md, "Time").
      clock: Type.Optional(ClockAnchorSchema),
      // Requests played at offsets from the load (docs/timelines.md).
      timeline: Type.Optional(TimelineStateSchema),
      ...sections,
    },
    { additionalProperties: false, $id: 'State' },
  ) as unknown as StateSchemaOf<L>;
  const fileSchema = Type.Partial(schema, { additionalProperties: false });
  const empty = (): S => Object.fromEntries(sectionNames.map((name) => [name, []])) as unknown as S;
  const itemSchemas: Record<string, TSchema> = Object.fromEntries(
    sectionNames.map((name) => [name, (sections[name] as TSchema & { items: TSchema }).items]),
  );

  /**
   * Everything a state can be refused for, over one or more sources (the files of a folder, a
   * posted state), listed into `problems`: the schema; ids defined twice; then, over the
   * entries that are valid, references and each interface's checks. Answers the merged state
   * (only of use when there are no problems). A single valid source is its own state, uncopied,
   * so that a large import costs what the schema check and one pass over its ids cost.
   */
  const examine = (sources: Source[], schemaOfSource: TSchema, problems: ProblemList, options: LoadOptions): Record<string, unknown> => {
    /** The source of each problem (and `also` place) listed, for its line and column. */
    const owners = new Map<object, number>();
    const fileOf = (k: number) => (sources[k].file !== undefined ? { file: sources[k].file } : {});
    const add = (k: number, pointer: string, message: string, also?: { source: number; pointer: string }) =>
      problems.add(() => {
        const p: Problem = { ...fileOf(k), pointer, message };
        owners.set(p, k);
        if (also) {
          p.also = { ...fileOf(also.source), pointer: also.pointer };
          owners.set(p.also, also.source);
        }
        return p;
      });

    // 1. Each source against the schema; of an invalid one, the entries valid by themselves.
    // The schema's compiled checker only where there are entries enough to repay compiling it.
    const compiled = entryCount(sources) >= COMPILED_CHECK_ENTRIES;
    const kept: Array<Record<string, number[]> | undefined> = [];
    sources.forEach((source, k) => {
      try {
        source.data = fillDefaults(schemaOfSource, source.data);
        const { valid, more } = schemaProblems(
          schemaOfSource,
          source.data,
          (pointer, message) => add(k, pointer, message),
          () => problems.full,
          { compiled },
        );
        if (more) problems.uncounted = true;
        if (valid) return;
      } catch (err) {
        // Filling and checking recurse: data nested thousands deep overflows the stack.
        if (!(err instanceof RangeError)) throw err;
        add(k, '', 'nested too deeply');
      }
      const keep: Record<string, number[]> = {};
      const data = source.data as Record<string, unknown> | null;
      for (const name of sectionNames) {
        const items = data !== null && typeof data === 'object' ? data[name] : undefined;
        const indexes: number[] = (keep[name] = []);
        if (!Array.isArray(items)) continue;
        for (let i = 0; i < items.length; i++) {
          try {
            if (isValid(itemSchemas[name], items[i])) indexes.push(i);
          } catch (err) {
            if (!(err instanceof RangeError)) throw err;
          }
        }
      }
      kept[k] = keep;
    });

    // 2. One state of every valid entry, and where each came from.
    const itemsOf = (k: number, name: string): unknown[] => {
      const data = sources[k].data as Record<string, unknown> | null;
      const items = data !== null && typeof data === 'object' ? data[name] : undefined;
      return Array.isArray(items) ? items : [];
    };
    const alone = sources.length === 1 && kept[0] === undefined;
    let state: Record<string, unknown>;
    const segments: Record<string, Segment[]> = {};
    if (alone) state = sources[0].data as Record<string, unknown>;
    else {
      state = {};
      for (const name of sectionNames) {
        // A section that one source gives whole is that source's own array, uncopied.
        const givers = sources.filter((_, k) => (kept[k]?.[name] ?? itemsOf(k, name)).length > 0);
        if (givers.length === 1) {
          const k = sources.indexOf(givers[0]);
          if (kept[k] === undefined) {
            const items = itemsOf(k, name);
            state[name] = items;
            segments[name] = [{ source: k, merged: 0, count: items.length }];
            continue;
          }
        }
        const into: unknown[] = [];
        state[name] = into;
        const list: Segment[] = (segments[name] = []);
        sources.forEach((_, k) => {
          const items = itemsOf(k, name);
          const locals = kept[k]?.[name];
          const count = locals ? locals.length : items.length;
          if (!count) return;
          list.push({ source: k, merged: into.length, count, ...(locals ? { locals } : {}) });
          if (locals) for (const i of locals) into.push(items[i]);
          else for (let i = 0; i < items.length; i++) into.push(items[i]);
        });
      }
    }
    /** The source, and the index in it, of the entry at `merged` of a section. */
    const originOf = (name: string, merged: number): { source: number; local: number } | undefined => {
      if (alone) return { source: 0, local: merged };
      const list = segments[name];
      if (!list) return undefined;
      let lo = 0;
      let hi = list.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const seg = list[mid];
        if (merged < seg.merged) hi = mid - 1;
        else if (merged >= seg.merged + seg.count) lo = mid + 1;
        else return { source: seg.source, local: seg.locals ? seg.locals[merged - seg.merged] : merged - seg.merged };
      }
      return undefined;
    };

    // 3. Ids defined twice, among the entries whose id can be read (every valid one, and an invalid one that has it).
    /** Whether every source giving the section is valid and its ids are numbers, each larger than the one before. */
    const increasingKeys = (name: string): boolean => {
      const keyOfEntry = keyOf[name];
      let last = -Infinity;
      for (let k = 0; k < sources.length; k++) {
        const items = itemsOf(k, name);
        if (items.length === 0) continue;
        if (kept[k] !== undefined) return false;
        for (let i = 0; i < items.length; i++) {
          const key = keyOfEntry(items[i] as never);
          if (typeof key !== 'number' || !(key > last)) return false;
          last = key;
        }
      }
      return true;
    };
    // An entry's place, `local * sourceCount + source`: a small integer (no number allocated
    // for it) while entries are fewer than 2^31 / sourceCount, and exact up to 2^53 beyond.
    const sourceCount = sources.length;
    const keys: Record<string, SectionKeys> = {};
    for (const name of sectionNames) {
      const keyOfEntry = keyOf[name];
      // Ids that are numbers in increasing order (a generated seed, an export) are distinct:
      // no map is needed to tell, and the set the checks below may ask is built on their first question.
      if (increasingKeys(name)) {
        let set: Set<string | number> | undefined;
        const build = () => {
          set = new Set();
          for (let k = 0; k < sourceCount; k++) {
            const items = itemsOf(k, name);
            for (let i = 0; i < items.length; i++) set.add(keyOfEntry(items[i] as never));
          }
          return set;
        };
        keys[name] = { has: (key) => (set ?? build()).has(key) };
        continue;
      }
      const seen = new Map<string | number, number>();
      keys[name] = seen;
      sources.forEach((_, k) => {
        const items = itemsOf(k, name);
        const checked = kept[k] === undefined;
        for (let i = 0; i < items.length; i++) {
          let key: unknown;
          if (checked) key = keyOfEntry(items[i] as never);
          else {
            try {
              key = keyOfEntry(items[i] as never);
            } catch {
              continue;
            }
            if (typeof key !== 'string' && (typeof key !== 'number' || Number.isNaN(key))) continue;
          }
          const earlier = seen.get(key as string | number);
          if (earlier === undefined) seen.set(key as string | number, i * sourceCount + k);
          else {
            const before = { source: earlier % sourceCount, local: Math.floor(earlier / sourceCount) };
            add(k, `/${name}/${i}`, `duplicate ${name} entry ${JSON.stringify(key)}`, { source: before.source, pointer: `/${name}/${before.local}` });
          }
        }
      });
    }

    // The demo, and the clock of an export (docs/fixtures.md, "Time"; the times of every
    // file are read against it): each given by one source at most.
    for (const [field, message] of [
      ['demo', 'the demo is described by one file only'],
      ['clock', 'a folder holds at most one file with a clock (an export)'],
      ['timeline', 'a folder holds at most one timeline'],
    ] as const) {
      let first: number | undefined;
      sources.forEach((source, k) => {
        const data = source.data as Record<string, unknown> | null;
        if (data === null || typeof data !== 'object' || data[field] === undefined) return;
        if (first === undefined) {
          first = k;
          if (!alone) state[field] = data[field];
          // What the schema cannot see of a timeline: how its times read, where its requests go.
          if (field === 'timeline' && kept[k] === undefined) {
            const timeline = data.timeline as TimelineState;
            for (const p of timelineProblems(timeline, undefined)) add(k, `/timeline${p.pointer}`, p.message);
            if ((timeline.played ?? 0) > timeline.steps.length) add(k, '/timeline/played', `${timeline.played} steps played of ${timeline.steps.length}`);
          }
        } else add(k, `/${field}`, message, { source: first, pointer: `/${field}` });
      });
    }

    // 4. What each interface checks of the merged state: references, and its own rules. Their
    // problems name a place in the merged state, which is put back into its file.
    const problem = (text: () => string) =>
      problems.add(() => {
        const said = text();
        const at = leadingPath(said);
        if (!at) return { pointer: '', message: said };
        const message = at.note ? `${at.message} (${at.note})` : at.message;
        const [, section, index, ...rest] = at.pointer.split('/');
        const origin = section !== undefined && index !== undefined && /^\d+$/.test(index) ? originOf(section, Number(index)) : undefined;
        if (!origin) return { pointer: at.pointer, message };
        const p: Problem = { ...fileOf(origin.source), pointer: ['', section, String(origin.local), ...rest].join('/'), message };
        owners.set(p, origin.source);
        return p;
      });
    for (const i of interfaces) i.references?.(state as never, keys as never, problem);
    for (const i of interfaces) i.checks?.(state as never, { now: options.now }, problem);
    world?.problems?.(state, keys, problem);

    // 5. Lines and columns of the problems listed: one pass over each text that has some.
    const bySource = new Map<number, Array<{ pointer: string; line?: number; column?: number }>>();
    for (const p of problems.listed) {
      for (const place of [p, p.also]) {
        const k = place ? owners.get(place) : undefined;
        if (place && k !== undefined && sources[k].text !== undefined) {
          let list = bySource.get(k);
          if (!list) bySource.set(k, (list = []));
          list.push(place);
        }
      }
    }
    for (const [k, list] of bySource) locateProblems(sources[k].text as string, list);
    return state;
  };

  /** Problems in the order of their files, then of their lines. */
  const sortProblems = (problems: ProblemList, files: readonly string[]) => {
    const rank = (p: Problem) => (p.file === undefined ? -1 : files.indexOf(p.file));
    problems.listed.sort((a, b) => rank(a) - rank(b) || (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  };

  const consistencyProblems = (state: S): { listed: string[]; total: number } => {
    const problems = new ProblemList();
    examine([{ data: state }], schema, problems, {});
    return { listed: problems.listed.map((p) => formatProblem(p).replace(/^: /, '')), total: problems.count };
  };

  const parse: ParseState<S> = (data, where, { owned = false, now } = {}) => {
    const problems = new ProblemList();
    let whole: unknown;
    try {
      whole = { ...empty(), ...((owned ? data : Value.Clone(data)) as object) };
    } catch (err) {
      if (err instanceof RangeError) throw tooDeep(where);
      throw err;
    }
    const state = examine([{ data: whole }], schema, problems, { now });
    if (problems.count) throw problems.error(where);
    world?.apply?.(state);
    return state as S;
  };

  const inspect = async (dir: string, options: LoadOptions = {}): Promise<FolderReport<S>> => {
    const problems = new ProblemList(options.maxListed);
    const { files, unreadable, ignored } = await readFixtureTexts(dir, options.signal);
    for (const p of unreadable) problems.add(() => p);
    const sources: Source[] = [];
    for (const { file, text } of files) {
      const parsed = parseJsonText(file, text);
      if ('problem' in parsed) problems.add(() => parsed.problem);
      else sources.push({ file, text, data: parsed.data });
    }
    const names = files.map((f) => f.file);
    const warnings = names.length === 0 && unreadable.length === 0 ? [`${dir}: no *.json fixture files: the emulator starts with an empty state`] : [];
    const merged = examine(sources, fileSchema, problems, options);
    sortProblems(problems, names);
    const clockFile = sources.find((source) => {
      const data = source.data as Record<string, unknown> | null;
      return data !== null && typeof data === 'object' && data.clock !== undefined;
    })?.file;
    const about = { warnings, files: names, ignored, ...(clockFile !== undefined ? { clockFile } : {}) };
    if (problems.count) return { problems, ...about };
    // A single file is its own state: the sections it leaves out are added, its $schema dropped.
    const state = empty() as Record<string, unknown>;
    for (const name of sectionNames) if (merged[name] !== undefined) state[name] = merged[name];
    if (merged.demo !== undefined) state.demo = merged.demo;
    if (merged.clock !== undefined) state.clock = merged.clock;
    if (merged.timeline !== undefined) state.timeline = merged.timeline;
    world?.apply?.(state);
    return { state: state as S, problems, ...about };
  };

  const load = async (dir: string, options: LoadOptions = {}): Promise<S> => {
    const report = await inspect(dir, options);
    if (report.problems.count) throw report.problems.error(dir);
    return report.state as S;
  };

  const shift = stateShifter(interfaces) as unknown as (state: S, delta: number) => S;

  return { sectionNames, schema, fileSchema, empty, parse, load, inspect, consistencyProblems, shift };
}
