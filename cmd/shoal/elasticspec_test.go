package main

import (
	"testing"
	"time"
)

func TestParseRange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in     string
		lo, hi int
		ok     bool
	}{
		{"2:8", 2, 8, true}, {"3:3", 3, 3, true}, {"8:2", 0, 0, false}, {"0:4", 0, 0, false},
		{"4", 0, 0, false}, {"a:b", 0, 0, false}, {":4", 0, 0, false},
	} {
		lo, hi, err := parseRange(c.in)
		if (err == nil) != c.ok || lo != c.lo || hi != c.hi {
			t.Errorf("parseRange(%q) = %d, %d, %v", c.in, lo, hi, err)
		}
	}
}

func TestParseDeadline(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30m", 30 * time.Minute, true},
		{"0s", 0, false},
		{"-5m", 0, false},
		{"2026-11-22T12:00:00Z", 2 * time.Hour, true},
		{"2026-11-22T09:00:00Z", 0, false}, // already passed
		{"11:30", 90 * time.Minute, true},
		{"09:59", 0, false},
		{"tomorrow", 0, false},
	} {
		got, err := parseDeadline(c.in, now)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseDeadline(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}
