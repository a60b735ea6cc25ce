package httpapi

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/user"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The local socket: every local user may connect (mode 0666), and the
// kernel tells the agent who did (SO_PEERCRED), so a request over it needs
// no token and may act only as its sender (root as anyone). Over TCP the
// cluster token still authenticates, and token holders are administrators.

// localPeer is who sent a request over the local socket; err is set when
// the kernel would not say, and then the request is refused.
type localPeer struct {
	uid uint32
	err error
}

type localPeerKey struct{}

// ConnContext marks connections accepted on the local socket with their
// sender's uid (http.Server.ConnContext). TCP connections carry nothing and
// keep the token check.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	uc, ok := unwrapConn(c).(*net.UnixConn)
	if !ok {
		return ctx
	}
	return context.WithValue(ctx, localPeerKey{}, peerCred(uc))
}

func peerCred(uc *net.UnixConn) localPeer {
	raw, err := uc.SyscallConn()
	if err != nil {
		return localPeer{err: err}
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return localPeer{err: err}
	}
	if credErr != nil {
		return localPeer{err: fmt.Errorf("SO_PEERCRED: %w", credErr)}
	}
	return localPeer{uid: cred.Uid}
}

// peerOf says whether r came over the local socket, and from whom.
func peerOf(r *http.Request) (localPeer, bool) {
	p, ok := r.Context().Value(localPeerKey{}).(localPeer)
	return p, ok
}

// actAs returns the user a request may act as when it claims to act as
// claimed. Over TCP the token holder is an administrator: the claim stands.
// Over the local socket an empty claim is the sender, root may claim
// anyone, and anyone else only themselves. An error is a refusal (403).
func actAs(r *http.Request, claimed string) (string, error) {
	p, local := peerOf(r)
	if !local {
		return claimed, nil
	}
	uid := strconv.FormatUint(uint64(p.uid), 10)
	u, err := user.LookupId(uid)
	if err != nil {
		if p.uid == 0 {
			u = &user.User{Uid: "0", Username: "root"}
		} else {
			return "", fmt.Errorf("you are uid %s, which has no user name on this node", uid)
		}
	}
	if claimed == "" || claimed == u.Username || p.uid == 0 {
		return cmp.Or(claimed, u.Username), nil
	}
	if o, err := user.Lookup(claimed); err == nil && o.Uid == uid {
		return claimed, nil // another name of the same uid
	}
	return "", fmt.Errorf("you are %s (uid %s); only root may act as %s", u.Username, uid, claimed)
}

// privileged reports whether r may see everything: over TCP (token
// holders are administrators) or from root over the local socket.
func privileged(r *http.Request) bool {
	p, local := peerOf(r)
	return !local || p.uid == 0
}

// mayReadEnv reports whether r may see the environment of owner's job: a
// job's --env often carries credentials, so over the local socket only its
// owner and root see the values (like Slurm, whose squeue shows others'
// jobs but not their environment).
func mayReadEnv(r *http.Request, owner string) bool {
	if privileged(r) {
		return true
	}
	u, err := actAs(r, "")
	return err == nil && u == owner
}

// mayReadOutput reports whether r may read the output of owner's job: a
// job prints what it likes (its environment, tokens of its own, data),
// so over the local socket only its owner and root read it, as Slurm's
// output files follow their permissions; a site may publish it
// (Config.PublishOutput).
func mayReadOutput(r *http.Request, owner string) bool { return mayReadEnv(r, owner) }

// hiddenEnv keeps the names of a job's environment variables and hides
// their values.
func hiddenEnv(env []string) []string {
	if env == nil {
		return nil
	}
	out := make([]string, len(env))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		out[i] = k + "=(hidden)"
	}
	return out
}
