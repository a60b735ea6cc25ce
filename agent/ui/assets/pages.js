// The pages. Each takes its container, the store and the route's argument,
// renders, and returns {update(what), leave()}; update re-renders only when
// what it shows changed.
import { h, table, bytes, ago, time } from './dom.js';
import { Heatmap, matricesFromPairs, legend, fmt } from './heatmap.js';
import * as api from './api.js';

function roles(store) {
  const m = new Map();
  for (const x of store.members) m.set(x.name, x.role);
  return m;
}

// errorNote is the paragraph saying a read failed, or an empty text node.
function errorNote(store, what) {
  return store.errors[what] ? h('p', { class: 'error', role: 'alert' }, `Cannot read ${what}: ${store.errors[what]}`) : '';
}

// bySwitch orders nodes by switch, then name, and returns the groups.
export function bySwitch(nodes) {
  const sorted = [...nodes].sort((a, b) => (a.switch || '').localeCompare(b.switch || '') || a.name.localeCompare(b.name, undefined, { numeric: true }));
  const groups = [];
  sorted.forEach((n, i) => {
    if (!groups.length || groups[groups.length - 1].sw !== (n.switch || '')) groups.push({ sw: n.switch || '', inferred: n.switch_inferred, start: i, nodes: [] });
    groups[groups.length - 1].nodes.push(n);
  });
  return { sorted, groups };
}

const STATUS_MARK = { alive: '●', suspect: '◐', dead: '✕', left: '○' };

function statusCell(n) {
  const s = n.drain || n.status;
  return h('td', { class: 'st st-' + s }, h('span', { 'aria-hidden': 'true' }, (STATUS_MARK[n.status] || '?') + ' '), s);
}

function load(m) { return `${m.now.toFixed(2)} / ${m['1m'].toFixed(2)} / ${m['5m'].toFixed(2)} / ${m['15m'].toFixed(2)}`; }

function cluster(main, store) {
  const body = h('div');
  main.append(h('h1', {}, 'Cluster'), body);
  const render = () => {
    const rs = roles(store);
    const { groups } = bySwitch(store.nodes);
    const alive = store.nodes.filter((n) => n.status === 'alive').length;
    const leader = store.members.find((m) => m.role === 'leader');
    body.replaceChildren(
      errorNote(store, 'nodes'),
      h('p', { class: 'summary' }, `${store.nodes.length} nodes, ${alive} alive; leader `,
        h('strong', { id: 'leader' }, leader ? leader.name : 'none')),
      ...groups.map((g) => table(
        g.sw ? `Switch ${g.sw}${g.inferred ? ' (inferred from bandwidth tests)' : ''}` : 'No switch declared',
        ['Node', 'Status', 'Role', 'Load now / 1 / 5 / 15 min', 'CPU', 'Memory used', 'Traffic in / out', 'PEs', 'Confined'],
        g.nodes.map((n) => {
          const role = rs.get(n.name) || n.role || '–';
          const used = n.mem_total ? 1 - n.mem_avail.now / n.mem_total : NaN;
          return h('tr', { 'data-node': n.name },
            h('th', { scope: 'row' }, n.name, role === 'leader' ? h('span', { class: 'leader', title: 'raft leader' }, ' ★ leader') : null),
            statusCell(n),
            h('td', {}, role),
            h('td', { class: 'num' }, load(n.load)),
            h('td', { class: 'num' }, (n.cpu_util.now).toFixed(0) + ' %'),
            h('td', { class: 'num' }, used === used ? (100 * used).toFixed(0) + ' % of ' + bytes(n.mem_total) : '–'),
            h('td', { class: 'num' }, bytes(n.net_rx) + '/s / ' + bytes(n.net_tx) + '/s'),
            h('td', {}, (n.pes || []).map((p) => `${p.count}× ${p.kind}${p.model ? ' ' + p.model : ''}`).join(', ')),
            h('td', {}, n.confined ? 'yes' : h('span', { title: n.unconfined || '' }, 'no')));
        }), { class: 'nodes' })));
  };
  render();
  return { update: (w) => { if (w === 'nodes' || w === 'members') render(); } };
}

const NET_REREAD = 10000;

function network(main, store) {
  const info = h('p', { id: 'cell', class: 'cell', role: 'status', 'aria-live': 'polite' }, 'Point at a cell, or focus a map and use the arrow keys (Shift: 10 at a time).');
  const onSelect = (c) => {
    info.textContent = `${c.label}, ${c.from} → ${c.to}: ` + (c.value === c.value ? `${fmt(c.value)} ${c.unit}` : 'no figure') +
      `; ${c.source}` + (c.age === c.age ? `, ${fmt(c.age)} s old` : '');
  };
  const bwCanvas = h('canvas', { id: 'bw' }), latCanvas = h('canvas', { id: 'lat' });
  const bw = new Heatmap(bwCanvas, { label: 'Bandwidth, row sends to column', unit: 'Mbit/s', onSelect });
  const lat = new Heatmap(latCanvas, { label: 'Latency', unit: 'ms', lowIsGood: true, onSelect });
  const bwLeg = h('canvas', { class: 'legend', 'aria-hidden': 'true' }), latLeg = h('canvas', { class: 'legend', 'aria-hidden': 'true' });
  const bwRange = h('span'), latRange = h('span');
  const slider = h('input', { type: 'range', id: 'when', min: 0, max: 0, value: 0, 'aria-label': 'Time within the last hour' });
  const when = h('output', { for: 'when' }, 'now');
  let follow = true, last = null;
  slider.addEventListener('input', () => { follow = +slider.value === +slider.max; draw(); });
  const order = h('p', { class: 'hint' });
  main.append(h('h1', {}, 'Network'),
    h('p', { class: 'hint' }, 'Nodes ordered by switch, so blocks show. Bright is good on both maps (viridis: readable with colour-vision deficiencies). ',
      'Grey: never measured. A dot: latency from network coordinates, not a direct test.'),
    h('div', { class: 'slider' }, h('label', { for: 'when' }, 'Time '), slider, ' ', when),
    h('div', { class: 'maps' },
      h('figure', {}, h('figcaption', {}, 'Bandwidth (Mbit/s), per direction: row sends to column'), bwCanvas, h('div', { class: 'scale' }, bwLeg, bwRange)),
      h('figure', {}, h('figcaption', {}, 'Latency (ms)'), latCanvas, h('div', { class: 'scale' }, latLeg, latRange))),
    info, order, errorNote(store, 'net'));
  function draw() {
    const hist = store.netHistory;
    slider.max = Math.max(0, hist.length - 1);
    if (follow) slider.value = slider.max;
    const snap = hist[+slider.value];
    when.textContent = snap ? (follow ? 'now' : time(snap.at)) : 'no data';
    const { sorted, groups } = bySwitch(store.nodes);
    const names = sorted.map((n) => n.name);
    const { bw: mb, lat: ml } = (last = matricesFromPairs(names, snap ? snap.pairs : [], last));
    const starts = groups.map((g) => g.start);
    const ms = bw.update(mb, starts) + lat.update(ml, starts);
    main.dataset.drawMs = ms.toFixed(1);
    // What the map shows, in two figures a script can watch: how many
    // cells are measured and the sum of their figures.
    let cells = 0, sum = 0;
    for (const x of mb.value) if (x === x) { cells++; sum += x; }
    main.dataset.bwCells = cells;
    main.dataset.bwSum = sum.toFixed(3);
    legend(bwLeg, bw); legend(latLeg, lat);
    bwRange.textContent = ` ${fmt(bw.lo)} … ${fmt(bw.hi)} Mbit/s`;
    latRange.textContent = ` ${fmt(lat.lo)} … ${fmt(lat.hi)} ms`;
    order.textContent = 'Order: ' + groups.map((g) => `${g.sw || 'no switch'} (${g.nodes.map((n) => n.name).join(', ')})`).join('; ');
  }
  draw();
  const onResize = () => { bw.draw(); lat.draw(); };
  window.addEventListener('resize', onResize);
  // A bandwidth test's result reaches the servers' matrix, not the event
  // stream: while the map is shown it is re-read every NET_REREAD ms.
  const reread = setInterval(() => store.refresh(['net']), NET_REREAD);
  return {
    update: (w) => { if (w === 'net' || w === 'nodes') draw(); },
    leave: () => { window.removeEventListener('resize', onResize); clearInterval(reread); },
  };
}

const LIVE = ['queued', 'launching', 'running'];

function jobs(main, store) {
  const body = h('div');
  main.append(h('h1', {}, 'Jobs'), body);
  const row = (j) => h('tr', { 'data-job': j.id, 'data-state': j.state },
    h('th', { scope: 'row' }, h('a', { href: '#/jobs/' + j.id }, String(j.id))),
    h('td', {}, j.name || (j.spec.cmd || []).join(' ').slice(0, 40)),
    h('td', {}, j.owner),
    h('td', { class: 'state state-' + j.state }, j.state + (j.held ? ' (held)' : '')),
    h('td', {}, (j.hosts || []).map((x) => `${x.node}:${x.procs}`).join(', ') || '–'),
    h('td', { class: 'num' }, String(j.attempt)),
    h('td', {}, j.degraded ? 'degraded: ' + (j.degraded_reason || '') : ''),
    h('td', {}, j.wait_reason || j.reason || ''));
  const cols = ['Job', 'Name', 'Owner', 'State', 'Nodes', 'Attempts', 'Degraded', 'Reason'];
  const render = () => {
    const all = [...store.jobs].sort((a, b) => b.id - a.id);
    const groups = [['Queued', (j) => j.state === 'queued'], ['Running', (j) => LIVE.includes(j.state) && j.state !== 'queued'],
      ['Finished', (j) => !LIVE.includes(j.state)]];
    body.replaceChildren(errorNote(store, 'jobs'), ...groups.map(([title, f]) => {
      const rows = all.filter(f);
      return table(`${title} (${rows.length})`, cols, rows.length ? rows.map(row) : [h('tr', {}, h('td', { colspan: cols.length }, 'none'))], { class: 'jobs', id: 'jobs-' + title.toLowerCase() });
    }));
  };
  render();
  return { update: (w) => { if (w === 'jobs') render(); } };
}

function job(main, store, id) {
  const head = h('div'), attempts = h('div'), expl = h('section', { id: 'placement', 'aria-labelledby': 'placement-h' }), logs = h('pre', { id: 'log', tabindex: 0 });
  const kill = h('button', { type: 'button', id: 'kill' }, 'Kill job');
  main.append(h('p', {}, h('a', { href: '#/jobs' }, '← all jobs')), h('h1', {}, 'Job ' + id), head, kill, attempts,
    h('h2', { id: 'placement-h' }, 'Placement explanation'), expl, h('h2', {}, 'Output (last 4 KiB)'), logs);
  // Two presses, no modal dialog: the second confirms, and the button says
  // so, for a keyboard and a screen reader as for a pointer.
  let armed = false;
  const note = h('span', { id: 'kill-note', role: 'status', 'aria-live': 'polite' });
  kill.after(note);
  kill.addEventListener('click', async () => {
    const j = store.jobs.find((x) => String(x.id) === id);
    if (!j) return;
    if (!armed) {
      armed = true;
      kill.textContent = `Confirm: kill job ${id} of ${j.owner}`;
      return;
    }
    armed = false;
    kill.textContent = 'Kill job';
    try {
      await api.post(`/v1/jobs/${id}/kill`, { user: j.owner });
      note.textContent = ' kill sent';
    } catch (e) {
      note.textContent = ' ' + e.message;
    }
  });
  let lastState = '', explained = '';
  async function render() {
    const j = store.jobs.find((x) => String(x.id) === id);
    if (!j) { head.replaceChildren(h('p', {}, 'No such job in the listing (it may have been collected).')); return; }
    kill.hidden = !LIVE.includes(j.state);
    head.replaceChildren(h('dl', { class: 'facts' },
      h('dt', {}, 'State'), h('dd', { id: 'job-state', 'data-state': j.state }, j.state),
      h('dt', {}, 'Owner'), h('dd', {}, j.owner),
      h('dt', {}, 'Command'), h('dd', {}, h('code', {}, (j.spec.cmd || []).join(' '))),
      h('dt', {}, 'Processes'), h('dd', {}, String(j.spec.np || '–')),
      h('dt', {}, 'Nodes'), h('dd', {}, (j.hosts || []).map((x) => `${x.node}:${x.procs}`).join(', ') || '–'),
      h('dt', {}, 'Submitted'), h('dd', {}, `${time(j.submitted_at)} (${ago(j.submitted_at)})`),
      j.wait_reason ? [h('dt', {}, 'Waiting'), h('dd', {}, j.wait_reason)] : null,
      j.degraded ? [h('dt', {}, 'Degraded'), h('dd', {}, j.degraded_reason)] : null,
      j.exit_code !== null && j.exit_code !== undefined ? [h('dt', {}, 'Exit code'), h('dd', {}, String(j.exit_code))] : null));
    attempts.replaceChildren(table('Attempts', ['#', 'State', 'Nodes', 'Placed', 'Started', 'Ended', 'Exit', 'CPU s', 'Max RSS', 'Reason'],
      (j.attempts || []).map((a) => h('tr', {},
        h('th', { scope: 'row' }, String(a.n)), h('td', {}, a.state),
        h('td', {}, (a.hosts || []).map((x) => `${x.node}:${x.procs}`).join(', ')),
        h('td', {}, time(a.placed_at)), h('td', {}, time(a.started_at)), h('td', {}, time(a.ended_at)),
        h('td', { class: 'num' }, a.exit_code ?? '–'),
        h('td', { class: 'num' }, a.total ? a.total.cpu_seconds.toFixed(2) : '–'),
        h('td', { class: 'num' }, a.total ? bytes(a.total.max_rss_bytes) : '–'),
        h('td', {}, a.reason || a.degraded_reason || '')))));
    const key = j.attempt + ':' + j.state;
    if (key !== lastState) {
      lastState = key;
      if (j.attempt > 0 && explained !== String(j.attempt)) explain(j);
      if (j.attempts && j.attempts.some((a) => a.started_at)) {
        api.getText(`/v1/jobs/${id}/logs?follow=0`).then((t) => { logs.textContent = t.slice(-4096) || '(no output)'; }, (e) => { logs.textContent = e.message; });
      }
    }
    if (!j.attempt) expl.replaceChildren(h('p', {}, 'Not placed yet' + (j.wait_reason ? ': ' + j.wait_reason : '.')));
  }
  async function explain(j) {
    try {
      const p = await api.get(`/v1/jobs/${id}/placement`);
      explained = String(p.attempt);
      expl.replaceChildren(...explanation(p));
    } catch (e) {
      expl.replaceChildren(h('p', {}, 'No explanation: ' + e.message));
    }
  }
  render();
  return { update: (w) => { if (w === 'jobs') render(); } };
}

export function explanation(p) {
  const t = (x) => x.toFixed(3);
  const s = p.score;
  const cands = s.considered || [];
  return [
    h('p', { id: 'why' }, s.why || `Policy ${s.policy} chose these nodes with T = ${t(s.t)}.`),
    h('p', { class: 'hint' }, `Policy ${s.policy}, relaxation ${s.relax}. T = α·C/C_ref + β·N/N_ref with α = ${s.alpha.toFixed(2)}, β = ${s.beta.toFixed(2)}, ` +
      `C_ref = ${t(s.c_ref)}, N_ref = ${t(s.n_ref)}; lower is better, an average group scores about 1. ` +
      `${s.candidates} candidate groups evaluated, the best ${cands.length} shown. Attempt ${p.attempt}, decided by the leader ${p.leader} at ${time(p.placed_at)}.`),
    table('Candidate groups', ['Rank', 'Nodes', 'Compute C', 'α·C/C_ref', 'Network N', 'β·N/N_ref', 'T', ''],
      cands.map((c, i) => h('tr', { class: c.chosen ? 'chosen' : '' },
        h('th', { scope: 'row' }, String(i + 1)), h('td', {}, c.nodes.join(', ')),
        h('td', { class: 'num' }, t(c.c)), h('td', { class: 'num' }, t(s.alpha * c.c_norm)),
        h('td', { class: 'num' }, t(c.n)), h('td', { class: 'num' }, t(s.beta * c.n_norm)),
        h('td', { class: 'num' }, t(c.t)), h('td', {}, c.chosen ? '✔ chosen' : ''))), { id: 'candidates' }),
    table('Chosen nodes', ['Node', 'Compute load CL', 'Free slots', 'Processes'],
      s.nodes.map((n) => h('tr', {}, h('th', { scope: 'row' }, n.node), h('td', { class: 'num' }, t(n.cl)), h('td', { class: 'num' }, String(n.slots)), h('td', { class: 'num' }, String(n.procs))))),
    s.pair_scores && s.pair_scores.length ? table('Pairs of the chosen group', ['Pair', 'Offers (Mbit/s)', 'Network cost NL'],
      s.pair_scores.map((x) => h('tr', {}, h('th', { scope: 'row' }, `${x.a} ↔ ${x.b}`), h('td', { class: 'num' }, x.measured ? fmt(x.offer_mbps) : 'not measured'), h('td', { class: 'num' }, t(x.cost))))) : null,
  ];
}

function probes(main, store) {
  const body = h('div');
  main.append(h('h1', {}, 'Probes'), body);
  const render = () => body.replaceChildren(errorNote(store, 'probes'),
    table('Probe processes', ['Node', 'Kind', 'State', 'PID', 'Restarts', 'Last beat', 'Last restart reason'],
      [...store.probes].sort((a, b) => a.node.localeCompare(b.node, undefined, { numeric: true }) || a.kind.localeCompare(b.kind)).map((p) => h('tr', {},
        h('th', { scope: 'row' }, p.node), h('td', {}, p.kind), h('td', { class: 'st st-' + p.state }, p.state),
        h('td', { class: 'num' }, p.pid ? String(p.pid) : 'in-process'), h('td', { class: 'num' }, String(p.restarts)),
        h('td', {}, ago(p.last_beat)), h('td', {}, p.last_reason || ''))), { id: 'probes' }));
  render();
  return { update: (w) => { if (w === 'probes') render(); } };
}

export const pages = { cluster, network, jobs, probes };
pages.jobs = (main, store, arg) => (arg ? job(main, store, arg) : jobs(main, store));
