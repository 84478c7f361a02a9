import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { PATHS, makeDemoApp } from '../helpers/app.js';

/**
 * A method a path does not serve is answered 405, with an Allow header naming what it does
 * serve; the answers come from the routes themselves (http/routing.ts, refuseOtherMethods).
 */

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

describe('405 Method Not Allowed', () => {
  it('answers every path of the control API and of provisioning with the methods its routes serve', async () => {
    ({ app } = await makeDemoApp());
    await app.ready();
    const document = app.swagger() as { paths: Record<string, Record<string, unknown>> };
    const paths = Object.entries(document.paths).filter(([path]) => path.startsWith(`${PATHS.CONTROL}/`) || path.startsWith(`${PATHS.CLOUD}/`));
    expect(paths.length).toBeGreaterThan(20);
    for (const [path, item] of paths) {
      const served = Object.keys(item).map((m) => m.toUpperCase()).filter((m) => m !== 'HEAD').sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
      const allow = [...served, ...(served.includes('GET') ? ['HEAD'] : [])].join(', ');
      const other = ORDER.find((m) => !served.includes(m))!;
      const res = await app.inject({ method: other as 'PATCH', url: path.replace(/\{[^}]+\}/g, '1'), headers: { 'x-auth-token': 'demo-token' } });
      expect(res.statusCode, `${other} ${path}`).toBe(405);
      expect(res.headers.allow, `${other} ${path}`).toBe(allow);
      expect(res.json().message).toBe(`method ${other} is not allowed here; allowed: ${allow}`);
    }
  });
});
