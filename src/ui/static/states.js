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

/**
 * The states a resource is going through, and which of them it is in: the table that holds
 * its current state with its next state right after (rows that a grid without monitors
 * skips may lie between; they are left out). A never-started resource: LOADED, then the
 * start table of `startOutcome` (how its start is set to end) ahead, or the first one.
 * `previous` is the path shown before: while the resource is still on it, it stays, so a run
 * keeps the path it was seen taking (the same final state can end several tables).
 */
export function pathOf(kindTables, position, previous, startOutcome) {
  const { state } = position;
  const next = position.next?.state;
  // Still on the path shown before: its past is what was seen, so it is kept. LOADED is no
  // step of a lifecycle: a start leaves it behind.
  const onPath = previous && previous.rows[previous.current].state !== 'LOADED';
  const k = onPath ? previous.rows.findIndex((row, i) => i >= previous.current && row.state === state) : -1;
  if (k >= 0 && (next === undefined ? k === previous.rows.length - 1 : previous.rows[k + 1]?.state === next)) {
    return { rows: previous.rows, current: k };
  }
  const tables = tablesOf(kindTables);
  if (state === 'LOADED') {
    const configured = startOutcome === undefined ? undefined : kindTables?.start?.[startOutcome];
    return { rows: [{ state: 'LOADED' }, ...((Array.isArray(configured) && configured) || tables[0] || [])], current: 0 };
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
  return { rows: [{ state }], current: 0 };
}
