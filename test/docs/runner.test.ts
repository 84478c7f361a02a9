import { afterEach, describe, expect, it } from 'vitest';
import { makeDemoApp, T0 } from '../helpers/app.js';
import { blocks } from './markdown.js';
import { mismatch, parsePattern } from './pattern.js';
import { runBlock, type Session } from './runner.js';
import { arithmetic } from './shell.js';
import { runTranscript } from './cli.js';

// The checker of the documentation's examples is only worth something if it fails when an
// output shown is wrong: these cases hold it to that.

let session: Session | undefined;
afterEach(async () => {
  await session?.app.close();
  session = undefined;
});

async function run(text: string) {
  const { app, clock } = await makeDemoApp();
  session = { app, clock, env: new Map(), files: new Map() };
  return runBlock(text, session);
}
const problems = async (text: string) => (await run(text)).map((o) => o.problem).filter(Boolean);

describe('output patterns', () => {
  const matches = (pattern: string, value: unknown) => mismatch(parsePattern(pattern), value);

  it('holds an object to exactly the keys shown, unless ... stands for the rest', () => {
    expect(matches('{"a":1,"b":"x"}', { a: 1, b: 'x' })).toBeUndefined();
    expect(matches('{"a":1}', { a: 1, b: 'x' })).toMatch(/keys the example does not show.*b/);
    expect(matches('{"a":1,...}', { a: 1, b: 'x' })).toBeUndefined();
    expect(matches('{..."a":1,...}', { z: 0, a: 1 })).toBeUndefined();
    expect(matches('{"a":2,...}', { a: 1 })).toMatch(/\$\.a: expected 2, got 1/);
    expect(matches('{"c":...}', { a: 1 })).toMatch(/\$\.c: missing/);
    expect(matches('{"a":...}', { a: null })).toBeUndefined();
  });

  it('holds an array to its elements in order, with ... for any run of them', () => {
    expect(matches('[1,2]', [1, 2])).toBeUndefined();
    expect(matches('[1,2]', [1, 2, 3])).toMatch(/3 elements/);
    expect(matches('[1, ...]', [1, 2, 3])).toBeUndefined();
    expect(matches('[..., 3]', [1, 2, 3])).toBeUndefined();
    expect(matches('[..., 2, ...]', [1, 2, 3])).toBeUndefined();
    expect(matches('[..., 4, ...]', [1, 2, 3])).toBeDefined();
    expect(matches('[...]', [])).toBeUndefined();
    expect(matches('[{"id":1,...}, ...]', [{ id: 2 }])).toMatch(/\$\[0\]\.id: expected 1, got 2/);
  });

  it('reads ... inside a string as any text', () => {
    expect(matches('{"token":"..."}', { token: '6f1c-22' })).toBeUndefined();
    expect(matches('"a...c"', 'abbbc')).toBeUndefined();
    expect(matches('"a...c"', 'abbbd')).toBeDefined();
    expect(matches('"a.c"', 'abc')).toBeDefined(); // a dot is a dot
  });
});

describe('the shell subset', () => {
  it('does arithmetic with variables', () => {
    const env = new Map([['NOW', '1000']]);
    expect(arithmetic('NOW - 7 * (86400 + 1)', env)).toBe(1000 - 7 * 86401);
    expect(arithmetic('$NOW / 3', env)).toBe(333);
  });

  it('refuses what it does not run, so such a block must be marked not-run', async () => {
    await expect(run('docker run --rm cloud-emulator')).rejects.toThrow(/not a command a run example may use/);
    await expect(run('curl -s http://localhost:8080/_emulator/health | jq .')).rejects.toThrow(/'\|' is not supported/);
    await expect(run('curl -s http://example.com/')).rejects.toThrow(/talk to http:\/\/localhost:8080/);
    await expect(run('curl -L http://localhost:8080/')).rejects.toThrow(/-L is not supported/);
    await expect(run('curl -s $NOPE/health')).rejects.toThrow(/variable NOPE is not set/);
    await expect(run('# 200 {}')).rejects.toThrow(/follows no command/);
  });
});

describe('running an example', () => {
  const E = 'E=http://localhost:8080/_emulator';

  it('passes when the answer matches the output shown', async () => {
    expect(await problems(`${E}\ncurl -s $E/clock\n# 200 {"now":${T0},"iso":"2026-11-22T09:00:00.000Z","scale":1,"frozen":true}`)).toEqual([]);
  });

  it('fails on a different status, a different field, or a field the example does not show', async () => {
    expect(await problems(`${E}\ncurl -s $E/clock\n# 201 {...}`)).toEqual(['answered 200, the example shows 201']);
    expect(await problems(`${E}\ncurl -s $E/clock\n# 200 {"now":1,...}`)).toEqual([`$.now: expected 1, got ${T0}`]);
    expect((await problems(`${E}\ncurl -s $E/clock\n# 200 {"now":${T0}}`))[0]).toMatch(/keys the example does not show.*: iso, scale, frozen/);
  });

  it('fails a command that answers an error without showing it', async () => {
    expect(await problems('curl -s http://localhost:8080/_emulator/nope')).toEqual(['answered 404 but the example shows no output (show it: # 404 ...)']);
  });

  it('sends what curl sends: POST and a form content type with -d, unless told otherwise', async () => {
    const text = `curl -s -X POST http://localhost:8080/concerto/mpulse/api/annotations/v1 -H 'X-Auth-Token: demo-token' -d '{"title":"t","start":1,"text":"x"}'
# 415 {"statusCode":415,"error":"Unsupported Media Type","message":"unsupported Content-Type 'application/x-www-form-urlencoded': send the body as application/json"}`;
    expect(await problems(text)).toEqual([]);
  });

  it('reads JSON continued over several comment lines, and -i output with headers', async () => {
    const text = `${E}
curl -s -X POST $E/clock/advance -H 'Content-Type: application/json' \\
  -d "{\\"ms\\":$((60 * 1000))}"
# 200 {"now":${T0 + 60_000},
#      "iso":"2026-11-22T09:01:00.000Z",...}
curl -si -X DELETE $E/health
# HTTP/1.1 405 Method Not Allowed
# allow: GET, HEAD
#
# {"statusCode":405,...}`;
    expect(await problems(text)).toEqual([]);
    expect(await problems(`${E}\ncurl -si -X DELETE $E/health\n# HTTP/1.1 405 Method Not Allowed\n# allow: GET\n#\n# {...}`)).toEqual([
      'allow: GET, HEAD, the example shows GET',
    ]);
  });

  it('keeps a file written with > for a later @file, and takes the time from the emulator for $(date +%s)', async () => {
    const text = `${E}
curl -s $E/state > snapshot.json
curl -s -X PUT $E/state -H 'Content-Type: application/json' --data-binary @snapshot.json
# 200 {"status":"replaced",...}
NOW=$(($(date +%s) * 1000))
curl -s $E/clock
# 200 {"now":${T0},...}`;
    expect(await problems(text)).toEqual([]);
    expect(session!.env.get('NOW')).toBe(String(T0));
  });
});

describe('markers', () => {
  it('reads not-run, emulator and recipe markers on the line before a fence', () => {
    const md = '<!-- not-run: starts a container -->\n```sh\ndocker run x\n```\n\n<!-- emulator: RATE_LIMIT_MAX=3 ADMIN_TOKEN=s -->\n\n```sh\ncurl x\n```\n<!-- recipe: vitest -->\n```ts\nx\n```\n';
    const [a, b, c] = blocks('x.md', md);
    expect(a).toMatchObject({ info: 'sh', notRun: 'starts a container', line: 2 });
    expect(b).toMatchObject({ emulator: { RATE_LIMIT_MAX: '3', ADMIN_TOKEN: 's' } });
    expect(c).toMatchObject({ info: 'ts', recipe: 'vitest' });
  });
});

describe('command-line transcripts', () => {
  const files = { 'mine/users.json': '{"users":[{"userName":"a","password":"b"}]}' };

  it('passes when the command prints what is shown, and fails when it does not', async () => {
    expect(await runTranscript('$ npx cloud-emulator check ./mine\nOK ./mine: 1 users\n$ echo $?\n0', files)).toEqual([]);
    const [problem] = await runTranscript('$ npx cloud-emulator check ./mine\nOK ./mine: 2 users', files);
    expect(problem).toMatch(/shown:\n\s+OK \.\/mine: 2 users\n\s+printed:\n\s+OK \.\/mine: 1 users/);
    expect(await runTranscript('$ cloud-emulator --port 70000\ncloud-emulator: invalid configuration:\n  - --port="70000": ...\n$ echo $?\n2', {})).toEqual([]);
  });

  it('refuses a command that would start a server', async () => {
    await expect(runTranscript('$ npx cloud-emulator --port 9000', {})).rejects.toThrow(/would start a server/);
    await expect(runTranscript('$ docker run cloud-emulator', {})).rejects.toThrow(/not a command a transcript may run/);
  });
});
