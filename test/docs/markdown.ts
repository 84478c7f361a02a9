import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The project's root folder. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every document whose examples are run: the README and each file of docs/. */
export function documents(): string[] {
  const docs = readdirSync(`${ROOT}docs`)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

export const read = (file: string): string => readFileSync(`${ROOT}${file}`, 'utf8');

export interface Block {
  file: string;
  /** Line of the opening fence, from 1. */
  line: number;
  /** The fence's info string, e.g. `sh`, `json`, `ts`. */
  info: string;
  text: string;
  /** `<!-- not-run: why -->` on the line before the fence. */
  notRun?: string;
  /** `<!-- emulator: NAME=value ... -->` on the line before the fence: a fresh emulator with these settings. */
  emulator?: Record<string, string>;
  /** `<!-- recipe: name -->` on the line before the fence: a code sample the recipes test runs. */
  recipe?: string;
  /** `<!-- file: path -->` on the line before the fence: a file the page's transcripts read. */
  path?: string;
}

/** Info strings of blocks that hold shell commands: each is run, or marked not-run. */
export const SHELL = new Set(['sh', 'bash', 'shell', 'console']);

/**
 * The fenced blocks of a Markdown text. A block's marker is the HTML comment on the last
 * non-blank line before its fence; a comment the reader does not see, so the text around
 * says in words what it means.
 */
export function blocks(file: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j].trimStart().startsWith(fence); j++) body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const marker = k >= 0 ? /^\s*<!--\s*([a-z-]+)(?::\s*(.*?))?\s*-->\s*$/.exec(lines[k]) : null;
    const block: Block = { file, line: i + 1, info, text: body.join('\n') };
    if (marker?.[1] === 'not-run') block.notRun = marker[2] ?? '';
    if (marker?.[1] === 'emulator') block.emulator = Object.fromEntries((marker[2] ?? '').split(/\s+/).filter(Boolean).map((p) => p.split(/=(.*)/s).slice(0, 2) as [string, string]));
    if (marker?.[1] === 'recipe') block.recipe = marker[2] ?? '';
    if (marker?.[1] === 'file') block.path = marker[2] ?? '';
    out.push(block);
    i = j;
  }
  return out;
}

/** The text outside fenced blocks (tables, prose, inline code). */
export function prose(markdown: string): string {
  return markdown.replace(/^(\s*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\s*\2[^\n]*$/gm, '');
}
