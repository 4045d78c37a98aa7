// The JSON-lines reader: lines split across chunks, multi-byte characters split across chunks, text lines, the end.
import test from 'ava';
import { JsonLineReader, parseJsonLines } from './json-lines.js';

test('lines split across chunks are handed on once complete, in order; a last line without newline at the end', (t) => {
  const values: unknown[] = [];
  const reader = new JsonLineReader((value) => values.push(value));
  reader.push('{"a":1}\n{"b"');
  t.deepEqual(values, [{ a: 1 }]);
  reader.push(':2}\n\n');
  reader.push(Buffer.from('{"c":3}'));
  t.deepEqual(values, [{ a: 1 }, { b: 2 }]);
  reader.end();
  t.deepEqual(values, [{ a: 1 }, { b: 2 }, { c: 3 }]);
});

test('a multi-byte character split between two chunks is decoded whole', (t) => {
  const bytes = Buffer.from('{"name":"café"}\n');
  const cut = bytes.indexOf(0xc3) + 1;
  const values: unknown[] = [];
  const reader = new JsonLineReader((value) => values.push(value));
  reader.push(bytes.subarray(0, cut));
  reader.push(bytes.subarray(cut));
  t.deepEqual(values, [{ name: 'café' }]);
});

test('a line that is not JSON throws, unless text lines have a handler (which gets them as printed)', (t) => {
  t.throws(() => parseJsonLines('{"a":1}\nnot json\n'), { message: 'not a JSON line: not json' });
  const text: string[] = [];
  t.deepEqual(
    parseJsonLines('  /metrics  https://x\n\n{"a":1}\n', (line) => text.push(line)),
    [{ a: 1 }],
  );
  t.deepEqual(text, ['  /metrics  https://x', '']);
});
