package probeplan

import "testing"

func TestBesideTraffic_RetestDue(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		b    BesideTraffic
		want bool
	}{
		// n07-n08 on the queue12 testbed: 26 of 100 Mbit/s beside 74 into n08.
		"busy end gone quiet":           {BesideTraffic{Mbps: 26, Besides: 74, Now: 10, Link: 100}, true},
		"next job carries less":         {BesideTraffic{Mbps: 26, Besides: 74, Now: 45, Link: 100}, true},
		"same traffic goes on":          {BesideTraffic{Mbps: 26, Besides: 74, Now: 74, Link: 100}, false},
		"a little less traffic":         {BesideTraffic{Mbps: 50, Besides: 49, Now: 45, Link: 99}, false},
		"a flow that runs on":           {BesideTraffic{Mbps: 51, Besides: 149, Now: 160, Link: 200}, false},
		"busy link not full: the path":  {BesideTraffic{Mbps: 10, Besides: 40, Now: 30, Link: 100}, false},
		"busy link not full, end quiet": {BesideTraffic{Mbps: 10, Besides: 40, Now: 15, Link: 100}, true},
		"busy end's link not known":     {BesideTraffic{Mbps: 26, Besides: 74, Now: 45}, false},
		// degrade10: towards a link down to 10 beside the sender's job. The
		// reading alone cannot tell the two apart; a re-test reads 10 again.
		"slow quiet end, busy sender": {BesideTraffic{Mbps: 10, Besides: 90, Now: 80, Link: 100}, true},
	} {
		if got := tc.b.RetestDue(); got != tc.want {
			t.Errorf("%s: %+v RetestDue = %v, want %v", name, tc.b, got, tc.want)
		}
	}
}

func TestOutlierDue(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mbps, a, b float64
		slower     bool
		want       bool
	}{
		"n08->n05 on queue12":           {41.6, 111.5, 117.1, false, true},
		"as fast as the others":         {101, 111.5, 117.1, false, false},
		"half the slower end, not less": {55.75, 111.5, 117.1, false, false},
		"one end's link is slow":        {9, 10, 117.1, false, false},
		"link checks read it slower":    {10, 100, 100, true, false},
		"no other test at one end":      {41.6, 0, 117.1, false, false},
		"never measured":                {0, 111.5, 117.1, false, false},
	} {
		if got := OutlierDue(tc.mbps, tc.a, tc.b, tc.slower); got != tc.want {
			t.Errorf("%s: OutlierDue(%v, %v, %v, %v) = %v, want %v", name, tc.mbps, tc.a, tc.b, tc.slower, got, tc.want)
		}
	}
}
