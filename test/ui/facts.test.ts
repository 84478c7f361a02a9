import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NO_TEARDOWN_STATES, STATE_FAMILIES } from '../../src/provisioning/schemas.js';
import { ACCEPTED_IN, INSTANCE_FAMILIES } from '../../src/compositions/lifecycles.js';
import { pageSettings } from '../../src/ui/plugin.js';

/**
 * The dashboard is plain JavaScript served as it is, so it cannot import the constants of
 * src/: it reads them from the server (paths.json), and keeps no copy of its own.
 */
const STATIC = new URL('../../src/ui/static/', import.meta.url);

describe("the dashboard and the server's constants", () => {
  it('gets the state families and the no-teardown states from paths.json', () => {
    expect(pageSettings().states).toEqual({ ...STATE_FAMILIES, noTeardown: NO_TEARDOWN_STATES });
  });

  it('gets where each composition command is accepted, and the instance state families, from paths.json', () => {
    expect(pageSettings().instances).toEqual({ acceptedIn: ACCEPTED_IN, families: INSTANCE_FAMILIES });
  });

  it('keeps no list of provisioning or instance states of its own', () => {
    // A state name only a copy of those lists would spell out.
    for (const file of readdirSync(STATIC).filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(new URL(file, STATIC), 'utf8');
      for (const state of ['TERMINATED_WITH_FAILURES', 'VOLUME_NOT_FORMATTED', 'CANCELLING', 'Resuming', 'Aborted']) expect(text, `${file} spells ${state}`).not.toContain(`'${state}'`);
    }
  });
});
