// Labeled figures with optional targets, printed as they are measured and gathered for the final
// summary table. Every bench reports through this so the run ends with one comparable table.

export interface Target {
  op: '>=' | '<=';
  value: number;
  /** Where the target comes from, e.g. "issue 2". */
  source: string;
}

export interface Figure {
  section: string;
  label: string;
  value: number;
  unit: string;
  target?: Target;
}

export const passes = (f: Figure): boolean | undefined =>
  f.target === undefined ? undefined : f.target.op === '>=' ? f.value >= f.target.value : f.value <= f.target.value;

/** Three significant digits, thousands separated: 12,345 / 1.23 / 0.0123. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 1000) return Math.round(n).toLocaleString('en-US');
  if (abs >= 100) return n.toFixed(0);
  if (abs >= 10) return n.toFixed(1);
  if (abs >= 1) return n.toFixed(2);
  return n.toPrecision(3);
}

export class Reporter {
  readonly figures: Figure[] = [];
  readonly notes: string[] = [];
  private section = '';

  /** Starts a section: `title` heads the printout, `short` names it in the summary table. */
  begin(short: string, title = short): void {
    this.section = short;
    console.log(`\n=== ${title} ===`);
  }

  figure(label: string, value: number, unit: string, target?: Target): Figure {
    const f: Figure = { section: this.section, label, value, unit, target };
    this.figures.push(f);
    console.log(`  ${label.padEnd(58)} ${fmt(value).padStart(14)} ${unit.padEnd(10)}${targetText(f)}`);
    return f;
  }

  note(text: string): void {
    this.notes.push(`[${this.section}] ${text}`);
    console.log(`  · ${text}`);
  }

  /** The closing table: every figure, and PASS/MISS where it has a target. */
  summary(): void {
    console.log('\n=== summary ===');
    const rows = this.figures.map((f) => [
      f.section,
      f.label,
      `${fmt(f.value)} ${f.unit}`,
      f.target ? `${f.target.op} ${fmt(f.target.value)}` : '',
      verdict(f),
    ]);
    const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i].length), 4));
    for (const r of rows)
      console.log(
        `  ${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2].padStart(widths[2])}  ${r[3].padEnd(widths[3])}  ${r[4]}`,
      );
    const judged = this.figures.filter((f) => f.target !== undefined);
    const missed = judged.filter((f) => passes(f) === false);
    console.log(`\n  ${judged.length - missed.length}/${judged.length} targets met`);
    for (const f of missed)
      console.log(
        `  MISS ${f.section}: ${f.label} = ${fmt(f.value)} ${f.unit} (target ${f.target?.op} ${fmt(f.target?.value ?? 0)})`,
      );
  }
}

function verdict(f: Figure): string {
  const p = passes(f);
  return p === undefined ? '' : p ? 'PASS' : 'MISS';
}

function targetText(f: Figure): string {
  if (f.target === undefined) return '';
  return `  target ${f.target.op} ${fmt(f.target.value)} (${f.target.source}): ${verdict(f)}`;
}
