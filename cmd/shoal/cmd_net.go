package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

func netCommand() *cli.Command {
	return &cli.Command{
		Name:  "net",
		Usage: "show the network matrix: bandwidth or latency between every pair of nodes",
		Description: `Row FROM, column TO holds what FROM measured to TO: the latest available
bandwidth in Mbit/s from FROM to TO (--metric bw; a test measures both
directions, so the cell TO, FROM is the other way), the 1-minute mean
round-trip time in ms (--metric lat), or the round trip in ms that the two
nodes' Vivaldi network coordinates predict (--metric est; --json gives it
as rtt_est_ms next to rtt_ms). On a terminal the matrix is a heatmap,
light = good (as in seed 002 Fig. 7); under it a row gives each node's
1-minute load. A pair never measured shows '-': it is never guessed.

Every figure has an age: the column "oldest s" gives the oldest figure
of each row in seconds, and --metric bw-age, lat-age or est-age draws the
age of every cell instead of its value (--json: bw_out_age_s,
bw_in_age_s, rtt_age_s, rtt_est_age_s).

Examples:
  shoal net
  shoal net --metric lat
  shoal net --metric est
  shoal net --metric bw-age
  shoal net --json | jq '.[] | select(.bw_out_mbps < 100)'`,
		Flags: append(clientFlags(), jsonFlag(),
			&cli.StringFlag{Name: "metric", Value: "bw", Usage: "`METRIC` to show: bw (Mbit/s), lat (ms), est (ms, from coordinates), or the age in seconds of one of them: bw-age, lat-age, est-age"},
			&cli.StringFlag{Name: "color", Value: "auto", Usage: "heatmap colours: auto (on a terminal), always or never"}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "net takes no arguments")
			}
			metric := c.String("metric")
			switch strings.TrimSuffix(metric, "-age") {
			case "bw", "lat", "est":
			default:
				return usagef(c, "--metric %q: use bw, lat, est, bw-age, lat-age or est-age", metric)
			}
			color := c.String("color")
			switch color {
			case "auto":
				color = map[bool]string{true: "always", false: "never"}[isTerminal(c.App.Writer)]
			case "always", "never":
			default:
				return usagef(c, "--color %q: use auto, always or never", color)
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			pairs, err := cl.Net(c.Context)
			if err != nil {
				return apiError(err)
			}
			pairs = byPair(pairs)
			if c.Bool("json") {
				return printJSON(c, pairs)
			}
			nodes, err := cl.Nodes(c.Context)
			if err != nil {
				return apiError(err)
			}
			writeNetMatrix(c.App.Writer, nodes, pairs, metric, color == "always")
			return nil
		},
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeNetMatrix prints the matrix of metric ("bw", "lat" or "est") over nodes,
// then their loads. With colour, each cell's background is a grey from
// dark (worst value shown) to light (best).
func writeNetMatrix(w io.Writer, nodes []api.Node, pairs []api.NetPair, metric string, colour bool) {
	nodes = byNodeName(nodes)
	names := make([]string, 0, len(nodes))
	shown := map[string]string{} // names as printed: escaped and cut
	width := 6
	for _, n := range nodes {
		names = append(names, n.Name)
		shown[n.Name] = cell(n.Name, 24)
		width = max(width, utf8.RuneCountInString(shown[n.Name])+1)
	}
	val := map[[2]string]float64{}
	oldest := map[string]float64{} // per row: the oldest figure of the metric, in seconds
	lo, hi := math.Inf(1), math.Inf(-1)
	base, ages := strings.CutSuffix(metric, "-age")
	for _, p := range pairs {
		v, age := netFigure(p, base)
		if v == nil {
			continue
		}
		if age != nil {
			oldest[p.From] = max(oldest[p.From], *age)
		}
		if ages {
			if v = age; v == nil {
				continue
			}
		}
		val[[2]string{p.From, p.To}] = *v
		lo, hi = min(lo, *v), max(hi, *v)
	}
	unit := "available bandwidth from row to column, Mbit/s (light = high)"
	switch base {
	case "lat":
		unit = "round-trip time, ms (light = low)"
	case "est":
		unit = "round-trip time estimated from network coordinates, ms (light = low)"
	}
	if ages {
		unit = "age of each figure, s (light = fresh): " + unit[:strings.Index(unit, " (")]
	}
	fmt.Fprintf(w, "%s; row = from, column = to\n", unit)
	fmt.Fprintf(w, "%-*s", width, "")
	for _, n := range names {
		fmt.Fprintf(w, "%*s", width, shown[n])
	}
	if len(oldest) > 0 {
		fmt.Fprintf(w, "%*s", width+3, "oldest s")
	}
	fmt.Fprintln(w)
	for _, from := range names {
		fmt.Fprintf(w, "%-*s", width, shown[from])
		for _, to := range names {
			v, ok := val[[2]string{from, to}]
			text := "-"
			switch {
			case from == to:
				text = ""
			case ok:
				text = formatMetric(v, metric)
			}
			cell := fmt.Sprintf("%*s", width, text)
			if colour && ok {
				cell = shade(cell, goodness(v, lo, hi, metric))
			}
			fmt.Fprint(w, cell)
		}
		if a, ok := oldest[from]; ok {
			fmt.Fprintf(w, "%*.0f", width+3, a)
		} else if len(oldest) > 0 {
			fmt.Fprintf(w, "%*s", width+3, "-")
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-*s", width, "load1m")
	for _, n := range nodes {
		fmt.Fprintf(w, "%*.2f", width, n.Load.M1)
	}
	fmt.Fprintln(w)
	if len(val) == 0 {
		fmt.Fprintln(w, "no pair measured yet: the first bandwidth cycle and latency round may still be running")
	}
}

// netFigure is the value of metric ("bw", "lat" or "est") for pair p and
// its age in seconds: bw is the direction From to To when the row has it
// (the worse direction from an agent that predates directions).
func netFigure(p api.NetPair, metric string) (v, age *float64) {
	switch metric {
	case "lat":
		return p.RTTms, p.RTTAgeS
	case "est":
		return p.RTTEstms, p.RTTEstAgeS
	}
	if p.BWOutMbps != nil {
		return p.BWOutMbps, p.BWOutAgeS
	}
	return p.BWMbps, nil
}

func formatMetric(v float64, metric string) string {
	if strings.HasSuffix(metric, "-age") {
		return fmt.Sprintf("%.0f", v)
	}
	if metric != "bw" {
		if v < 10 {
			return fmt.Sprintf("%.2f", v)
		}
		return fmt.Sprintf("%.1f", v)
	}
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// goodness maps v to 0 (worst shown) .. 1 (best shown).
func goodness(v, lo, hi float64, metric string) float64 {
	if hi <= lo {
		return 1
	}
	g := (v - lo) / (hi - lo)
	if metric != "bw" {
		g = 1 - g
	}
	return g
}

// shade paints s on one of the 24 greys of the 256-colour palette.
func shade(s string, g float64) string {
	grey := 232 + int(math.Round(g*23))
	fg := 255
	if grey > 243 {
		fg = 16
	}
	return fmt.Sprintf("\x1b[38;5;%d;48;5;%dm%s\x1b[0m", fg, grey, s)
}
