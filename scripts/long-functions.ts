// Lists every function, method and arrow over the line limit outside tests and test models; exits 1 on one not yet listed.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';

/** A function longer than this many lines is hard to read in one screen; split it into named steps. */
export const MAX_FUNCTION_LINES = 80;

/** The folders we write (imports/ and dist/ are generated). */
const FOLDERS = ['infra', 'operator', 'emulator', 'envtest', 'test', 'bench', 'scripts'];

/** Tests, their helpers beside the code and test models may be long: a scenario reads best as one sequence. */
const EXEMPT = /\.test\.ts$|\/testing\/|model/;

/**
 * The comment that exempts a function that is a data table (a list of definitions read as a table, not logic):
 * written on the line before it, with the reason after the colon.
 */
export const DATA_TABLE_MARK = 'long-functions: data table';

/** One function over the limit. */
export interface LongFunction {
  readonly file: string;
  /** 1-based line of its first line. */
  readonly line: number;
  readonly name: string;
  readonly lines: number;
}

/** The name a reader would search for: the declared name, or the variable, property or call it is the argument of. */
function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name !== undefined && !ts.isComputedPropertyName(node.name)) {
    const name = node.name.getText();
    const owner = ts.isClassLike(node.parent) ? node.parent.name?.getText() : undefined;
    return owner === undefined ? name : `${owner}.${name}`;
  }
  if (ts.isConstructorDeclaration(node)) return `${node.parent.name?.getText() ?? '(class)'}.constructor`;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText();
  }
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) return `(argument of ${parent.expression.getText().slice(0, 40)})`;
  return '(anonymous)';
}

/** Whether the comments before `node` (or before the statement that declares it) mark it as a data table. */
function isDataTable(node: ts.Node, text: string): boolean {
  const declaration = ts.isVariableDeclaration(node.parent) ? node.parent.parent.parent : node;
  const comments = ts.getLeadingCommentRanges(text, declaration.getFullStart()) ?? [];
  return comments.some((range) => text.slice(range.pos, range.end).includes(DATA_TABLE_MARK));
}

/** Every function-like node of one source text over `max` lines, outermost first. */
export function longFunctionsIn(file: string, text: string, max = MAX_FUNCTION_LINES): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined && !isDataTable(node, text)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) found.push({ file, line: first + 1, name: nameOf(node as ts.SignatureDeclaration), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The TypeScript files git tracks in {@link FOLDERS}, minus tests and test models. */
function sourceFiles(root: string): string[] {
  const listed = execFileSync('git', ['ls-files', '--', ...FOLDERS.map((folder) => `${folder}/*.ts`)], { cwd: root, encoding: 'utf8' });
  return listed.split('\n').filter((file) => file !== '' && !EXEMPT.test(file));
}

/**
 * The functions still to split, one `file name` a line (`#` starts a comment): each is listed so that the check
 * fails on any other, and on a listed one once it is short (its line is then removed, so the list only shrinks).
 */
const TO_SPLIT = 'scripts/long-functions.todo';

function toSplit(root: string): Set<string> {
  const lines = readFileSync(resolve(root, TO_SPLIT), 'utf8').split('\n');
  return new Set(lines.map((line) => line.replace(/#.*/, '').trim()).filter((line) => line !== ''));
}

function main(): void {
  const root = resolve(import.meta.dirname, '..');
  const found = sourceFiles(root).flatMap((file) => longFunctionsIn(file, readFileSync(resolve(root, file), 'utf8')));
  const listed = toSplit(root);
  const fresh = found.filter(({ file, name }) => !listed.has(`${file} ${name}`));
  const stillLong = new Set(found.map(({ file, name }) => `${file} ${name}`));
  const done = [...listed].filter((entry) => !stillLong.has(entry));
  for (const { file, line, name, lines } of fresh) console.log(`${file}:${line}  ${name}  ${lines} lines`);
  if (fresh.length > 0) console.log(`${fresh.length} functions over ${MAX_FUNCTION_LINES} lines: split each into named steps`);
  for (const entry of done) console.log(`${TO_SPLIT}: "${entry}" is no longer over ${MAX_FUNCTION_LINES} lines (or gone): remove its line`);
  if (fresh.length > 0 || done.length > 0) process.exitCode = 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) main();
