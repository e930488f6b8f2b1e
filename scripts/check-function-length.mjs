// `npm run lint:functions`: no function in src/ is longer than 70 lines (the project's limit: a
// function you can read on one screen). Every function-like node counts — declarations, methods,
// arrows, function expressions, accessors and constructors — from its first line to its last,
// nested functions included in their parent. A function named in the allowlist
// (scripts/function-length-allowlist.json, "path:name") may be longer, until it is shortened;
// an allowlist entry that is no longer needed is an error too, so the list only shrinks.
// Exits 1 and lists the offenders. Usage: node scripts/check-function-length.mjs [root]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export const MAX_LINES = 70;

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** A readable name: the declared name, or the variable or property an arrow is assigned to. */
function nameOf(node, sf) {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText(sf);
  const p = node.parent;
  if (p !== undefined && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)))
    return p.name.getText(sf);
  return `<anonymous@${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}>`;
}

/** Every function of one file longer than `max` lines, as { name, line, lines }. */
export function longFunctions(fileName, text, max = MAX_LINES) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const out = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) out.push({ name: nameOf(node, sf), line: first + 1, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function main() {
  const root = process.argv[2] ?? process.cwd();
  const allowPath = join(root, 'scripts/function-length-allowlist.json');
  const allowed = new Set(existsSync(allowPath) ? JSON.parse(readFileSync(allowPath, 'utf8')) : []);
  const problems = [];
  const used = new Set();
  for (const file of walk(join(root, 'src'))) {
    const rel = relative(root, file).split('\\').join('/');
    for (const f of longFunctions(rel, readFileSync(file, 'utf8'))) {
      const key = `${rel}:${f.name}`;
      if (allowed.has(key)) used.add(key);
      else problems.push(`${rel}:${f.line} ${f.name} is ${f.lines} lines (at most ${MAX_LINES})`);
    }
  }
  for (const key of allowed)
    if (!used.has(key)) problems.push(`${key} is in the allowlist but is not over ${MAX_LINES} lines: remove it`);
  if (problems.length > 0) {
    for (const p of problems) console.error(p);
    console.error(`${problems.length} function length problem(s)`);
    process.exit(1);
  }
  console.log(`function length: every function in src/ is at most ${MAX_LINES} lines (${allowed.size} allowed)`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
