// Small DOM helpers: elements are built with h(), never from HTML strings, so names and values
// coming from the server are always text.

/** h('td', { class: 'num' }, '12') → <td class="num">12</td>. Children may be nodes, text or arrays. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Same as h() for SVG elements. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces every child of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

const numberFormat = new Intl.NumberFormat('en-US');

export function fmtNumber(n) {
  return typeof n === 'number' ? numberFormat.format(n) : String(n);
}

export function fmtBytes(n) {
  if (typeof n !== 'number') return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

/** "3 s ago", "5 min ago", "2 h ago" from an ISO time. */
export function fmtAgo(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '–';
  const sec = Math.max(0, Math.round((Date.now() - t) / 1000));
  if (sec < 60) return `${sec} s ago`;
  if (sec < 3600) return `${Math.round(sec / 60)} min ago`;
  if (sec < 86400) return `${(sec / 3600).toFixed(1)} h ago`;
  return `${(sec / 86400).toFixed(1)} d ago`;
}

export function fmtDuration(sec) {
  if (typeof sec !== 'number') return '–';
  if (sec < 120) return `${sec} s`;
  if (sec < 7200) return `${Math.round(sec / 60)} min`;
  if (sec < 172800) return `${(sec / 3600).toFixed(1)} h`;
  return `${(sec / 86400).toFixed(1)} d`;
}
