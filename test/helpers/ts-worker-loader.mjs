// `node --import ./ts-worker-loader.mjs`: registers ts-hooks.mjs, so that a worker thread of
// a test runs the TypeScript sources.
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
