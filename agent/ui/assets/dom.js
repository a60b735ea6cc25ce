// h builds an element: h('td', {class: 'x'}, 'text', child). Text is
// always a text node, never HTML: job names and reasons are users' input.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// table builds a table with a caption, column headers and rows of cells.
export function table(caption, cols, rows, attrs = {}) {
  return h('table', attrs,
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows));
}

export function bytes(n) {
  if (!(n >= 0)) return '–';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n.toFixed(0)) + ' ' + u[i];
}

export function ago(t, now = Date.now()) {
  if (!t) return '–';
  const s = Math.max(0, (now - new Date(t).getTime()) / 1000);
  if (s < 60) return s.toFixed(0) + ' s ago';
  if (s < 3600) return (s / 60).toFixed(0) + ' min ago';
  return (s / 3600).toFixed(1) + ' h ago';
}

export function time(t) {
  return t ? new Date(t).toLocaleTimeString() : '–';
}
