// Package freeport picks loopback TCP ports for servers that must be told
// their port before they bind it: a cluster's route listeners, whose
// addresses every node names in its routes, and a container's published
// port.
package freeport

import (
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Take picks n distinct loopback ports, each checked free by binding it
// (then released for the server to bind). They come from below the
// kernel's ephemeral range when there is room: every process's outgoing
// connections and :0 listeners take their ports from that range, so a
// port released here is not handed to another process (or another test
// of this one) before the server binds it, nor the reverse. Otherwise
// they come from :0.
func Take(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	lo, hi := belowEphemeral()
	for range n {
		var ln net.Listener
		var err error
		for try := 0; try < 64 && lo < hi; try++ {
			if ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(lo+mrand.IntN(hi-lo))); err == nil {
				break
			}
		}
		if ln == nil {
			if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
				return nil, fmt.Errorf("freeport: reserve a loopback port: %w", err)
			}
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// belowEphemeral returns [lo, hi): ports from 10000 up to the start of
// /proc/sys/net/ipv4/ip_local_port_range, or an empty range when it is
// unknown or leaves no room.
func belowEphemeral() (lo, hi int) {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return 0, 0
	}
	start, err := strconv.Atoi(f[0])
	if err != nil || start <= 11000 {
		return 0, 0
	}
	return 10000, start
}
