import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/index.js';
import { ManualClock } from '../../src/core/clock.js';

/**
 * fetch's credentials: 'include' against the default CORS settings fails in the browser with
 * an error the page cannot explain; the emulator says why in its log, naming the settings.
 */

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function started(config: { corsOrigins?: string; corsCredentials?: boolean } = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  emu = await startEmulator({ fixtures: {}, clock: new ManualClock(), logger: { level: 'warn', stream }, ...config });
  return { lines, warnings: () => lines.filter((l) => typeof l.msg === 'string' && (l.msg as string).includes('sent with credentials')) };
}

const FRONTEND = 'http://localhost:5173';
const call = (origin: string, cookie?: string) =>
  fetch(`${emu!.url}/_emulator/health`, { headers: { origin, ...(cookie ? { cookie } : {}) } });

describe('a cross-origin request sent with credentials the settings refuse', () => {
  it("logs once per origin, naming CORS_ORIGINS and CORS_CREDENTIALS, with the defaults ('*')", async () => {
    const { warnings } = await started();
    expect((await call(FRONTEND, 'session=1')).headers.get('access-control-allow-origin')).toBe('*');
    await call(FRONTEND, 'session=1');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ level: 40, origin: FRONTEND });
    expect(warnings()[0].msg).toBe(
      `a request from ${FRONTEND} was sent with credentials (cookies: fetch's credentials: 'include'), and the browser will refuse its answer: CORS_ORIGINS is '*': list the origin in CORS_ORIGINS and set CORS_CREDENTIALS=true (or send the request without credentials)`,
    );
  });

  it('with the origin listed but CORS_CREDENTIALS off, names CORS_CREDENTIALS', async () => {
    const { warnings } = await started({ corsOrigins: FRONTEND });
    await call(FRONTEND, 'session=1');
    expect(warnings()[0].msg).toContain('set CORS_CREDENTIALS=true (or send');
  });

  it('says nothing when credentials are answered, when no cookie is sent, or for the server’s own origin', async () => {
    const { warnings } = await started({ corsOrigins: FRONTEND, corsCredentials: true });
    expect((await call(FRONTEND, 'session=1')).headers.get('access-control-allow-credentials')).toBe('true');
    await call(FRONTEND);
    await call(emu!.url, 'session=1');
    expect(warnings()).toEqual([]);
  });
});
