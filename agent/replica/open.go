package replica

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// OpenHTTP opens streams with GET BASE/v1/replicate?after=N, BASE being
// base(server) (e.g. "https://10.0.0.1:7947"). client must authenticate as
// an agent (the node certificate over mutual TLS) and have no Timeout: the
// stream lasts as long as the follower follows.
func OpenHTTP(client *http.Client, base func(server string) (string, error)) OpenFunc {
	return func(ctx context.Context, server string, after uint64) (io.ReadCloser, error) {
		b, err := base(server)
		if err != nil {
			return nil, err
		}
		url := strings.TrimSuffix(b, "/") + "/v1/replicate?after=" + strconv.FormatUint(after, 10)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, fmt.Errorf("replicate request: %w", err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", url, err)
		}
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(msg)))
		}
		return resp.Body, nil
	}
}
