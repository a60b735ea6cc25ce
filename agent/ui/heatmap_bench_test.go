package ui_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// benchPage loads heatmap.js beside two canvases and defines
// window.update(): one network-page update of a state of window.N nodes,
// every ordered pair measured in both directions (bandwidth, RTT) — GET
// /v1/net's pairs turned into the two matrices and both maps drawn. The
// pairs are made once; each update re-reads them, as the page does when a
// new matrix arrives.
const benchPage = `<!doctype html><meta charset="utf-8"><div style="width:700px"><canvas id="bw"></canvas><canvas id="lat"></canvas></div>
<script type="module">
import { Heatmap, matricesFromPairs } from '/heatmap.js';
const N = +new URLSearchParams(location.search).get('n');
const names = Array.from({ length: N }, (_, i) => 'node' + String(i).padStart(4, '0'));
let seed = 42;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pairs = [];
for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) if (i !== j) {
  const sameRack = ((i / 40) | 0) === ((j / 40) | 0);
  pairs.push({ from: names[i], to: names[j], bw_out_mbps: (sameRack ? 9000 : 900) * (0.5 + rnd()), bw_out_age_s: 30 * rnd(),
    rtt_ms: (sameRack ? 0.05 : 0.4) * (0.5 + rnd()), rtt_age_s: 5 * rnd() });
}
const bw = new Heatmap(document.getElementById('bw'), { label: 'bw', unit: 'Mbit/s' });
const lat = new Heatmap(document.getElementById('lat'), { label: 'lat', unit: 'ms', lowIsGood: true });
const groups = Array.from({ length: Math.ceil(N / 40) }, (_, g) => g * 40);
let last = null;
window.update = () => {
  const t0 = performance.now();
  const { bw: mb, lat: ml } = (last = matricesFromPairs(names, pairs, last));
  const t1 = performance.now();
  bw.update(mb, groups);
  lat.update(ml, groups);
  return [t1 - t0, performance.now() - t1];
};
window.ready = true;
</script>`

// BenchmarkHeatmapUpdate_1000Nodes measures one update of the network
// page's two heatmaps at 1,000 nodes (999,000 measured ordered pairs) in
// headless Chromium: reported as ms/update, the browser's own clock, split
// into ms/matrix (the pairs into two matrices) and ms/draw (both canvases). A
// benchmark, not a timed test; docs/results.md keeps the figures.
func BenchmarkHeatmapUpdate_1000Nodes(b *testing.B) {
	ctx := browserCtx(b)
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(os.DirFS("assets")))
	mux.HandleFunc("/bench", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(benchPage))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/bench?n=1000")); err != nil {
		b.Fatal(err)
	}
	waitJS(b, ctx, "the benchmark page", `window.ready === true`, 2*time.Minute)
	matrix, draw := 0.0, 0.0
	b.ResetTimer()
	for b.Loop() {
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[[2]float64](`window.update()`))
		if err != nil {
			b.Fatal(err)
		}
		matrix, draw = matrix+ms[0], draw+ms[1]
	}
	n := float64(b.N)
	b.ReportMetric((matrix+draw)/n, "ms/update")
	b.ReportMetric(matrix/n, "ms/matrix")
	b.ReportMetric(draw/n, "ms/draw")
}
