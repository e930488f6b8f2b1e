// Status panel: node state, durability (sequences, snapshot, fsync policy), history window,
// mirror, replica and ingest lag, refreshed every few seconds. Routes that a server does not
// have (404) leave their card out; the rest of the panel keeps working.
import { api } from './api.js';
import { fill, fmtAgo, fmtBytes, fmtDuration, fmtNumber, h } from './dom.js';

const REFRESH_MS = 3000;

function card(title, rows, tone) {
  const kept = rows.filter((r) => r !== null);
  return h(
    'section',
    { class: `card${tone ? ` tone-${tone}` : ''}`, 'aria-label': title },
    h('h3', {}, title),
    h('dl', {}, kept.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
  );
}

function badge(text, tone) {
  return h('span', { class: `badge tone-${tone}` }, text);
}

const stateTone = (s) => (s === 'NORMAL' || s === 'running' || s === 'READY' ? 'good' : s === 'STARTING' || s === 'stopped' ? 'warn' : 'bad');

function progressOf(st) {
  const p = st.replay ?? st.progress;
  if (!p || typeof p !== 'object') return null;
  const done = p.done ?? p.records ?? p.applied;
  const total = p.total;
  if (typeof done !== 'number') return null;
  return typeof total === 'number' && total > 0 ? `${fmtNumber(done)} / ${fmtNumber(total)} (${Math.floor((done / total) * 100)}%)` : fmtNumber(done);
}

function nodeCard(st, ready, state, info, version) {
  const readyText = ready === undefined ? 'not served' : ready.status === 200 ? badge('ready', 'good') : badge(`not ready (${ready.status})`, 'bad');
  const reason = ready && ready.status !== 200 ? (typeof ready.body === 'string' ? ready.body : (ready.body?.reason ?? ready.body?.error ?? JSON.stringify(ready.body))) : null;
  const progress = st ? progressOf(st) : null;
  return card('Node', [
    ['state', st ? badge(st.state, stateTone(st.state)) : badge('unreachable', 'bad')],
    ['/ready', readyText],
    reason ? ['reason', String(reason)] : null,
    progress ? ['replay', progress] : null,
    state?.readOnly ? ['writes', 'read-only (replica)'] : null,
    ['version', version ?? '–'],
    state ? ['uptime', fmtDuration(state.uptimeSeconds)] : null,
    state ? ['memory', `${fmtBytes(state.memory.rss)} RSS`] : null,
    info ? ['cpus', `${info.cpuLogicalCores} × ${info.cpuMHz} MHz`] : null,
  ]);
}

function durabilityCards(state) {
  if (!state) return [];
  const seq = state.sequence;
  const fsync = state.fsync ? `${state.fsync.policy}${state.fsync.intervalMs ? ` (every ${state.fsync.intervalMs} ms)` : ''}` : '–';
  const pending = seq.applied - seq.durable;
  const snap = state.snapshot;
  return [
    card('Durability', [
      ['fsync', fsync],
      ['sequence', fmtNumber(seq.applied)],
      ['durable', pending > 0 ? `${fmtNumber(seq.durable)} (${fmtNumber(pending)} pending)` : fmtNumber(seq.durable)],
      ['log holds', seq.logLast >= seq.logFirst ? `${fmtNumber(seq.logFirst)} … ${fmtNumber(seq.logLast)}` : 'empty'],
    ]),
    card('Last snapshot', snap.newest
      ? [
          ['sequence', fmtNumber(snap.newest.seq)],
          ['written', h('time', { datetime: snap.newest.at, title: snap.newest.at }, fmtAgo(snap.newest.at))],
          ['size', fmtBytes(snap.newest.bytes)],
          ['records since', fmtNumber(snap.recordsSince)],
        ]
      : [['snapshot', 'none yet'], ['records since', fmtNumber(snap.recordsSince)]]),
  ];
}

function historyCard(hist) {
  if (!hist || typeof hist !== 'object') return null;
  const rows = Object.entries(hist)
    .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => [k, typeof v === 'number' ? fmtNumber(v) : String(v)]);
  return rows.length > 0 ? card('History window', rows) : null;
}

function mirrorCard(m) {
  if (!m) return null;
  return card('Kafka mirror', [
    ['topic', m.topic],
    ['state', badge(m.state, m.lastError ? 'bad' : 'good')],
    ['lag', `${fmtNumber(m.lagRecords)} records`],
    ['acked', fmtNumber(m.ackedSeq)],
    m.lastAckAt ? ['last ack', fmtAgo(m.lastAckAt)] : null,
    m.lastError ? ['error', m.lastError] : null,
  ]);
}

function replicaCard(r) {
  if (!r) return null;
  return card('Replica', [
    ['topic', r.topic],
    ['state', badge(r.state, r.state === 'failed' || r.lastError ? 'bad' : 'good')],
    ['lag', `${fmtNumber(r.lagMessages)} messages`],
    ['applied', fmtNumber(r.appliedSeq)],
    r.lastAppliedAt ? ['last applied', fmtAgo(r.lastAppliedAt)] : null,
    r.lastError ? ['error', r.lastError] : null,
  ]);
}

function ingestCard(ingests) {
  if (!Array.isArray(ingests) || ingests.length === 0) return null;
  return h(
    'section',
    { class: 'card', 'aria-label': 'Ingests' },
    h('h3', {}, 'Ingests'),
    h('table', { class: 'mini' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'name'), h('th', { scope: 'col' }, 'state'), h('th', { scope: 'col', class: 'num' }, 'lag'), h('th', { scope: 'col', class: 'num' }, 'rec/s'))),
      h('tbody', {}, ingests.map((i) => h('tr', {}, h('td', {}, i.name), h('td', {}, badge(i.state, stateTone(i.state))), h('td', { class: 'num' }, fmtNumber(i.lag ?? 0)), h('td', { class: 'num' }, fmtNumber(Math.round(i.recordsPerSec ?? 0)))))),
    ),
  );
}

export function createStatusPanel({ body, updated, summary, onState }) {
  let info;
  let version;
  let timer;

  async function refresh() {
    if (info === undefined) info = await api.optional('/info');
    if (version === undefined) version = (await api.optional('/version'))?.version;
    const [st, ready, state, hist, mirror, replica] = await Promise.all([
      api.optional('/status'),
      api.probe('/ready'),
      api.optional('/internal/state'),
      api.optional('/internal/history'),
      api.optional('/kafka/mirror'),
      api.optional('/kafka/replica'),
    ]);
    fill(
      body,
      nodeCard(st, ready, state, info, version),
      durabilityCards(state),
      historyCard(hist),
      mirrorCard(mirror ?? st?.kafkaMirror),
      replicaCard(replica ?? st?.replica),
      ingestCard(st?.ingests),
    );
    const ok = st && (ready === undefined || ready.status === 200);
    fill(summary, h('span', { class: `dot tone-${ok ? 'good' : st ? 'warn' : 'bad'}`, 'aria-hidden': 'true' }), version ? `${version} · ` : '', st ? st.state : 'server unreachable', state ? ` · seq ${fmtNumber(state.sequence.applied)}` : '');
    updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
    onState?.(st?.state);
  }

  const tick = async () => {
    try {
      if (!document.hidden) await refresh();
    } finally {
      timer = setTimeout(tick, REFRESH_MS);
    }
  };

  return {
    start: () => void tick(),
    refresh,
    stop: () => clearTimeout(timer),
  };
}
