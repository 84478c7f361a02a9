// The fixtures folder, when the emulator reloads it (WATCH): while an edit has left it with
// problems, the last good seed is served and this banner says what is wrong, until it is fixed;
// a folder that had problems at start leaves the world empty until then. A watch that has
// stopped reading the folder is said too.
import { api } from './api.js';
import { $, h } from './dom.js';
import { PATHS } from './paths.js';

/** Reads the seed's report from the health check and shows its problems, or hides the banner. */
export async function readSeed() {
  const health = await api('GET', `${PATHS.control}/health`);
  renderSeed(health?.seed);
}

/** `seed`: the `seed` field of GET /_emulator/health; absent when the seed came from no folder. */
export function renderSeed(seed) {
  const banner = $('#seed-problems');
  if (!seed || (seed.status !== 'error' && seed.stopped === undefined)) {
    banner.hidden = true;
    banner.replaceChildren();
    return;
  }
  const more = seed.unlisted ? [h('li', {}, `and ${seed.unlisted} more`)] : [];
  const headline =
    seed.status !== 'error'
      ? 'The fixtures folder is not being watched now.'
      : seed.serving === 'empty'
        ? 'The fixtures had problems at start: the emulator runs on an empty seed until they are fixed.'
        : 'The fixtures have problems: the last good seed is served until they are fixed.';
  const stopped = seed.stopped === undefined ? [] : [h('p', {}, seed.stopped)];
  banner.replaceChildren(h('strong', {}, headline), h('ul', {}, ...seed.problems.map((p) => h('li', {}, p.text)), ...more), ...stopped);
  banner.hidden = false;
}
