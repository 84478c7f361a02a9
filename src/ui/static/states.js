// What the dashboard makes of lifecycle states: the colour family of a state, and the path
// of states a resource is on (its progress line). Pure functions of what
// GET /_emulator/lifecycles answers, kept apart from the page so that they can be tested.

/**
 * The colour family of a state: in progress, ready, failed, terminated, or idle (never
 * started). `families` lists the failed and the terminated states, as the server gives them
 * (paths.json `states`).
 */
export function family(state, isFinal, families) {
  if (state === 'LOADED') return 'idle';
  if (families.failed.includes(state)) return 'failed';
  if (families.terminated.includes(state)) return 'terminated';
  return isFinal ? 'ready' : 'progress';
}

/** Every table of one kind, in the order the emulator lists them (start tables first, success first). */
export function tablesOf(kindTables) {
  const found = [];
  const walk = (node) => {
    if (Array.isArray(node)) {
      if (node.length > 0 && node.every((row) => row && typeof row.state === 'string')) found.push(node);
      return;
    }
    if (node && typeof node === 'object') Object.values(node).forEach(walk);
  };
  walk(kindTables);
  return found;
}

/** The start table of `outcome` (an RSDB has one start table, whatever the outcome); undefined when there is none. */
export function startTable(kindTables, outcome) {
  const start = kindTables?.start;
  const table = Array.isArray(start) ? start : outcome === undefined ? undefined : start?.[outcome];
  return Array.isArray(table) && table.length > 0 ? table : undefined;
}

/**
 * The states a resource is going through, and which of them it is in. A resource on a start
 * (`currentStart` of GET /_emulator/lifecycles) is on the start table of that start's
 * outcome, from its first step: a start set to fail shows its way to the failure at once,
 * and keeps it while no next step is known (after a transition event, before the next read).
 * Otherwise: the table that holds its current state with its next state right after (rows
 * that a grid without monitors skips may lie between; they are left out), else the first
 * table that holds it. States the resource never takes (its `skips`) are left out of every
 * table. A never-started resource: LOADED, then the start table of
 * `startOutcome` (how its start is set to end) ahead, or the first one. `previous` is the
 * path shown before: while the resource is still on it, it stays, so a run keeps the path it
 * was seen taking (the same final state can end several tables).
 */
export function pathOf(kindTables, position, previous, startOutcome) {
  const { state } = position;
  const next = position.next?.state;
  // The states this resource never takes (`skips`: a grid without monitors) are in no table of it.
  const skips = position.skips?.length ? new Set(position.skips) : undefined;
  const taken = (rows) => (skips && rows ? rows.filter((row) => !skips.has(row.state)) : rows);
  const started = taken(startTable(kindTables, position.currentStart?.outcome));
  const onStart = started ? started.findIndex((row) => row.state === state) : -1;
  // Still on the path shown before: its past is what was seen, so it is kept. LOADED is no
  // step of a lifecycle: a start leaves it behind. On a start, only a path that goes the
  // start's way from here is kept.
  const onPath = previous && previous.rows[previous.current].state !== 'LOADED';
  let k = onPath ? previous.rows.findIndex((row, i) => i >= previous.current && row.state === state) : -1;
  if (k >= 0 && onStart >= 0 && !goesAlong(previous.rows, k, started, onStart)) k = -1;
  if (k >= 0 && (next === undefined ? onStart >= 0 || k === previous.rows.length - 1 : previous.rows[k + 1]?.state === next)) {
    return { rows: previous.rows, current: k };
  }
  if (onStart >= 0 && next === undefined) return { rows: started, current: onStart };
  const all = tablesOf(kindTables).map(taken);
  const tables = onStart >= 0 ? [started, ...all] : all;
  if (state === 'LOADED') {
    const configured = startOutcome === undefined ? undefined : taken(kindTables?.start?.[startOutcome]);
    return { rows: [{ state: 'LOADED' }, ...((Array.isArray(configured) && configured) || all[0] || [])], current: 0 };
  }
  for (const rows of tables) {
    const i = rows.findIndex((row) => row.state === state);
    if (i < 0) continue;
    if (next !== undefined) {
      let j = i + 1;
      while (j < rows.length && rows[j].monitorsOnly && rows[j].state !== next) j++;
      if (rows[j]?.state !== next) continue;
      // A turn off the path shown before (to a failure, say): the past as seen, the new future.
      if (k >= 0) return { rows: [...previous.rows.slice(0, k + 1), ...rows.slice(j)], current: k };
      return { rows: [...rows.slice(0, i + 1), ...rows.slice(j)], current: i };
    }
    if (i === rows.length - 1) return { rows, current: i };
  }
  // No next step known (a transition event, before the next read): the first table that holds the state.
  for (const rows of tables) {
    const i = rows.findIndex((row) => row.state === state);
    if (i >= 0) return { rows, current: i };
  }
  return { rows: [{ state }], current: 0 };
}

/**
 * Whether `rows` from `k` on are the states of `table` from `i` on, but for rows of it that
 * a grid without monitors skips (the path shown leaves out those it saw skipped).
 */
function goesAlong(rows, k, table, i) {
  let j = i;
  for (let r = k; r < rows.length; r++, j++) {
    while (j < table.length && table[j].monitorsOnly && table[j].state !== rows[r].state) j++;
    if (table[j]?.state !== rows[r].state) return false;
  }
  return j === table.length;
}

/**
 * A resource's position once a transition event moved it to `state` at `at`, before the
 * lifecycles are read again: the event says nothing of the next step (dropped until then) nor
 * of the start. A start the page sees begin (the first state of the start table of the
 * resource's `nextStart`, from a state it can be started in) is on that outcome; a state
 * off the start's table (a terminate, a cancel) leaves it. Changes `position` in place.
 */
export function moveTo(kindTables, position, state, at) {
  if (position.state === state) return position;
  const table = startTable(kindTables, position.nextStart?.outcome);
  if (position.isFinal && position.nextStart && table?.[0].state === state) {
    position.currentStart = { outcome: position.nextStart.outcome, startedAt: at };
  } else if (position.currentStart && !startTable(kindTables, position.currentStart.outcome)?.some((row) => row.state === state)) {
    delete position.currentStart;
  }
  position.state = state;
  if (typeof at === 'number') position.since = at;
  delete position.next;
  return position;
}
