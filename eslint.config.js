// The linter: ESLint's and typescript-eslint's recommended rules, and the house rules that a
// reviewer would otherwise have to remember.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Reading the real time anywhere but the clock would make that code impossible to fast-forward. */
const NO_REAL_TIME = [
  {
    selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
    message: 'read time from the injected clock (src/core/clock.ts), never Date.now()',
  },
  {
    selector: "NewExpression[callee.name='Date'][arguments.length=0]",
    message: 'read time from the injected clock (src/core/clock.ts), never new Date()',
  },
];

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'test-results/**', 'node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'max-len': ['error', { code: 160, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }],
    },
  },
  {
    files: ['src/**/*.ts', 'src/**/*.js'],
    ignores: ['src/core/clock.ts'],
    rules: { 'no-restricted-syntax': ['error', ...NO_REAL_TIME] },
  },
  {
    // The dashboard runs in a browser.
    files: ['src/ui/static/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
