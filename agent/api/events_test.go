package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestEventsSilentStreamEnds: a stream that goes silent, keepalives
// included (an agent whose host vanished), ends with ErrSilentStream
// instead of waiting forever; keepalives keep a stream alive.
func TestEventsSilentStreamEnds(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for range 8 { // keepalives, each well within the silence allowed, longer than it in all
			fmt.Fprint(w, ": keepalive\n\n")
			fl.Flush()
			time.Sleep(200 * time.Millisecond) // the server's pace, not a synchronisation
		}
		fmt.Fprint(w, "id: 4\nevent: job\ndata: {\"index\":4,\"topic\":\"job\",\"type\":\"submitted\",\"key\":\"1\",\"payload\":null}\n\n")
		fl.Flush()
		select { // then nothing
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []uint64
	err := NewClient(srv.URL, "").Events(ctx, EventsQuery{Silence: time.Second}, func(e Event) error {
		got = append(got, e.Index)
		return nil
	})
	if !errors.Is(err, ErrSilentStream) || len(got) != 1 || got[0] != 4 {
		t.Fatalf("Events = %v after events %v; want ErrSilentStream after the event at 4", err, got)
	}
}
