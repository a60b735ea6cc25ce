package connlimit

import (
	"net"
	"testing"
	"time"
)

func TestSlots(t *testing.T) {
	t.Parallel()
	s := NewSlots(3, 2)
	steps := []struct {
		take bool // false: give
		src  string
		want bool
	}{
		{true, "a", true},
		{true, "a", true},
		{true, "a", false}, // a's share used up
		{true, "b", true},
		{true, "c", false}, // total used up
		{false, "a", true},
		{true, "", true}, // keyless: total only
		{true, "c", false},
		{false, "", true},
		{true, "c", true},
	}
	for i, st := range steps {
		got := true
		if st.take {
			got = s.Take(st.src)
		} else {
			s.Give(st.src)
		}
		if got != st.want {
			t.Fatalf("step %d: take=%v %q = %v, want %v", i, st.take, st.src, got, st.want)
		}
	}
	if n, srcs := s.Open(); n != 3 || srcs != 3 {
		t.Fatalf("Open() = %d, %d; want 3, 3", n, srcs)
	}
	for _, src := range []string{"a", "b", "c"} {
		s.Give(src)
	}
	if n, srcs := s.Open(); n != 0 || srcs != 0 {
		t.Fatalf("after every give: Open() = %d, %d", n, srcs)
	}
}

// TestListenerClosesOverCap: connections over the per-source cap are
// closed on arrival; closing an admitted one frees its slot.
func TestListenerClosesOverCap(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := NewListener(inner, NewSlots(10, 2), SourceIP)
	refused := make(chan string, 10)
	ln.OnRefuse = func(src string) { refused <- src }
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	if src := <-refused; src != "127.0.0.1" {
		t.Fatalf("refused source %q", src)
	}
	first := <-accepted
	<-accepted
	first.Close()
	c, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("a connection after a slot was freed was not accepted")
	}
	_ = clients
}
