/** Every spelling of `path` the corpus knows, at most `limit` of them. */
export function spellings(path: string, limit?: number): string[];
