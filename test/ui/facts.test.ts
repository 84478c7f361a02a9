import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NO_TEARDOWN_STATES } from '../../src/provisioning/schemas.js';

/**
 * The dashboard is plain JavaScript served as it is, so it cannot import the constants of
 * src/. Where it must know one, its copy is held to the original here.
 */
const resources = readFileSync(new URL('../../src/ui/static/resources.js', import.meta.url), 'utf8');

describe("the dashboard's copies of the server's constants", () => {
  it('greys Terminate in exactly the states where terminating is a no-op (NO_TEARDOWN_STATES)', () => {
    const copy = /const NO_TEARDOWN = new Set\((\[[^\]]*\])\);/.exec(resources);
    expect(copy, 'src/ui/static/resources.js declares NO_TEARDOWN').not.toBeNull();
    expect(JSON.parse(copy![1].replace(/'/g, '"'))).toEqual([...NO_TEARDOWN_STATES]);
  });
});
