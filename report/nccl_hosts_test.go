package report

import (
	"strings"
	"testing"

	"fabriclab/metrics"
)

// A run on real hosts whose rows all failed before an agent measured
// them has no row with a hosts object: NCCLOptions.OnHosts labels it
// "on real hosts" all the same; without it the rows decide.
func TestNCCLTestsOnHostsWithOnlyFailedRows(t *testing.T) {
	failed := metrics.SizeResult{Completion: metrics.Completion{SizeBytes: 1 << 20}, Outcome: metrics.Outcome{Error: "agent 10.0.0.5:7470: authentication failed"}}
	o := Output{Scenario: "s", Variants: []VariantResult{{Name: "base", Collective: "alltoall", Results: []metrics.SizeResult{failed}}}}
	for _, c := range []struct {
		onHosts bool
		want    string
	}{
		{true, "# fabriclab alltoall_perf: s, variant base (alltoall, on real hosts)\n"},
		{false, "# fabriclab alltoall_perf: s, variant base (alltoall, simulated)\n"},
	} {
		var b strings.Builder
		if err := WriteNCCLTests(&b, o, NCCLOptions{OnHosts: c.onHosts}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.String(), c.want) || !strings.Contains(b.String(), "failed: agent 10.0.0.5:7470") {
			t.Errorf("OnHosts %v:\n%s\nwant it to start with %q", c.onHosts, b.String(), c.want)
		}
	}

	// With ranks (a row that failed after the job was built), the devices
	// are the hosts'.
	failed.Ranks = 2
	o.Variants[0].Results = []metrics.SizeResult{failed}
	var b strings.Builder
	if err := WriteNCCLTests(&b, o, NCCLOptions{OnHosts: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(alltoall, 2 ranks, on real hosts)\n") || strings.Count(b.String(), "[host] fabriclab rank") != 2 {
		t.Errorf("OnHosts with ranks:\n%s", b.String())
	}
}
