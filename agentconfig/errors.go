package agentconfig

import "fmt"

// Error is a setting that is wrong, with where it came from: a config
// file's line ("shoal.hcl:3: bind") or a flag ("--bind").
type Error struct {
	// Where is "FILE:LINE: KEY", "FILE" or "--FLAG".
	Where string
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %v", e.Where, e.Err) }
func (e *Error) Unwrap() error { return e.Err }
