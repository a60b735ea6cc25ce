package agentconfig

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/shoal-hpc/shoal/agent"
)

// Agent is what `shoal agent` runs with: the agent's Config and the
// settings of the command around it. Start from Default.
type Agent struct {
	Config agent.Config
	// TokenFile holds the cluster token; the command reads it.
	TokenFile string
	// LogLevel and LogJSON shape the agent's log. Default info, text.
	LogLevel slog.Level
	LogJSON  bool
	// JoinTimeout: give up if no join address answers this soon. 0 (the
	// default) keeps trying.
	JoinTimeout time.Duration

	// applied records every value set, in order, with where it came from,
	// so Validate can name the setting behind a bound that Config.Validate
	// finds broken.
	applied []applied
}

type applied struct {
	key   Key
	val   Value
	where string
}

// Default returns the agent's defaults, the same as the flags'.
func Default() Agent {
	return Agent{Config: agent.DefaultConfig(), LogLevel: slog.LevelInfo}
}

// SetFlag sets the key of flag --name, as the command line gives it.
func (a *Agent) SetFlag(name string, v Value) error {
	k, ok := Lookup(name)
	if !ok {
		return &Error{Where: "--" + name, Err: errors.New("no such setting")}
	}
	return a.set(k, v, "--"+k.Flag)
}

func (a *Agent) set(k Key, v Value, where string) error {
	if err := k.set(a, v); err != nil {
		return &Error{Where: where, Err: err}
	}
	a.applied = append(a.applied, applied{k, v, where})
	return nil
}

// ApplyFile sets every key of f, in the file's order. The first bad value
// is returned as FILE:LINE: KEY: what is wrong.
func (a *Agent) ApplyFile(f *File) error {
	for _, e := range f.entries {
		if err := a.set(e.key, e.val, fmt.Sprintf("%s:%d: %s", f.Path, e.line, e.key.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the whole configuration, once every source is applied
// and the command has filled in the name and the token. A bound broken by
// one setting alone is reported at that setting (its line or flag); one
// broken only by several together (two equal ports) names the sources.
func (a *Agent) Validate() error {
	if a.Config.DataDir == "" {
		return errors.New("no data dir: set data_dir in the config file or pass --data-dir DIR")
	}
	if a.TokenFile == "" && a.Config.Token == "" {
		return errors.New("no token file: set token_file in the config file or pass --token-file FILE (make one with 'shoal keygen > token')")
	}
	err := a.Config.Validate()
	if err == nil {
		return nil
	}
	for _, ap := range a.applied {
		alone := Default()
		alone.Config.Name, alone.Config.DataDir, alone.Config.Token = "n", "d", "t"
		if ap.key.set(&alone, ap.val) == nil {
			if aerr := alone.Config.Validate(); aerr != nil {
				return &Error{Where: ap.where, Err: aerr}
			}
		}
	}
	return err
}

// Where names the source of the last value of the key of flag name: its
// file line or flag, or "" when it is the default. The command uses it to
// place errors it finds later, such as an unreadable token file.
func (a *Agent) Where(name string) string {
	for i := len(a.applied) - 1; i >= 0; i-- {
		if a.applied[i].key.Flag == name {
			return a.applied[i].where
		}
	}
	return ""
}
