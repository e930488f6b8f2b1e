// Query history kept in the browser (localStorage), newest first, without repeats.
const KEY = 'bitledger.console.history';
const MAX = 50;

export function loadHistory() {
  try {
    const list = JSON.parse(localStorage.getItem(KEY) ?? '[]');
    return Array.isArray(list) ? list.filter((e) => typeof e?.pql === 'string' && typeof e?.index === 'string') : [];
  } catch {
    return [];
  }
}

function save(list) {
  try {
    localStorage.setItem(KEY, JSON.stringify(list));
  } catch {
    // storage full or disabled: the history lives for this page only
  }
}

export function remember(index, pql) {
  const list = loadHistory().filter((e) => !(e.index === index && e.pql === pql));
  list.unshift({ index, pql, at: new Date().toISOString() });
  save(list.slice(0, MAX));
  return loadHistory();
}

export function clearHistory() {
  save([]);
}
