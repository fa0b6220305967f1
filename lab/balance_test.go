package lab

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"fabriclab/scenario"
)

// Jain's index of flow rates, link balance per tier and paused time on a
// closed form: one switch, four hosts; flows 0→2 and 1→2 share host 2's
// link (half rate each), 3→0 runs alone (full rate): Jain = (½+½+1)² /
// (3·(¼+¼+1)) = 8/9. Hosts 0, 1 and 3 send the same bytes, host 2 only
// ACKs. With PFC the shared link pauses its senders; without, nothing is
// paused.
func TestFairnessAndBalance(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flows.txt"), []byte("0 2 8MiB\n1 2 8MiB\n3 0 8MiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, pfc := range []bool{true, false} {
		src := "topology: {kind: leaf-spine, hosts: 4, hosts_per_leaf: 4, spines: 0, oversubscription: 1}\n" +
			"switch: {pfc: {enabled: " + map[bool]string{true: "true", false: "false"}[pfc] + "}}\n" +
			"transport: {dcqcn: {preset: \"off\"}}\nnic: {max_inflight: 1MiB}\nworkload: {kind: flows, file: flows.txt}\n"
		f, err := scenario.Parse(filepath.Join(dir, "s.yaml"), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(context.Background(), f.Jobs()[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.JainFlowRates-8.0/9) > 0.01 {
			t.Errorf("pfc %v: Jain %.4f, want 8/9", pfc, r.JainFlowRates)
		}
		b := r.Balance
		if b == nil || len(b.Tiers) == 0 {
			t.Fatalf("pfc %v: balance %+v", pfc, b)
		}
		for _, tl := range b.Tiers {
			if tl.MeanGbps == 0 && tl.MMR == 0 {
				continue // the single leaf's spines carry nothing
			}
			if tl.MMR < 1 || tl.Links == 0 || tl.MaxGbps < tl.MeanGbps {
				t.Errorf("pfc %v: tier %+v", pfc, tl)
			}
			if tl.Tier == "host" && tl.Links != 4 {
				t.Errorf("pfc %v: %d host links", pfc, tl.Links)
			}
		}
		if pfc && (b.PFCPausedShare <= 0 || b.PFCPausedMax <= b.PFCPausedShare) {
			t.Errorf("pfc: paused share %v, max %v", b.PFCPausedShare, b.PFCPausedMax)
		}
		if !pfc && (b.PFCPausedShare != 0 || b.PFCPausedMax != 0) {
			t.Errorf("no pfc: paused share %v, max %v", b.PFCPausedShare, b.PFCPausedMax)
		}
	}
}
