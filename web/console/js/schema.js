// Schema browser: indexes, their fields and options (GET /schema), and forms that create
// indexes and fields through the ordinary Pilosa endpoints.
import { api } from './api.js';
import { fill, h } from './dom.js';

/** A query that shows something useful about a field of this type. */
export function sampleQuery(field) {
  const type = field.options?.type ?? 'set';
  if (type === 'int') return `Sum(field=${field.name})`;
  if (type === 'bool') return `Count(Row(${field.name}=true))`;
  return `TopN(${field.name}, n=10)`;
}

function optionChips(options) {
  const skip = new Set(['type']);
  return Object.entries(options ?? {})
    .filter(([k, v]) => !skip.has(k) && v !== '' && v !== null && v !== undefined)
    .map(([k, v]) => h('span', { class: 'chip' }, `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`));
}

export function createSchemaPanel({ tree, message, indexForm, fieldForm, onSchema, onPick }) {
  let indexes = [];

  const say = (text, kind = 'ok') => {
    message.textContent = text;
    message.dataset.kind = kind;
  };

  async function remove(path, what) {
    if (!window.confirm(`Delete ${what}? Its data is deleted too.`)) return;
    try {
      await api.del(path);
      say(`Deleted ${what}.`);
      await load();
    } catch (err) {
      say(err.message, 'error');
    }
  }

  function fieldItem(index, field) {
    const type = field.options?.type ?? 'set';
    return h(
      'li',
      { class: 'field' },
      h('div', { class: 'field-line' },
        h('span', { class: 'field-name' }, field.name),
        h('span', { class: `type type-${type}` }, type),
        h('span', { class: 'spacer' }),
        h('button', { type: 'button', class: 'link', title: `Query ${index.name}.${field.name}`, onclick: () => onPick(index.name, sampleQuery(field)) }, 'query'),
        h('button', { type: 'button', class: 'link danger', title: `Delete field ${field.name}`, onclick: () => remove(`/index/${index.name}/field/${field.name}`, `field ${index.name}.${field.name}`) }, 'delete'),
      ),
      h('div', { class: 'chips' }, optionChips(field.options)),
    );
  }

  function render() {
    if (indexes.length === 0) {
      fill(tree, h('p', { class: 'empty' }, 'No indexes yet. Create one below.'));
      return;
    }
    fill(
      tree,
      indexes.map((index) => {
        const fields = (index.fields ?? []).filter((f) => !f.name.startsWith('_'));
        return h(
          'details',
          { class: 'index', open: true, 'data-index': index.name },
          h('summary', {},
            h('span', { class: 'index-name' }, index.name),
            h('span', { class: 'count' }, `${fields.length} field${fields.length === 1 ? '' : 's'}`),
          ),
          h('div', { class: 'index-body' },
            h('div', { class: 'chips' }, optionChips(index.options)),
            h('div', { class: 'index-actions' },
              h('button', { type: 'button', class: 'link', onclick: () => onPick(index.name, 'Count(All())') }, 'count columns'),
              h('button', { type: 'button', class: 'link danger', onclick: () => remove(`/index/${index.name}`, `index ${index.name}`) }, 'delete index'),
            ),
            fields.length === 0 ? h('p', { class: 'empty' }, 'No fields.') : h('ul', { class: 'fields' }, fields.map((f) => fieldItem(index, f))),
          ),
        );
      }),
    );
  }

  async function load() {
    try {
      const schema = await api.get('/schema');
      indexes = (schema.indexes ?? []).slice().sort((a, b) => a.name.localeCompare(b.name));
      render();
      onSchema(indexes);
    } catch (err) {
      fill(tree, h('p', { class: 'error' }, `Could not load the schema: ${err.message}`));
    }
  }

  indexForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const data = new FormData(indexForm);
    const name = String(data.get('name')).trim();
    const options = { keys: data.get('keys') === 'on', trackExistence: data.get('trackExistence') === 'on' };
    try {
      await api.post(`/index/${encodeURIComponent(name)}`, { options });
      say(`Created index ${name}.`);
      indexForm.reset();
      await load();
      onPick(name, null);
    } catch (err) {
      say(err.message, 'error');
    }
  });

  const typeSelect = fieldForm.elements.namedItem('type');
  const showTypeOptions = () => {
    for (const el of fieldForm.querySelectorAll('[data-for]')) {
      el.hidden = !el.dataset.for.split(' ').includes(typeSelect.value);
    }
  };
  typeSelect.addEventListener('change', showTypeOptions);
  showTypeOptions();

  fieldForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const data = new FormData(fieldForm);
    const index = String(data.get('index'));
    const name = String(data.get('name')).trim();
    const type = String(data.get('type'));
    const options = { type };
    if (type === 'int') Object.assign(options, { min: Number(data.get('min')), max: Number(data.get('max')) });
    if (type === 'time') options.timeQuantum = String(data.get('timeQuantum'));
    if (['set', 'time', 'mutex'].includes(type) && data.get('keys') === 'on') options.keys = true;
    try {
      await api.post(`/index/${encodeURIComponent(index)}/field/${encodeURIComponent(name)}`, { options });
      say(`Created field ${index}.${name}.`);
      fieldForm.elements.namedItem('name').value = '';
      await load();
    } catch (err) {
      say(err.message, 'error');
    }
  });

  return { load, indexes: () => indexes };
}
