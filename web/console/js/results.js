// Renders a query answer ({"results":[…]}) by the shape of each result: counts as figures, rows
// as column lists, TopN and GroupBy as tables with bar charts, the rest as tables or JSON.
import { barChart, CHART_MAX_BARS } from './chart.js';
import { fmtNumber, h } from './dom.js';

const MAX_COLUMNS_SHOWN = 500;
const MAX_TABLE_ROWS = 1000;

const isPair = (x) => x !== null && typeof x === 'object' && typeof x.count === 'number' && ('id' in x || 'key' in x);
const isGroup = (x) => x !== null && typeof x === 'object' && Array.isArray(x.group) && typeof x.count === 'number';

/** The PQL call names of a query, in order, for the result headings (best effort: top level only). */
export function callNames(pql) {
  const names = [];
  let depth = 0;
  let quote = '';
  let word = '';
  for (const ch of pql) {
    if (quote) {
      if (ch === quote) quote = '';
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(') {
      if (depth === 0 && word) names.push(word);
      depth++;
      word = '';
    } else if (ch === ')') depth--;
    else if (/[A-Za-z0-9_]/.test(ch)) word += ch;
    else word = '';
  }
  return names;
}

function table(caption, headers, rows, numericCols = []) {
  const shown = rows.slice(0, MAX_TABLE_ROWS);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'result-table' },
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, headers.map((c, i) => h('th', { scope: 'col', class: numericCols.includes(i) ? 'num' : undefined }, c)))),
      h('tbody', {}, shown.map((r) => h('tr', {}, r.map((c, i) => h('td', { class: numericCols.includes(i) ? 'num' : undefined }, c))))),
    ),
    rows.length > shown.length ? h('p', { class: 'note' }, `First ${fmtNumber(shown.length)} of ${fmtNumber(rows.length)} rows shown.`) : null,
  );
}

function chartNote(n) {
  return n > CHART_MAX_BARS ? h('p', { class: 'note' }, `Chart shows the first ${CHART_MAX_BARS} of ${fmtNumber(n)}.`) : null;
}

function renderPairs(name, pairs) {
  if (pairs.length === 0) return h('p', { class: 'empty' }, 'No rows.');
  const label = (p) => (p.key !== undefined ? String(p.key) : String(p.id));
  const hasKeys = pairs.some((p) => p.key !== undefined);
  const rows = pairs.map((p) => (hasKeys ? [p.key ?? '', fmtNumber(p.id), fmtNumber(p.count)] : [fmtNumber(p.id), fmtNumber(p.count)]));
  return h(
    'div',
    { class: 'with-chart' },
    table(`${name} rows`, hasKeys ? ['key', 'row', 'count'] : ['row', 'count'], rows, hasKeys ? [1, 2] : [0, 1]),
    h('figure', { class: 'chart-box' }, barChart(pairs.map((p) => ({ label: label(p), value: p.count })), `${name}: count per row`), chartNote(pairs.length)),
  );
}

function groupLabel(g) {
  return g.group.map((fr) => `${fr.field}=${fr.rowKey ?? fr.rowID}`).join(', ');
}

function renderGroups(name, groups) {
  if (groups.length === 0) return h('p', { class: 'empty' }, 'No groups.');
  const fields = groups[0].group.map((fr) => fr.field);
  const rows = groups.map((g) => [...g.group.map((fr) => String(fr.rowKey ?? fr.rowID)), fmtNumber(g.count)]);
  return h(
    'div',
    { class: 'with-chart' },
    table(`${name} groups`, [...fields, 'count'], rows, [fields.length]),
    h('figure', { class: 'chart-box' }, barChart(groups.map((g) => ({ label: groupLabel(g), value: g.count })), `${name}: count per group`), chartNote(groups.length)),
  );
}

function renderRow(row) {
  const cols = row.keys ?? row.columns ?? row.bits ?? [];
  const attrs = Object.entries(row.attrs ?? {});
  return h(
    'div',
    {},
    h('p', { class: 'figure-line' }, h('span', { class: 'figure' }, fmtNumber(cols.length)), ` column${cols.length === 1 ? '' : 's'}`),
    cols.length > 0 ? h('ul', { class: 'columns' }, cols.slice(0, MAX_COLUMNS_SHOWN).map((c) => h('li', {}, String(c)))) : null,
    cols.length > MAX_COLUMNS_SHOWN ? h('p', { class: 'note' }, `First ${MAX_COLUMNS_SHOWN} shown.`) : null,
    attrs.length > 0 ? table('row attributes', ['attribute', 'value'], attrs.map(([k, v]) => [k, JSON.stringify(v)])) : null,
  );
}

function renderOne(name, r) {
  if (r === null) return h('p', { class: 'empty' }, 'null (no value)');
  if (typeof r === 'number') return h('p', { class: 'figure-line' }, h('span', { class: 'figure' }, fmtNumber(r)));
  if (typeof r === 'boolean') return h('p', { class: 'figure-line' }, h('span', { class: `figure ${r ? 'yes' : 'no'}` }, r ? 'true' : 'false'), r ? ' (changed)' : ' (unchanged)');
  if (Array.isArray(r)) {
    if (r.every(isPair)) return renderPairs(name, r);
    if (r.every(isGroup)) return renderGroups(name, r);
  }
  if (typeof r === 'object') {
    if ('columns' in r || 'bits' in r || ('attrs' in r && 'keys' in r)) return renderRow(r);
    if ('value' in r && 'count' in r) return table(`${name} value`, ['value', 'count'], [[fmtNumber(r.value), fmtNumber(r.count)]], [0, 1]);
    if ('rows' in r) {
      const ids = r.keys ?? r.rows ?? [];
      return ids.length === 0 ? h('p', { class: 'empty' }, 'No rows.') : h('ul', { class: 'columns' }, ids.map((x) => h('li', {}, String(x))));
    }
  }
  return h('pre', { class: 'json' }, JSON.stringify(r, null, 2));
}

/** One <article> per result, headed by its call name. */
export function renderResults(pql, body) {
  const names = callNames(pql);
  const results = body.results ?? [];
  if (results.length === 0) return [h('p', { class: 'empty' }, 'The query had no calls.')];
  return results.map((r, i) => {
    const name = names[i] ?? `result ${i + 1}`;
    return h('article', { class: 'result', 'data-call': name }, h('h3', {}, name), renderOne(name, r));
  });
}
