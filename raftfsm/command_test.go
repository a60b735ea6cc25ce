package raftfsm

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestEncodeDecode_RoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("CET", 3600))
	data, err := Encode(CmdKillJob, at, KillJob{ID: 7, User: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if c.V != Version || c.Type != CmdKillJob || !c.At.Equal(at) || c.At.Location() != time.UTC {
		t.Fatalf("decoded %+v", c)
	}
	var b KillJob
	if err := json.Unmarshal(c.Body, &b); err != nil || b != (KillJob{ID: 7, User: "bob"}) {
		t.Fatalf("body %+v, %v", b, err)
	}
}

func TestEncode_Refuses(t *testing.T) {
	t.Parallel()
	if _, err := Encode("launch_missiles", t0, struct{}{}); !errors.Is(err, ErrUnknownCommand) {
		t.Errorf("unknown type: %v", err)
	}
	if _, err := Encode(CmdKillJob, time.Time{}, KillJob{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("zero time: %v", err)
	}
	if _, err := Encode(CmdKillJob, t0, func() {}); err == nil {
		t.Errorf("unencodable body accepted")
	}
}

func TestDecode_Refuses(t *testing.T) {
	t.Parallel()
	const at = `"2026-11-22T10:00:00Z"`
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"empty", ``, ErrMalformed},
		{"not json", `hello`, ErrMalformed},
		{"array", `[1,2]`, ErrMalformed},
		{"null", `null`, ErrVersion},
		{"version 0", `{"type":"kill_job","at":` + at + `,"body":{}}`, ErrVersion},
		{"version 2", `{"v":2,"type":"kill_job","at":` + at + `,"body":{}}`, ErrVersion},
		{"unknown type", `{"v":1,"type":"format_disk","at":` + at + `,"body":{}}`, ErrUnknownCommand},
		{"no type", `{"v":1,"at":` + at + `,"body":{}}`, ErrUnknownCommand},
		{"unknown field", `{"v":1,"type":"kill_job","at":` + at + `,"body":{},"x":1}`, ErrMalformed},
		{"trailing data", `{"v":1,"type":"kill_job","at":` + at + `,"body":{}} {}`, ErrMalformed},
		{"trailing bracket", `{"v":1,"type":"kill_job","at":` + at + `,"body":{}}]`, ErrMalformed},
		{"no time", `{"v":1,"type":"kill_job","body":{}}`, ErrMalformed},
		{"bad time", `{"v":1,"type":"kill_job","at":"yesterday","body":{}}`, ErrMalformed},
		{"year 0 in UTC", `{"v":1,"type":"kill_job","at":"0000-01-01T00:30:00+01:00","body":{}}`, ErrMalformed},
		{"year 10000 in UTC", `{"v":1,"type":"kill_job","at":"9999-12-31T23:30:00-01:00","body":{}}`, ErrMalformed},
		{"version as string", `{"v":"1","type":"kill_job","at":` + at + `}`, ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := Decode([]byte(tc.in)); !errors.Is(err, tc.want) {
				t.Fatalf("Decode(%q) = %v, want %v", tc.in, err, tc.want)
			}
		})
	}
}

func TestApply_MalformedBodies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit("r1", 4)
	bodies := []struct {
		typ, body string
		want      error
	}{
		{CmdKillJob, ``, ErrMalformed},
		{CmdKillJob, `null`, ErrMalformed},
		{CmdKillJob, `[]`, ErrMalformed},
		{CmdKillJob, `{"id":1,"user":"alice","force":true}`, ErrMalformed},
		{CmdKillJob, `{"id":-1,"user":"alice"}`, ErrMalformed},
		{CmdKillJob, `{"id":1e40,"user":"alice"}`, ErrMalformed},
		{CmdPlaceJob, `{"id":1,"attempt":"one"}`, ErrMalformed},
		{CmdFinishAttempt, `{"id":1,"attempt":1}`, ErrInvalid},
		{CmdSubmitJob, `{"request_id":"r2","owner":"alice","spec":{"cmd":["x"],"np":1,"timeout":1.5}}`, ErrMalformed},
		{CmdSetSettings, `{"settings":{"alpha":"NaN"}}`, ErrMalformed},
	}
	for i, b := range bodies {
		raw := `{"v":1,"type":"` + b.typ + `","at":"2026-11-22T10:00:00Z"`
		if b.body != "" {
			raw += `,"body":` + b.body
		}
		raw += `}`
		before := stateBytes(t, h.f)
		res := h.f.Apply(rawLog(uint64(100+i), raw)).(Result)
		if !errors.Is(res.Err, b.want) {
			t.Errorf("%s %s: err = %v, want %v", b.typ, b.body, res.Err, b.want)
		}
		if string(stateBytes(t, h.f)) != string(before) {
			t.Errorf("%s %s changed the state", b.typ, b.body)
		}
	}
	h.wantState(id, StateQueued)
	if got := h.f.Index(); got != 100+uint64(len(bodies))-1 {
		t.Errorf("Index = %d, want the last refused entry's index", got)
	}
	if res := h.f.Apply(nil).(Result); !errors.Is(res.Err, ErrMalformed) {
		t.Errorf("nil log: %v", res.Err)
	}
}

func TestCode_RoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range codes {
		wrapped := errorsJoinf(c.err)
		if got := Code(wrapped); got != c.code {
			t.Errorf("Code(%v) = %q, want %q", wrapped, got, c.code)
		}
		if Sentinel(c.code) != c.err {
			t.Errorf("Sentinel(%q) = %v", c.code, Sentinel(c.code))
		}
	}
	if Code(nil) != "" || Code(errors.New("x")) != "other" || Sentinel("nope") != nil {
		t.Errorf("Code/Sentinel edge cases")
	}
}

func TestStateApply_ZeroState(t *testing.T) {
	t.Parallel()
	data, err := Encode(CmdSubmitJob, t0, SubmitJob{RequestID: "r", Owner: "u", Spec: JobSpec{Cmd: []string{"x"}, NP: 1}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var s State
	if res := s.Apply(c); res.Err != nil || res.JobID != 1 {
		t.Fatalf("Apply on a zero State = %+v", res)
	}
	if res := s.Apply(Command{V: Version, Type: "nope", At: t0}); !errors.Is(res.Err, ErrUnknownCommand) {
		t.Fatalf("unknown type on State.Apply: %v", res.Err)
	}
	checkInvariants(t, &s)
}
