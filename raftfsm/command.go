package raftfsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Version is the command encoding this FSM writes and the only one it accepts.
const Version = 1

// Command types. The body of each is the struct of the same name (CmdSubmitJob → SubmitJob).
const (
	CmdSubmitJob      = "submit_job"
	CmdPlaceJob       = "place_job"
	CmdAckReservation = "ack_reservation"
	CmdStartJob       = "start_job"
	CmdFinishAttempt  = "finish_attempt"
	CmdFailAttempt    = "fail_attempt"
	CmdRejectJob      = "reject_job"
	CmdKillJob        = "kill_job"
	CmdSetProbeDuties = "set_probe_duties"
	CmdProbeRestart   = "probe_restart"
	CmdSetSettings    = "set_settings"
	CmdRemoveNode     = "remove_node"
	CmdReportProgress = "report_progress"
	CmdResizeJob      = "resize_job"
	CmdPurgeJobs      = "purge_jobs"
	CmdSetLimits      = "set_limits"
	CmdSetWaitReason  = "set_wait_reason"
	CmdNodeRestarted  = "node_restarted"
	CmdDrainNode      = "drain_node"
	CmdUndrainNode    = "undrain_node"
	CmdPurgeHistory   = "purge_history"
	CmdHoldJob        = "hold_job"
	CmdRecordUsage    = "record_usage"
	CmdRecordStep     = "record_step"
	CmdSetSwitches    = "set_switches"
	CmdUpdateJob      = "update_job"
	CmdSetPartition   = "set_partition"
	CmdDelPartition   = "delete_partition"
	CmdRequeueJob     = "requeue_job"
	CmdBatch          = "batch"
)

// CommandTypes lists every command type, in a fixed order.
var CommandTypes = []string{
	CmdSubmitJob, CmdPlaceJob, CmdAckReservation, CmdStartJob, CmdFinishAttempt, CmdFailAttempt,
	CmdRejectJob, CmdKillJob, CmdSetProbeDuties, CmdProbeRestart, CmdSetSettings, CmdRemoveNode,
	CmdReportProgress, CmdResizeJob, CmdPurgeJobs, CmdSetLimits, CmdSetWaitReason, CmdNodeRestarted,
	CmdDrainNode, CmdUndrainNode, CmdPurgeHistory,
	CmdHoldJob, CmdRecordUsage, CmdRecordStep, CmdSetSwitches, CmdUpdateJob,
	CmdSetPartition, CmdDelPartition, CmdRequeueJob, CmdBatch,
}

func knownType(typ string) bool {
	for _, t := range CommandTypes {
		if t == typ {
			return true
		}
	}
	return false
}

// Command is one raft log entry's payload. At is the proposer's clock when it proposed the command:
// the FSM never reads a clock, so every timestamp in the state comes from here.
type Command struct {
	V    int             `json:"v"`
	Type string          `json:"type"`
	At   time.Time       `json:"at"`
	Body json.RawMessage `json:"body"`
	// Index is the raft index the entry was committed at, set by FSM.Apply
	// (0 when a command is applied to a State directly). It is not part of
	// the encoding: raft gives it, the proposer cannot choose it.
	Index uint64 `json:"-"`
}

// Encode builds the log entry for a command of type typ proposed at time at.
func Encode(typ string, at time.Time, body any) ([]byte, error) {
	if !knownType(typ) {
		return nil, fmt.Errorf("encode %q: %w", typ, ErrUnknownCommand)
	}
	if y := at.UTC().Year(); at.IsZero() || y < 1 || y > 9999 {
		return nil, fmt.Errorf("encode %s: %w: at %v is zero or outside years 1-9999", typ, ErrInvalid, at)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s body: %w", typ, err)
	}
	out, err := json.Marshal(Command{V: Version, Type: typ, At: at.UTC(), Body: raw})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", typ, err)
	}
	return out, nil
}

// Decode parses a log entry. It refuses unknown fields, versions and types, trailing data and a
// zero At, and normalises At to UTC so that equal instants give equal state.
func Decode(data []byte) (Command, error) {
	var c Command
	if err := strictUnmarshal(data, &c); err != nil {
		return Command{}, fmt.Errorf("decode command: %w", err)
	}
	if c.V != Version {
		return Command{}, fmt.Errorf("decode command: %w: v=%d, want %d", ErrVersion, c.V, Version)
	}
	if !knownType(c.Type) {
		return Command{}, fmt.Errorf("decode command: %w: %q", ErrUnknownCommand, c.Type)
	}
	if c.At.IsZero() {
		return Command{}, fmt.Errorf("decode %s: %w: at is missing", c.Type, ErrMalformed)
	}
	c.At = c.At.UTC()
	// Every timestamp in the state comes from At and must survive the snapshot's JSON, which
	// only holds years 0-9999; an offset can push an accepted year outside.
	if y := c.At.Year(); y < 1 || y > 9999 {
		return Command{}, fmt.Errorf("decode %s: %w: at year %d outside [1,9999]", c.Type, ErrMalformed, y)
	}
	return c, nil
}

// strictUnmarshal decodes exactly one JSON value into v, refusing unknown fields and trailing data.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: trailing data after the JSON value", ErrMalformed)
	}
	return nil
}

// decodeBody decodes the command's body into v; a missing or null body is malformed.
func decodeBody(c Command, v any) error {
	if len(bytes.TrimSpace(c.Body)) == 0 || string(bytes.TrimSpace(c.Body)) == "null" {
		return fmt.Errorf("%s body: %w: missing", c.Type, ErrMalformed)
	}
	if err := strictUnmarshal(c.Body, v); err != nil {
		return fmt.Errorf("%s body: %w", c.Type, err)
	}
	return nil
}
