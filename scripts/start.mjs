// `npm start`: the server as built at install (npm ci runs the build through `prepare`),
// rebuilt first only when a source changed since; then the server runs in this same process,
// so a start costs one Node process, not a compile.
import { build, isStale } from './build.mjs';
import { helpIfAsked } from '../bench/help.mjs';

helpIfAsked(import.meta.url);

if (isStale()) {
  process.stderr.write('cloud-emulator: sources changed since the last build; building first\n');
  await build();
}
await import('../dist/cli/server.js');
