package testbin

import (
	"net"
	"strconv"
	"testing"
)

// FreeAddr hands out distinct ports, below the ephemeral range where the
// kernel has one, that can be listened on.
func TestFreeAddr(t *testing.T) {
	lo := ephemeralLow()
	seen := map[string]bool{}
	for range 100 {
		addr := FreeAddr(t)
		if seen[addr] {
			t.Fatalf("%s handed out twice", addr)
		}
		seen[addr] = true
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		if port, _ := strconv.Atoi(p); lo > 20000 && (port < 10000 || port >= lo) {
			t.Errorf("port %d outside [10000, %d)", port, lo)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s is not free: %v", addr, err)
		}
		l.Close()
	}
}
