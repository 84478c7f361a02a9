#!/usr/bin/env node
import { runCli } from './run.js';

/** The `cloud-emulator` command. */
runCli(process.argv.slice(2), process.env).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`cloud-emulator: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
