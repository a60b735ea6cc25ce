package rows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// TestSenderBytesPerHour measures, on the real Sender (encoding, deltas,
// rate limit, refresh) over a simulated hour, the row bytes one node sends
// to 5 servers under the default probe schedule: a latency round every
// minute that moves the RTT of every peer, and the bandwidth tests the
// default budget allows (21 per 5-minute cycle, one cell each). The
// figures are docs/design/scale.md's row traffic. The bound checked is the
// whole-row-every-change traffic (what the sender would cost without
// deltas): deltas must stay under half of it.
func TestSenderBytesPerHour(t *testing.T) {
	t.Parallel()
	for _, n := range []int{100, 300, 1000} {
		clk := &fakeClock{t: t0}
		servers := []Server{{"s1", 1}, {"s2", 1}, {"s3", 1}, {"s4", 1}, {"s5", 1}}
		tables := map[string]*Table{}
		for _, s := range servers {
			tables[s.Name] = NewTable()
		}
		s := NewSender(Deps{Node: "me", Boot: 1, Now: clk.now, Config: DefaultConfig(),
			Servers: func() []Server { return servers },
			Send: func(_ context.Context, srv string, body []byte) error {
				r, err := nodestate.DecodeNetRow(body)
				if err == nil {
					_, err = tables[srv].Put(r, clk.now())
				}
				return err
			}})
		row := make([]nodestate.NetEntry, n-1)
		for i := range row {
			row[i] = nodestate.NetEntry{Peer: fmt.Sprintf("node%04d", i+1), RTT1us: 87, RTT5us: 91, RTTAt: t0.UnixMilli(),
				AvailMbps: 9412.3, PeakMbps: 9561.7, BWAt: t0.UnixMilli()}
		}
		ctx := context.Background()
		var whole uint64
		const bwPerHour = 21 * 12
		test := 0
		for sec := 1; sec <= 3600; sec++ {
			clk.add(time.Second)
			now := clk.now().UnixMilli()
			changed := false
			if sec%60 == 0 { // a latency round
				for i := range row {
					row[i].RTT1us, row[i].RTTAt = float64(80+sec%13+i%7), now
				}
				changed = true
			}
			if sec%(3600/bwPerHour) == 0 { // one bandwidth test
				c := &row[test%len(row)]
				c.AvailMbps, c.BWAt = float64(9000+sec%400), now
				test++
				changed = true
			}
			if changed {
				s.Set(row)
				b, _ := nodestate.EncodeNetRow(&nodestate.NetRow{Node: "me", Boot: 1, V: 1, Cells: row})
				whole += uint64(len(b)) * uint64(len(servers))
			}
			s.round(ctx)
		}
		got, _ := tables["s3"].Get("me")
		if own := s.Row(); got.V != own.V || len(got.Cells) != len(own.Cells) || got.Cells[n/2] != own.Cells[n/2] {
			t.Fatalf("n=%d: server holds v%d, owner v%d", n, got.V, own.V)
		}
		sent := s.SentBytes()
		t.Logf("n=%4d: %d rows sent to 5 servers in an hour, %.1f MiB (%.2f KiB/s); whole rows at every change: %.1f MiB",
			n, s.Sends(), float64(sent)/(1<<20), float64(sent)/3600/1024, float64(whole)/(1<<20))
		if sent*2 > whole {
			t.Errorf("n=%d: deltas sent %d bytes, more than half of whole rows' %d", n, sent, whole)
		}
	}
}
