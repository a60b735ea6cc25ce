// The dashboard: a store filled from the read endpoints, kept current by
// the event stream, and pages that render from the store. A page never
// reloads: an event names what changed and the store re-reads that.
import * as api from './api.js';
import { pages } from './pages.js';

const TOPICS = ['node', 'job', 'attempt', 'probe'];
// What each event topic makes the store re-read.
const READS = { node: ['nodes', 'members', 'net'], job: ['jobs'], attempt: ['jobs'], probe: ['probes', 'net'] };
const PATHS = { nodes: '/v1/nodes', members: '/v1/members', net: '/v1/net', jobs: '/v1/jobs?limit=1000', probes: '/v1/probes' };
// POLL is how often the store re-reads everything while the agent has no
// event stream (an older agent): slower than the events, never a reload.
const POLL = 2000;
// The network matrix is the largest read: at most one every NET_EVERY ms.
const NET_EVERY = 1500;

export const store = {
  nodes: [], members: [], net: [], jobs: [], probes: [],
  errors: {},
  netHistory: [], // {at, pairs}: the last hour, for the network page's slider
  index: 0,
  listeners: new Set(),
  emit(what) { for (const f of this.listeners) f(what); },
};

let pending = new Set(), timer = null, lastNet = 0;

// readIndex is the least state index the first reads reflected: the
// stream starts after it, so nothing that changed between a read and the
// stream's start is missed (an event for what a read already showed only
// makes the page read it again).
let readIndex = 0;

async function read(what) {
  try {
    store[what] = await api.get(PATHS[what], (i) => { readIndex = readIndex ? Math.min(readIndex, i) : i; });
    delete store.errors[what];
    if (what === 'net') {
      lastNet = Date.now();
      store.netHistory.push({ at: Date.now(), pairs: store.net });
      const hour = Date.now() - 3600e3;
      // At most 60 snapshots: at 1,000 nodes each is large.
      while (store.netHistory.length > 60 || (store.netHistory.length && store.netHistory[0].at < hour)) store.netHistory.shift();
    }
  } catch (e) {
    store.errors[what] = e.message;
  }
  store.emit(what);
}

// schedule re-reads what, coalescing a burst of events into one read.
function schedule(whats) {
  for (const w of whats) pending.add(w);
  if (timer) return;
  timer = setTimeout(async () => {
    timer = null;
    const now = [...pending];
    pending = new Set();
    for (const w of now) {
      if (w === 'net' && Date.now() - lastNet < NET_EVERY) { setTimeout(() => schedule(['net']), NET_EVERY); continue; }
      await read(w);
    }
  }, 100);
}

function setLive(text, ok) {
  const el = document.getElementById('live');
  el.textContent = text;
  el.dataset.state = ok ? 'live' : 'degraded';
}

// follow subscribes to GET /v1/events; EventSource resumes from the last
// id it saw (Last-Event-ID) after a dropped connection. An agent without
// the stream answers 404: then the store polls.
function follow() {
  const from = store.index || readIndex;
  const es = new EventSource('/v1/events?topic=' + TOPICS.join(',') + (from ? '&index=' + from : ''));
  let opened = false;
  es.onopen = () => { opened = true; setLive('live', true); };
  const onEvent = (e) => {
    let ev;
    try { ev = JSON.parse(e.data); } catch { return; }
    if (ev.index) store.index = Math.max(store.index, ev.index);
    if (ev.type === 'reset') { schedule(Object.keys(PATHS)); return; }
    schedule(READS[ev.topic] || []);
  };
  for (const t of TOPICS) es.addEventListener(t, onEvent);
  es.onmessage = onEvent;
  es.onerror = () => {
    if (es.readyState !== EventSource.CLOSED) { setLive('reconnecting…', false); return; }
    es.close();
    if (!opened) { poll(); return; }
    setLive('reconnecting…', false);
    setTimeout(follow, 1000);
  };
}

let polling = false;
function poll() {
  if (polling) return;
  polling = true;
  setLive('live (polling: this agent has no event stream)', true);
  const tick = async () => {
    await Promise.all(Object.keys(PATHS).map(read));
    setTimeout(tick, POLL);
  };
  setTimeout(tick, POLL);
}

// The router: #/cluster, #/network, #/jobs, #/jobs/ID, #/probes.
let current = null;
function route() {
  const [, name = 'cluster', arg] = location.hash.split('/');
  const page = pages[name] || pages.cluster;
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  if (current && current.leave) current.leave();
  const main = document.getElementById('main');
  main.replaceChildren();
  current = page(main, store, arg);
  document.title = 'shoal · ' + name + (arg ? ' ' + arg : '');
}

store.listeners.add((what) => { if (current && current.update) current.update(what); });
// refresh lets a page ask for a re-read no event announces.
store.refresh = (whats) => schedule(whats);
window.addEventListener('hashchange', () => { route(); document.getElementById('main').focus(); });
document.getElementById('logout').addEventListener('click', api.logout);

await Promise.all(Object.keys(PATHS).map(read));
route();
follow();
