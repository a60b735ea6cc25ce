// Package ui is the dashboard every agent serves at /ui/ on its API port:
// the same TLS listener and the same authority as the API, no second server.
//
// A browser cannot present the cluster token on every request, so it trades
// the token once for a session cookie (POST /ui/login). The cookie is
// Secure, HttpOnly and SameSite=Strict, and carries no server-side state:
// it is an expiry and a nonce signed with a key derived from the cluster
// token, so every agent of the cluster accepts it and rotating the token
// ends every session. SameSite does not separate two agents on one host
// (ports are the same site), so a write made with the cookie must also
// carry the session's CSRF token in the X-Shoal-CSRF header, which only a
// page served to the session can read, and an Origin, when the browser
// sends one, equal to the agent's own.
//
// The pages are plain ES modules and CSS embedded with embed: no build
// step, no CDN, nothing fetched from outside the agent. They take their
// first state from the read endpoints (/v1/nodes, /v1/net, /v1/jobs,
// /v1/probes) and follow /v1/events, re-reading what an event names.
//
//	srv, _ := ui.New(ui.Config{Key: key, Node: "n1"})
//	mux.Handle("/ui/", srv)
//	if sess, err := srv.Authorize(r); ... // in the API's authentication
package ui
