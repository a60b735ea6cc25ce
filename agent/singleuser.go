package agent

import (
	"fmt"
	"net/http"
	"os"
	"os/user"
	"strconv"
)

// An agent that is not root cannot switch to a job's owner: every job it
// runs, runs as the agent's own user, next to its token file and data dir.
// Such an agent is single-user. Over the local socket it takes changes
// (submit, kill, ...) only from its own uid; over TCP a token holder may
// still submit a job owned by anyone, but this node refuses to launch it
// (credentialFor) rather than run it under the wrong identity.

// agentIdentity is who the agent process runs as.
type agentIdentity struct {
	uid  uint32
	name string
}

func selfIdentity() agentIdentity {
	uid := uint32(os.Geteuid())
	id := agentIdentity{uid: uid, name: "uid " + strconv.FormatUint(uint64(uid), 10)}
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		id.name = u.Username
	}
	return id
}

func (id agentIdentity) String() string { return fmt.Sprintf("%s (uid %d)", id.name, id.uid) }

// singleUserRefusal says why a request from a local peer of uid must be
// refused by an agent running as self, or "" when it may proceed: reads
// are open to every local user, changes only to the agent's own.
func singleUserRefusal(self agentIdentity, uid uint32, method string) string {
	if self.uid == 0 || uid == self.uid || method == http.MethodGet || method == http.MethodHead {
		return ""
	}
	return fmt.Sprintf("this agent runs as %s, not root, so every job it starts runs as that user: it takes requests that change anything only from %s. Ask an administrator to run the agent as root, or run your own agent", self, self.name)
}

// notRootRefusal is why a non-root agent will not start a process for
// owner's job, or nil when it may.
func notRootRefusal(self agentIdentity, node, owner string) error {
	if self.uid == 0 || owner == self.name {
		return nil
	}
	return fmt.Errorf("the agent on %s runs as %s, not root: it cannot run %s's job as %s and will not run it as %s", node, self, owner, owner, self.name)
}
