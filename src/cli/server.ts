import { exitOnStartupError, serve } from './serve.js';

/** The process entry of `npm start` and the container: settings come from the environment only. */
serve({}, process.env).catch(exitOnStartupError);
