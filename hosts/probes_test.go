package hosts

import (
	"fmt"
	"testing"

	"fabriclab/hosts/dataplane"
	"fabriclab/scenario"
)

// The smallest probe a scenario accepts is the smallest datagram an
// agent sends (its sequence header).
func TestProbeSizeFloor(t *testing.T) {
	src := "topology: {hosts: 4, hosts_per_leaf: 2}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\nprobes: [{from: 0, to: 1, rate: 1Gbps, size: %dB}]\n"
	if _, err := scenario.ParseOptions("p.yaml", []byte(fmt.Sprintf(src, dataplane.UDPHeaderLen)), scenario.Options{Engine: scenario.EngineHosts}); err != nil {
		t.Errorf("a probe of %d B: %v", dataplane.UDPHeaderLen, err)
	}
	if _, err := scenario.ParseOptions("p.yaml", []byte(fmt.Sprintf(src, dataplane.UDPHeaderLen-1)), scenario.Options{Engine: scenario.EngineHosts}); err == nil {
		t.Errorf("a probe of %d B was accepted", dataplane.UDPHeaderLen-1)
	}
}
