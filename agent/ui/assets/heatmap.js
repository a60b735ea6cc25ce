// Canvas heatmaps of the measured network: one pixel per cell in an
// offscreen image, scaled up without smoothing, so one update at 1,000
// nodes is a single pass over a million cells and one drawImage.

// viridis is the colour of t in [0,1] on the viridis scale: perceptually
// uniform and readable with the common colour-vision deficiencies, and
// monotone in lightness, so it survives greyscale printing too.
// Polynomial fit of matplotlib's table.
export function viridis(t) {
  t = Math.min(1, Math.max(0, t));
  const c = [
    [0.2777273272234177, 0.005407344544966578, 0.3340998053353061],
    [0.1050930431085774, 1.404613529898575, 1.384590162594685],
    [-0.3308618287255563, 0.214847559468213, 0.09509516302823659],
    [-4.634230498983486, -5.799100973351585, -19.33244095627987],
    [6.228269936347081, 14.17993336680509, 56.69055260068105],
    [4.776384997670288, -13.74514537774601, -65.35303263337234],
    [-5.435455855934631, 4.645852612178535, 26.3124352495832],
  ];
  const out = [0, 0, 0];
  for (let k = 0; k < 3; k++) {
    let v = c[6][k];
    for (let i = 5; i >= 0; i--) v = c[i][k] + t * v;
    out[k] = Math.round(255 * Math.min(1, Math.max(0, v)));
  }
  return out;
}

// LUT holds viridis at 256 steps as packed RGBA (little-endian ABGR words).
export const LUT = (() => {
  const lut = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    const [r, g, b] = viridis(i / 255);
    lut[i] = (255 << 24) | (b << 16) | (g << 8) | r;
  }
  return lut;
})();

// NONE is the colour of a cell never measured nor estimated: light grey,
// lighter than any viridis step but its last, and marked in the legend.
const NONE = (255 << 24) | (0xdd << 16) | (0xdd << 8) | 0xdd;
const SELF = (255 << 24) | (0xff << 16) | (0xff << 8) | 0xff;

// Source of a cell's figure.
export const SRC_NONE = 0, SRC_DIRECT = 1, SRC_COORD = 2;
export const SOURCE_NAMES = ['not measured', 'direct test', 'coordinate estimate'];

// Matrix is one heatmap's state: n*n values (NaN where nothing is known),
// their sources and ages in seconds, rows and columns in order.
export class Matrix {
  constructor(names) {
    this.names = names;
    this.n = names.length;
    this.index = new Map(names.map((nm, i) => [nm, i]));
    const nn = this.n * this.n;
    this.value = new Float32Array(nn).fill(NaN);
    this.source = new Uint8Array(nn);
    this.age = new Float32Array(nn).fill(NaN);
  }
  clear() {
    this.value.fill(NaN);
    this.source.fill(0);
    this.age.fill(NaN);
    return this;
  }
  set(from, to, v, src, age) {
    const i = this.index.get(from), j = this.index.get(to);
    if (i === undefined || j === undefined || v === undefined || v === null) return;
    const k = i * this.n + j;
    this.value[k] = v;
    this.source[k] = src;
    this.age[k] = age ?? NaN;
  }
}

// matricesFromPairs turns GET /v1/net's pairs into a bandwidth matrix (row
// From sends to column To: bw_out_mbps) and a latency matrix (rtt_ms where
// measured, else the coordinates' rtt_est_ms). prev, the last result, is
// reused when the nodes are the same: at 1,000 nodes a matrix is 9 MB.
// The pairs come sorted by From, so a row's index is looked up once.
export function matricesFromPairs(names, pairs, prev) {
  const same = prev && prev.bw.n === names.length && names.every((nm, i) => prev.bw.names[i] === nm);
  const bw = same ? prev.bw.clear() : new Matrix(names);
  const lat = same ? prev.lat.clear() : new Matrix(names);
  const index = bw.index, n = bw.n;
  let from = null, row = -1;
  for (const p of pairs) {
    if (p.from !== from) {
      from = p.from;
      const i = index.get(from);
      row = i === undefined ? -1 : i * n;
    }
    if (row < 0) continue;
    const j = index.get(p.to);
    if (j === undefined) continue;
    const k = row + j;
    const out = p.bw_out_mbps ?? p.bw_mbps;
    if (out !== undefined) { bw.value[k] = out; bw.source[k] = SRC_DIRECT; bw.age[k] = p.bw_out_age_s ?? NaN; }
    if (p.rtt_ms !== undefined) { lat.value[k] = p.rtt_ms; lat.source[k] = SRC_DIRECT; lat.age[k] = p.rtt_age_s ?? NaN; }
    else if (p.rtt_est_ms !== undefined) { lat.value[k] = p.rtt_est_ms; lat.source[k] = SRC_COORD; lat.age[k] = p.rtt_est_age_s ?? NaN; }
  }
  return { bw, lat };
}

// range returns the least and greatest finite positive value of m.
function range(m) {
  let lo = Infinity, hi = -Infinity;
  const v = m.value;
  for (let k = 0; k < v.length; k++) {
    const x = v[k];
    if (x > 0) { if (x < lo) lo = x; if (x > hi) hi = x; }
  }
  return lo <= hi ? [lo, hi] : [1, 1];
}

// Heatmap draws a Matrix on a canvas. Higher is better when !lowIsGood
// (bandwidth); lowIsGood (latency) reverses the scale, so bright always
// means good. Values are placed on a log scale: links differ by orders of
// magnitude (a 50 Mbit uplink beside 10 Gbit veths).
export class Heatmap {
  constructor(canvas, { label, unit, lowIsGood = false, onSelect = () => {} }) {
    this.canvas = canvas;
    this.label = label;
    this.unit = unit;
    this.lowIsGood = lowIsGood;
    this.onSelect = onSelect;
    this.m = null;
    this.groups = [];
    this.cursor = [0, 0];
    this.off = document.createElement('canvas');
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    canvas.addEventListener('mousemove', (e) => this.hover(e));
    canvas.addEventListener('keydown', (e) => this.key(e));
    canvas.addEventListener('focus', () => this.select(...this.cursor));
  }

  // update takes a new matrix and the switch boundaries (row indices where
  // a switch's block starts) and redraws. It returns the milliseconds it took.
  update(m, groups = []) {
    const t0 = performance.now();
    this.m = m;
    this.groups = groups;
    const n = m.n;
    [this.lo, this.hi] = range(m);
    const llo = Math.log(this.lo), span = Math.log(this.hi) - llo || 1;
    if (this.off.width !== n || this.off.height !== n) {
      this.off.width = n; this.off.height = n;
      this.img = null;
    }
    if (n === 0) { this.draw(); return performance.now() - t0; }
    const octx = this.off.getContext('2d');
    this.img = this.img || octx.createImageData(n, n);
    const px = new Uint32Array(this.img.data.buffer);
    const v = m.value;
    const inv = this.lowIsGood;
    for (let k = 0; k < v.length; k++) {
      const x = v[k];
      if (x !== x) { px[k] = (k % (n + 1) === 0) ? SELF : NONE; continue; }
      let t = x > 0 ? (Math.log(x) - llo) / span : 0;
      if (inv) t = 1 - t;
      px[k] = LUT[(t * 255 + 0.5) | 0];
    }
    octx.putImageData(this.img, 0, 0);
    this.draw();
    this.canvas.setAttribute('aria-label', `${this.label} heatmap of ${n} nodes, ${fmt(this.lo)} to ${fmt(this.hi)} ${this.unit}; ` +
      'focus it and use the arrow keys to read cells');
    return performance.now() - t0;
  }

  draw() {
    const c = this.canvas, n = this.m ? this.m.n : 0;
    const size = Math.max(200, Math.min(640, c.parentElement ? c.parentElement.clientWidth - 8 : 640));
    const dpr = window.devicePixelRatio || 1;
    if (c.width !== size * dpr) { c.width = size * dpr; c.height = size * dpr; c.style.width = c.style.height = size + 'px'; }
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, size, size);
    if (!n) return;
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.off, 0, 0, size, size);
    const cell = size / n;
    ctx.strokeStyle = '#fff';
    ctx.lineWidth = 1;
    for (const g of this.groups) {
      if (g === 0) continue;
      ctx.beginPath();
      ctx.moveTo(g * cell, 0); ctx.lineTo(g * cell, size);
      ctx.moveTo(0, g * cell); ctx.lineTo(size, g * cell);
      ctx.stroke();
    }
    if (cell >= 8) {
      // Estimated cells carry a dot, so the source does not hang on colour.
      ctx.fillStyle = '#fff';
      for (let k = 0; k < this.m.source.length; k++) {
        if (this.m.source[k] !== SRC_COORD) continue;
        const i = (k / n) | 0, j = k % n;
        ctx.beginPath();
        ctx.arc((j + 0.5) * cell, (i + 0.5) * cell, Math.max(1.5, cell / 10), 0, 2 * Math.PI);
        ctx.fill();
      }
    }
    if (document.activeElement === c) {
      const [i, j] = this.cursor;
      ctx.strokeStyle = '#e69f00';
      ctx.lineWidth = 2;
      ctx.strokeRect(j * cell, i * cell, Math.max(cell, 3), Math.max(cell, 3));
    }
  }

  hover(e) {
    if (!this.m || !this.m.n) return;
    const r = this.canvas.getBoundingClientRect();
    const cell = r.width / this.m.n;
    const j = Math.floor((e.clientX - r.left) / cell), i = Math.floor((e.clientY - r.top) / cell);
    if (i >= 0 && j >= 0 && i < this.m.n && j < this.m.n) this.select(i, j);
  }

  key(e) {
    if (!this.m || !this.m.n) return;
    const d = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
    if (!d) return;
    e.preventDefault();
    const step = e.shiftKey ? 10 : 1;
    const n = this.m.n;
    this.select(Math.min(n - 1, Math.max(0, this.cursor[0] + d[0] * step)),
      Math.min(n - 1, Math.max(0, this.cursor[1] + d[1] * step)));
  }

  select(i, j) {
    if (!this.m || !this.m.n) return;
    this.cursor = [i, j];
    const k = i * this.m.n + j;
    this.draw();
    this.onSelect({
      from: this.m.names[i], to: this.m.names[j], value: this.m.value[k],
      source: SOURCE_NAMES[this.m.source[k]], age: this.m.age[k], unit: this.unit, label: this.label,
    });
  }
}

// legend draws the scale of h into canvas c: lo at the left, hi at the right.
export function legend(c, h) {
  const w = 240, hgt = 12;
  c.width = w; c.height = hgt;
  const ctx = c.getContext('2d');
  for (let x = 0; x < w; x++) {
    let t = x / (w - 1);
    if (h.lowIsGood) t = 1 - t;
    const [r, g, b] = viridis(t);
    ctx.fillStyle = `rgb(${r},${g},${b})`;
    ctx.fillRect(x, 0, 1, hgt);
  }
}

export function fmt(x) {
  if (!(x === x)) return '–';
  if (x >= 100) return x.toFixed(0);
  if (x >= 10) return x.toFixed(1);
  return x.toPrecision(2);
}
