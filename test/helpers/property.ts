import fc from 'fast-check';

/**
 * Parameters for every property test (`fc.assert`), so that a failure can be replayed
 * exactly: the seed comes from FC_SEED when set (else a random one, as fast-check picks), the
 * counterexample's path from FC_PATH, and a failure's message ends with the line to run to
 * replay it, e.g.
 *
 *     FC_SEED=1234 FC_PATH="12:0:3" npx vitest run test/http/hostile.test.ts -t 'broken bytes'
 *
 * With FC_PATH, only the property that failed should be run (`-t`): the path belongs to it.
 */
export function replayable<Ts>(params: fc.Parameters<Ts> = {}): fc.Parameters<Ts> {
  const seed = envInteger('FC_SEED') ?? Math.floor(Math.random() * 0x7fffffff);
  const path = process.env.FC_PATH?.trim();
  return {
    ...params,
    seed,
    ...(path ? { path, endOnFailure: true } : {}),
    reporter: (details) => {
      if (!details.failed) return;
      const replay = `replay with: FC_SEED=${details.seed} FC_PATH="${details.counterexamplePath ?? ''}" npx vitest run <this file> -t '<this test>'`;
      throw new Error(`${fc.defaultReportMessage(details) ?? 'property failed'}\n${replay}`, { cause: details.errorInstance });
    },
  };
}

function envInteger(name: string): number | undefined {
  const raw = process.env[name]?.trim();
  if (!raw) return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name}=${raw}: expected an integer (the seed a failed property test printed)`);
  return n | 0;
}
