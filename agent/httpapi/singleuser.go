package httpapi

import (
	"fmt"
	"net/http"
)

// Identity is who an agent process runs as. An agent that is not root
// cannot switch to a job's owner: every job it runs, runs as its own user,
// next to its token file and data dir. Such an agent is single-user: over
// the local socket it takes changes (submit, kill, ...) only from its own
// uid.
type Identity struct {
	UID  uint32
	Name string
}

func (id Identity) String() string { return fmt.Sprintf("%s (uid %d)", id.Name, id.UID) }

// singleUserRefusal says why a request from a local peer of uid must be
// refused by an agent running as self, or "" when it may proceed: reads
// are open to every local user, changes only to the agent's own.
func singleUserRefusal(self Identity, uid uint32, method string) string {
	if self.UID == 0 || uid == self.UID || method == http.MethodGet || method == http.MethodHead {
		return ""
	}
	return fmt.Sprintf("this agent runs as %s, not root, so every job it starts runs as that user: it takes requests that change anything only from %s. Ask an administrator to run the agent as root, or run your own agent", self, self.Name)
}
