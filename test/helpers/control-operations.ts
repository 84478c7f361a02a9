import { makeApp } from './app.js';

/** One operation of the control API: its method, and its path below /_emulator (`/lifecycles/{kind}/{id}/fail`). */
export interface ControlOperation {
  method: string;
  path: string;
}

/** Every /_emulator operation of the OpenAPI document, which is made from the routes themselves. */
export async function controlOperations(): Promise<ControlOperation[]> {
  const { app } = await makeApp();
  try {
    await app.ready();
    const document = app.swagger() as { paths: Record<string, Record<string, unknown>> };
    return Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/_emulator/'))
      .flatMap(([path, item]) => Object.keys(item).filter((m) => m !== 'head').map((m) => ({ method: m.toUpperCase(), path: path.slice('/_emulator'.length) })));
  } finally {
    await app.close();
  }
}

/** Whether an operation's path (`/lifecycles/{kind}/{id}/fail`) matches a called path whose parameters are each `_`, one segment each. */
export const matchesCall = (pattern: string, path: string) =>
  pattern.split('/').length === path.split('/').length && pattern.split('/').every((p, i) => p.startsWith('{') || p === path.split('/')[i]);

/** An operation's name as a message lists it: `POST /_emulator/clock/advance`. */
export const operationName = (o: ControlOperation) => `${o.method} /_emulator${o.path}`;
