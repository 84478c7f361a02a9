// Types of base.js, for the tests that import it (the page itself needs no build step).
export interface PageBase {
  root: string;
  defaultRoot: string;
  sandbox: string | null;
}
export function pageBase(folder: string, ui: string, sandboxPrefix: string, name: RegExp): PageBase;
export function pagePath(defaultRoot: string, ui: string, sandboxPrefix: string, sandbox: string | null): string;
export function sandboxNameProblem(text: string, name: RegExp, rule: string): string | undefined;
