package agent_test

import (
	"errors"

	"github.com/shoal-hpc/shoal/agent/api"
)

func asStatus(err error, se **api.StatusError) bool { return errors.As(err, se) }
