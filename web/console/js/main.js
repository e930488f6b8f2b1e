// Wires the three panels of the console together.
import { createQueryPanel } from './query.js';
import { createSchemaPanel } from './schema.js';
import { createStatusPanel } from './status.js';
import { fill, h } from './dom.js';

const $ = (id) => document.getElementById(id);

const query = createQueryPanel({
  form: $('query-form'),
  textarea: $('pql'),
  indexSelect: $('query-index'),
  results: $('results'),
  timing: $('query-timing'),
  historyList: $('history'),
  historyClear: $('history-clear'),
});

const fieldIndexSelect = $('field-form').elements.namedItem('index');

const schema = createSchemaPanel({
  tree: $('schema-tree'),
  message: $('schema-message'),
  indexForm: $('index-form'),
  fieldForm: $('field-form'),
  onSchema(indexes) {
    query.setIndexes(indexes);
    const current = fieldIndexSelect.value;
    fill(fieldIndexSelect, indexes.map((i) => h('option', { value: i.name }, i.name)));
    if (indexes.some((i) => i.name === current)) fieldIndexSelect.value = current;
  },
  onPick(index, pql) {
    query.pick(index, pql);
    fieldIndexSelect.value = index;
  },
});

$('schema-refresh').addEventListener('click', () => void schema.load());

// A node that was starting (replaying) or unreachable when the page loaded has a schema to show once it serves.
let lastState;
const status = createStatusPanel({
  body: $('status-body'),
  updated: $('status-updated'),
  summary: $('node-summary'),
  onState(state) {
    if (state === 'NORMAL' && lastState !== undefined && lastState !== 'NORMAL') void schema.load();
    lastState = state ?? 'UNREACHABLE';
  },
});

void schema.load();
status.start();
