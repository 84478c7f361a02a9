import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/config.js';
import { configTable } from '../../src/cli/args.js';
import { loadFixtures } from '../../src/state.js';
import { makeApp } from '../helpers/app.js';
import { ROOT, blocks, documents, prose, read } from './markdown.js';

/**
 * The documentation covers what the emulator has: every setting, every control endpoint and
 * every error message the code can answer, each found in docs/ (so a new one fails here until
 * it is written down), and nothing it shows can fall behind the code unnoticed.
 */

const DOCS = documents().filter((f) => f.startsWith('docs/'));
const allDocs = () => DOCS.map(read).join('\n');

describe('the configuration page', () => {
  it('holds the table generated from the settings schema, unchanged', () => {
    const page = read('docs/configuration.md');
    const start = '<!-- generated: npm run docs:config -- --write -->';
    const end = '<!-- end of generated table -->';
    expect(page).toContain(start);
    const table = page.slice(page.indexOf(start) + start.length, page.indexOf(end)).trim();
    expect(table, 'run `npm run docs:config -- --write`').toBe(configTable().trim());
  });

  it('names every setting, by its variable and its option', () => {
    const text = allDocs();
    const missing = SETTINGS.flatMap((s) => [`\`${s.env}\``, s.flag]).filter((name) => !text.includes(name));
    expect(missing).toEqual([]);
  });
});

/** `/_emulator/lifecycles/{kind}/{id}` as a pattern that `<kind>` and `environment` both fit. */
function endpointPattern(method: string, path: string): RegExp {
  const escaped = path
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/\\s`]+');
  return new RegExp(`\`${method.toUpperCase()} ${escaped}/?\``);
}

describe('the control API page', () => {
  it('documents every /_emulator endpoint of the OpenAPI document as `METHOD /path`', async () => {
    const { app } = await makeApp();
    try {
      const doc = (await app.inject({ url: '/_emulator/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
      const endpoints = Object.entries(doc.paths)
        .filter(([path]) => path.startsWith('/_emulator'))
        .flatMap(([path, item]) => Object.keys(item).map((method) => [method, path] as const));
      expect(endpoints.length).toBeGreaterThan(20);
      const text = read('docs/control-api.md');
      const missing = endpoints.filter(([method, path]) => !endpointPattern(method, path).test(text)).map(([m, p]) => `${m.toUpperCase()} ${p}`);
      expect(missing).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

// ---------------------------------------------------------------------------------------
// Error messages: every message the code answers with, read from the source.

/** Which argument of which call is an error message. */
const MESSAGE_ARGUMENT: Record<string, number> = {
  badRequest: 0,
  notFound: 0,
  conflict: 0,
  unauthorized: 0,
  sendError: 2,
  ApiError: 1,
  invalid: 0,
  missing: 0,
  conflicting: 0,
  unavailable: 0,
  DomainError: 1,
  JournalMatchError: 0,
  UsageError: 0,
  ToolArgumentError: 0,
  refuse: 2,
};

/** The parts of a message: literal text, and `null` where a value goes in. */
type Family = Array<string | null>;

function families(file: string): Array<{ where: string; family: Family }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const constants = new Map<string, ts.Expression>();
  const visitConstants = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) constants.set(node.name.text, node.initializer);
    ts.forEachChild(node, visitConstants);
  };
  visitConstants(source);

  /** Every message an expression can be; [] when it is not built from literals here. */
  const messages = (e: ts.Expression, depth = 0): Family[] => {
    if (depth > 4) return [];
    if (ts.isParenthesizedExpression(e)) return messages(e.expression, depth);
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return [[e.text]];
    if (ts.isTemplateExpression(e)) {
      const family: Family = [e.head.text];
      for (const span of e.templateSpans) family.push(null, span.literal.text);
      return [family];
    }
    if (ts.isConditionalExpression(e)) return [...messages(e.whenTrue, depth + 1), ...messages(e.whenFalse, depth + 1)];
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const left = messages(e.left, depth + 1);
      const right = messages(e.right, depth + 1);
      return left.flatMap((l) => right.map((r) => [...l, ...r]));
    }
    if (ts.isIdentifier(e) && constants.has(e.text)) return messages(constants.get(e.text)!, depth + 1);
    return [];
  };

  const found: Array<{ where: string; family: Family }> = [];
  const visit = (node: ts.Node) => {
    if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && ts.isIdentifier(node.expression)) {
      const index = MESSAGE_ARGUMENT[node.expression.text];
      const argument = index === undefined ? undefined : node.arguments?.[index];
      if (argument) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        for (const family of messages(argument)) found.push({ where: `${file.slice(ROOT.length)}:${line}`, family });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? (d.name === 'static' ? [] : sourceFiles(join(dir, d.name))) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

/** A message with its values left open: literal text must be there, a value may be anything on the line. */
function familyPattern(family: Family): RegExp {
  return new RegExp(family.map((part) => (part === null ? '[^\\n]*?' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join(''));
}

/** Messages built where the scan cannot see them (the validation errors of a schema). */
const COMPUTED: Family[] = [
  [null, ": missing required field '", null, "'"],
  [null, ": unknown field '", null, "'"],
  [null, " field '", null, "' must be ", null],
];

describe('the error messages', () => {
  const all = sourceFiles(join(ROOT, 'src')).flatMap((f) => families(f));

  it('are read from the source (the scan still finds them)', () => {
    expect(all.length).toBeGreaterThan(60);
    expect(all.map((f) => f.family.join('…'))).toContain('the body is not valid JSON');
  });

  it('each appear in docs/, with an example of its values', () => {
    const text = allDocs().replace(/\\"/g, '"');
    const missing = [...all, ...COMPUTED.map((family) => ({ where: 'http/errors.ts validationMessage', family }))]
      .filter(({ family }) => family.some((p) => p !== null && p.trim().length > 0))
      .filter(({ family }) => !familyPattern(family).test(text))
      .map(({ where, family }) => `${where}: ${family.map((p) => p ?? '<value>').join('')}`);
    expect(missing).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------

describe('the pages', () => {
  it('keep the README short: under 15 KB', () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThan(15 * 1024);
  });

  it('are all linked from the README', () => {
    const readme = read('README.md');
    const unlinked = DOCS.filter((file) => !readme.includes(`](${file})`) && !readme.includes(`](${file}#`));
    expect(unlinked).toEqual([]);
  });

  it('show curl commands only in fenced blocks, where they are run or marked not-run', () => {
    // A command with a target (`curl -s $E/health`) outside a block would escape the examples test.
    const outside = documents().flatMap((file) => [...prose(read(file)).matchAll(/`curl [^`]*(https?:|\$[A-Za-z])[^`]*`/g)].map((m) => `${file}: ${m[0]}`));
    expect(outside).toEqual([]);
  });

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of documents()) {
      const text = prose(read(file)).replace(/`[^`\n]*`/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target) || target.startsWith('/')) continue;
        const [path, anchor] = target.split('#');
        const resolved = path === '' ? file : join(dirname(file), path);
        if (!existsSync(join(ROOT, resolved))) {
          broken.push(`${file}: ${target} (no file)`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith('.md') && !headings(read(resolved)).has(anchor)) broken.push(`${file}: ${target} (no heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('give fixture examples that load: every JSON block naming fixture.schema.json is a valid fixture set', async () => {
    const examples = documents().flatMap((file) => blocks(file, read(file)).filter((b) => b.info === 'json' && b.text.includes('"./fixture.schema.json"')));
    expect(examples.length).toBeGreaterThan(4);
    for (const example of examples) {
      const dir = mkdtempSync(join(tmpdir(), 'docs-fixture-'));
      try {
        writeFileSync(join(dir, 'example.json'), example.text);
        await expect(loadFixtures(dir), `${example.file}:${example.line}`).resolves.toBeDefined();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

/** The anchors GitHub gives a page's headings. */
function headings(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, title] of prose(markdown).matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const base = title
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}
