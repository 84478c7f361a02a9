// The baseline of every benchmark case: a bare Fastify server in the same Node version that
// answers every request with one fixed JSON value, the very body the emulator answered for
// the case (so the bytes on the wire are the same). What the emulator adds on top of this
// (hooks, token check, rate limit, lifecycles, views, schema serialisation) is what a ratio
// measures.
//
// Environment: PORT, HOST, BODY_FILE (a file holding the JSON body to answer), STATUS (200 or
// 204; 204 answers no body).
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const status = Number(process.env.STATUS ?? 200);
const body = status === 204 ? null : JSON.parse(readFileSync(process.env.BODY_FILE, 'utf8'));

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });

app.get('/_emulator/health', async () => ({ status: 'ok' }));
// A POST body is parsed like the emulator parses it (JSON), then dropped.
app.all('/*', async (_request, reply) => (status === 204 ? reply.code(204).send() : reply.code(status).send(body)));

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => app.close().then(() => process.exit(0)));
