// The README's flag table is generated from the settings table: this fails while they differ
// (run `npm run docs:flags`), and the help lists every setting with its env name and default.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/cli/commands.js';
import { commandHelp, generalHelp } from '../../../src/cli/help.js';
import { SETTINGS, envName } from '../../../src/config/settings.js';
import { withFlagTable } from '../../../scripts/docs-flags.js';

describe('generated flag documentation', () => {
  it("README's flag table equals the one generated from the settings table", () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(withFlagTable(readme)).toBe(readme);
  });

  it('--help lists every command, every setting flag and its environment name', () => {
    const help = generalHelp(COMMANDS);
    for (const c of COMMANDS) expect(help).toContain(`  ${c.name} `);
    for (const s of SETTINGS) {
      expect(help).toContain(`--${s.name} `);
      expect(help).toContain(envName(s.name));
    }
    const imp = commandHelp(COMMANDS.find((c) => c.name === 'import')!);
    for (const f of ['--url', '-i, --index', '-f, --field', '--create', '--clear', '--batch-size'])
      expect(imp).toContain(f);
  });
});
