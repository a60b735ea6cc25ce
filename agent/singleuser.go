package agent

import (
	"fmt"
	"os"
	"os/user"
	"strconv"

	"github.com/shoal-hpc/shoal/agent/httpapi"
)

// An agent that is not root cannot switch to a job's owner: every job it
// runs, runs as the agent's own user, next to its token file and data dir.
// Such an agent is single-user. Over the local socket it takes changes
// (submit, kill, ...) only from its own uid (httpapi refuses the rest); over TCP a token holder may
// still submit a job owned by anyone, but this node refuses to launch it
// (credentialFor) rather than run it under the wrong identity.

// agentIdentity is who the agent process runs as.
type agentIdentity = httpapi.Identity

func selfIdentity() agentIdentity {
	uid := uint32(os.Geteuid())
	id := agentIdentity{UID: uid, Name: "uid " + strconv.FormatUint(uint64(uid), 10)}
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		id.Name = u.Username
	}
	return id
}

// notRootRefusal is why a non-root agent will not start a process for
// owner's job, or nil when it may.
func notRootRefusal(self agentIdentity, node, owner string) error {
	if self.UID == 0 || owner == self.Name {
		return nil
	}
	return fmt.Errorf("the agent on %s runs as %s, not root: it cannot run %s's job as %s and will not run it as %s", node, self, owner, owner, self.Name)
}
