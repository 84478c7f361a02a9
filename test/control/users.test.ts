import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { TEST_USER, authSeed, makeApp, makeDemoApp } from '../helpers/app.js';
import { MAX_LISTED_USERS } from '../../src/control/schemas.js';

// GET /_emulator/users: whom a client (the dashboard) can sign in as in a world.

let app: FastifyInstance;
afterEach(async () => app?.close());

describe('GET /_emulator/users', () => {
  it("lists the demo seed's users with their passwords, and its tokens that never expire", async () => {
    ({ app } = await makeDemoApp());
    const res = await app.inject({ url: '/_emulator/users' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.users[0]).toEqual({ userName: 'demo@example.com', password: 'demo', tenant: 'Default', fullName: 'Demo User' });
    expect(body.users.map((u: { userName: string }) => u.userName)).toContain('john.smith@example.com');
    expect(body.tokens).toEqual([{ token: 'demo-token', userName: 'demo@example.com' }]);
    expect(body.unlisted).toEqual({ users: 0, tokens: 0 });
    // What it lists signs in.
    const login = await app.inject({ method: 'PUT', url: '/concerto/services/rest/RepositoryService/v1/Tokens', payload: { userName: body.users[1].userName, password: body.users[1].password } });
    expect(login.statusCode).toBe(200);
  });

  it('lists a seed without the demo user, and leaves out tokens that expire', async () => {
    ({ app } = await makeApp(authSeed()));
    const body = (await app.inject({ url: '/_emulator/users' })).json();
    expect(body.users).toEqual([{ userName: TEST_USER.userName, password: TEST_USER.password, tenant: TEST_USER.tenant }]);
    expect(body.tokens).toEqual([]);
  });

  it(`lists at most ${MAX_LISTED_USERS} of each, and counts the rest`, async () => {
    const users = Array.from({ length: MAX_LISTED_USERS + 3 }, (_, i) => ({ userName: `u${i}@example.com`, password: 'pw', tenant: 'Default' }));
    ({ app } = await makeApp({ users, tokens: users.map((u, i) => ({ token: `t${i}`, userName: u.userName, neverExpires: true })) }));
    const body = (await app.inject({ url: '/_emulator/users' })).json();
    expect(body.users).toHaveLength(MAX_LISTED_USERS);
    expect(body.tokens).toHaveLength(MAX_LISTED_USERS);
    expect(body.unlisted).toEqual({ users: 3, tokens: 3 });
  });

  it('needs the admin token when ADMIN_TOKEN is set, and serves no other method', async () => {
    ({ app } = await makeDemoApp({ adminToken: 'let-me-in' }));
    expect((await app.inject({ url: '/_emulator/users' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/_emulator/users', headers: { authorization: 'Bearer let-me-in' } })).statusCode).toBe(200);
    const put = await app.inject({ method: 'PUT', url: '/_emulator/users', headers: { authorization: 'Bearer let-me-in' }, payload: {} });
    expect(put.statusCode).toBe(405);
  });
});
