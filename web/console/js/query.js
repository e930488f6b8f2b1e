// The PQL box: runs the query against the chosen index, shows the results, keeps a history.
import { api } from './api.js';
import { fill, h } from './dom.js';
import { clearHistory, loadHistory, remember } from './history.js';
import { renderResults } from './results.js';

export function createQueryPanel({ form, textarea, indexSelect, results, timing, historyList, historyClear }) {
  let history = loadHistory();
  let cursor = -1; // position while walking the history with Ctrl+↑/↓

  function showHistory() {
    if (history.length === 0) {
      fill(historyList, h('li', { class: 'empty' }, 'Queries you run appear here.'));
      return;
    }
    fill(
      historyList,
      history.map((e) =>
        h('li', {},
          h('button', { type: 'button', class: 'history-item', title: `Put this query back in the box (index ${e.index})`, onclick: () => use(e) },
            h('span', { class: 'history-index' }, e.index),
            h('code', {}, e.pql),
          ),
        ),
      ),
    );
  }

  function use(entry) {
    if ([...indexSelect.options].some((o) => o.value === entry.index)) indexSelect.value = entry.index;
    textarea.value = entry.pql;
    textarea.focus();
  }

  function setIndexes(indexes) {
    const current = indexSelect.value;
    fill(indexSelect, indexes.map((i) => h('option', { value: i.name }, i.name)));
    if (indexes.some((i) => i.name === current)) indexSelect.value = current;
    indexSelect.disabled = indexes.length === 0;
  }

  async function run() {
    const index = indexSelect.value;
    const pql = textarea.value.trim();
    if (pql === '') return;
    if (index === '') {
      fill(results, h('p', { class: 'error', role: 'alert' }, 'Create an index first: queries run against one index.'));
      return;
    }
    results.setAttribute('aria-busy', 'true');
    timing.textContent = 'running…';
    const started = performance.now();
    try {
      const body = await api.query(index, pql);
      const ms = performance.now() - started;
      // The timing line is the live region: screen readers hear this summary, not whole tables.
      const n = body.results?.length ?? 0;
      timing.textContent = `${n} result${n === 1 ? '' : 's'} in ${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
      fill(results, renderResults(pql, body));
      history = remember(index, pql);
      cursor = -1;
      showHistory();
    } catch (err) {
      timing.textContent = '';
      fill(results, h('p', { class: 'error', role: 'alert' }, h('strong', {}, err.status ? `${err.status}: ` : ''), err.message));
    } finally {
      results.removeAttribute('aria-busy');
    }
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run();
  });
  textarea.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      void run();
    } else if ((ev.key === 'ArrowUp' || ev.key === 'ArrowDown') && ev.ctrlKey && history.length > 0) {
      ev.preventDefault();
      cursor = Math.max(-1, Math.min(history.length - 1, cursor + (ev.key === 'ArrowUp' ? 1 : -1)));
      textarea.value = cursor === -1 ? '' : history[cursor].pql;
    }
  });
  historyClear.addEventListener('click', () => {
    clearHistory();
    history = [];
    showHistory();
  });
  showHistory();

  return {
    setIndexes,
    /** Selects an index, and fills the box when a query is given. */
    pick(index, pql) {
      if ([...indexSelect.options].some((o) => o.value === index)) indexSelect.value = index;
      if (pql !== null) textarea.value = pql;
      textarea.focus();
    },
  };
}
