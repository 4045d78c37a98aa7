// Tests of the long-function check: what it counts, what it names, and the data-table mark that exempts a table.
import test from 'ava';
import { DATA_TABLE_MARK, longFunctionsIn } from './long-functions.js';

/** A function of `lines` lines in all (its signature and closing brace included). */
const body = (lines: number): string => Array.from({ length: lines - 2 }, (_, i) => `  const a${i} = ${i};`).join('\n');

test('a function over the limit is listed with its name, line and length; one at the limit is not', (t) => {
  const text = `function short() {\n${body(3)}\n}\nexport function long() {\n${body(6)}\n}\n`;
  t.deepEqual(longFunctionsIn('x.ts', text, 3), [{ file: 'x.ts', line: 4, name: 'long', lines: 6 }]);
});

test('methods, constructors and arrows are named after their class or variable; nested ones are listed too', (t) => {
  const text = [
    'class A {',
    `  constructor() {\n${body(5)}\n  }`,
    `  m() {\n    const inner = () => {\n${body(5)}\n    };\n  }`,
    '}',
    `const arrow = () => {\n${body(5)}\n};`,
  ].join('\n');
  t.deepEqual(
    longFunctionsIn('x.ts', text, 4).map(({ name }) => name),
    ['A.constructor', 'A.m', 'inner', 'arrow'],
  );
});

test('the data-table mark on the line before a function, a method or a variable exempts it', (t) => {
  const text = [
    `// ${DATA_TABLE_MARK}: a list of rows.\nfunction table() {\n${body(6)}\n}`,
    `class A {\n  // ${DATA_TABLE_MARK}: one metric a row.\n  constructor() {\n${body(6)}\n  }\n}`,
    `/** Rows. */\n// ${DATA_TABLE_MARK}: rows.\nconst rows = () => {\n${body(6)}\n};`,
    `// an ordinary comment\nfunction logic() {\n${body(6)}\n}`,
  ].join('\n');
  t.deepEqual(
    longFunctionsIn('x.ts', text, 4).map(({ name }) => name),
    ['logic'],
  );
});
