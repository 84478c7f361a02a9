import { afterEach } from 'vitest';
import { takeMismatches } from './conformance.js';

// A response that differs from the OpenAPI document fails the test that received it.
afterEach(() => {
  const found = takeMismatches();
  if (found.length) {
    throw new Error(`responses that do not match the OpenAPI document:\n${found.map((m) => `  - ${m}`).join('\n')}`);
  }
});
