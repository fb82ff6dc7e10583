// Package ports gives every env its block of ports (APEX_PORT): stable
// per identity, unique among a repository's live envs, free on the host
// when picked.
package ports

import (
	"fmt"
	"hash/fnv"
	"net"
	"strconv"

	"github.com/git-apex/git-apex/state"
)

// Every env gets a block of Block ports, from APEX_PORT on, between
// firstPort and lastPort: two envs can run dev servers at once. An
// identity's block is stable (it starts from a hash of the identity), no
// two live envs of a repository share one (they are picked under the
// repository lock), and each port was free on the host when the block
// was picked. A removed env's block is free again.
const (
	Block     = 10
	firstPort = 20000
	lastPort  = 39999
)

// Pick returns the first port of a free block for identity, or "" when
// none is free; live are the repository's live envs. The caller holds
// the repository lock.
func Pick(identity string, live []*state.Env) string {
	taken := map[int]bool{}
	for _, e := range live {
		if p, err := strconv.Atoi(e.Metadata[state.PortKey]); err == nil {
			taken[p] = true
		}
	}
	blocks := (lastPort - firstPort + 1) / Block
	h := fnv.New32a()
	h.Write([]byte(identity))
	start := int(h.Sum32() % uint32(blocks))
	for i := range blocks {
		port := firstPort + (start+i)%blocks*Block
		if !taken[port] && blockFree(port) {
			return strconv.Itoa(port)
		}
	}
	return ""
}

// blockFree reports whether every port of the block from port on can be
// listened on now.
func blockFree(port int) bool {
	for p := port; p < port+Block; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}
