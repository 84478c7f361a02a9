import { describe, expect, it } from 'vitest';
import { jsonSyntaxError, locatePointers, positionsOf } from '../../src/core/json-text.js';

const at = (text: string) => {
  const error = jsonSyntaxError(text);
  if (!error) return undefined;
  const [{ line, column }] = positionsOf(text, [error.offset]);
  return `${line}:${column} ${error.message}`;
};

describe('JSON syntax errors with line and column', () => {
  it.each([
    ['{\n  "a": 1,\n}', "2:9 trailing comma: nothing follows it before '}'"],
    ['[1,\n 2,]', "2:3 trailing comma: nothing follows it before ']'"],
    ['{"a" 1}', "1:6 expected ':' after the property name, found '1'"],
    ['{"a": x}', "1:7 unexpected 'x': a value is a string in double quotes, a number, true, false, null, an object or an array"],
    ["{'a': 1}", "1:2 expected a property name in double quotes, found '''"],
    ['{"a": "b\nc"}', '1:9 a line break inside a string (write it as an escape)'],
    ['{"a": "\\q"}', "1:8 unknown escape '\\q' in a string"],
    ['{"a": 1} {', "1:10 unexpected '{' after the end of the JSON value"],
    ['{"a": [1, 2}', "1:12 expected ',' or ']' after an array element, found '}'"],
    // A missing comma at the end of a line is shown there, right after the value, not at the next line's token.
    ['{\n  "a": 1\n  "b": 2\n}', "2:9 expected ',' or '}' after a property value, found '\"'"],
    ['[\n  1\n\n  2\n]', "2:4 expected ',' or ']' after an array element, found '2'"],
    ['{\n  "a": {"b": 1}\n  "c": 2\n}', "2:16 expected ',' or '}' after a property value, found '\"'"],
    ['{"a": [1, 2', '1:12 the text ends before an array is closed (a ] is missing)'],
    ['', '1:1 the text holds no JSON value'],
    ['{"a": -}', '1:7 a number needs digits'],
  ])('%j', (text, expected) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(at(text)).toBe(expected);
  });

  it('finds nothing wrong in valid JSON, however deeply nested (no recursion)', () => {
    for (const text of ['{}', '[]', '"x"', '-0.5e+3', '{"a":[true,false,null,{"b":"\\u00e9\\n"}]}', `${'['.repeat(200_000)}${']'.repeat(200_000)}`]) {
      expect(jsonSyntaxError(text)).toBeUndefined();
    }
    expect(jsonSyntaxError(`${'['.repeat(200_000)}`)?.message).toBe('the text ends where a value should be');
  });
});

describe('where a JSON pointer is', () => {
  const text = '{\n  "users": [\n    { "userName": "a", "x\\u0041": 1 },\n    { "b": [1, { "c": 2 }] }\n  ]\n}';
  it('points at a member by its key, at an element by its start, and at the deepest part that exists', () => {
    const offsets = locatePointers(text, [
      ['users', '0', 'xA'],
      ['users', '1', 'b', '1', 'c'],
      ['users', '1', 'missing'],
      ['users', '7'],
      [],
    ]);
    expect(positionsOf(text, offsets)).toEqual([
      { line: 3, column: 24 },
      { line: 4, column: 18 },
      { line: 4, column: 5 },
      { line: 2, column: 3 },
      { line: 1, column: 1 },
    ]);
  });
});
