// Types of areas.js, for the tests that import it (the page itself needs no build step).
import type { Area } from '../../http/paths.js';
export function areaIn(areas: readonly Area[], path: string): Area | undefined;
