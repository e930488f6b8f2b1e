// `npm run lint:docs`: every repository path that docs/*.md and README.md name exists, every
// docs/ file that a comment in src/, test/ or bench/ cites exists, and no comment cites a
// document the repository does not have ("reference §x", "design §y", "shared/…").
// Exits 1 and lists what is missing. Usage: node scripts/check-doc-paths.mjs [root]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = process.argv[2] ?? process.cwd();
const problems = [];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

// A path as the docs write it: starts at a top-level directory of the repository.
const PATH = /(?<![\w./-])((?:src|test|bench|docs|migrations|ops|proto|scripts|sim|\.ci)\/[\w./-]*[\w/])/g;

const docs = [
  join(root, 'README.md'),
  ...(existsSync(join(root, 'docs')) ? walk(join(root, 'docs')).filter((f) => f.endsWith('.md')) : []),
];
for (const file of docs) {
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(PATH)) {
    const path = m[1].replace(/[.]$/, '');
    // `src/x/*.ts` style globs and `…/` directories are checked up to the first wildcard.
    const fixed = path.split('*')[0];
    if (!existsSync(join(root, fixed))) problems.push(`${relative(root, file)} names ${path}, which does not exist`);
  }
}

const CITE = /docs\/[\w-]+\.md/g;
const FOREIGN = /\b(?:reference|design|spec)(?:\.md)? ?§|shared\/(?:design|spec)/i;
for (const dir of ['src', 'test', 'bench', 'migrations']) {
  if (!existsSync(join(root, dir))) continue;
  for (const file of walk(join(root, dir)).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(CITE)) {
      if (!existsSync(join(root, m[0]))) problems.push(`${relative(root, file)} cites ${m[0]}, which does not exist`);
    }
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      if (FOREIGN.test(line))
        problems.push(`${relative(root, file)}:${i + 1} cites a document outside the repository: ${line.trim()}`);
    });
  }
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`${problems.length} broken documentation reference(s)`);
  process.exit(1);
}
console.log(`documentation references: ${docs.length} documents checked, all paths exist`);
