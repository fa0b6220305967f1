package report

import (
	"bytes"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/scenario"
)

func row(size int64, ranks int, cct float64, kind metrics.Collective) metrics.SizeResult {
	r := metrics.SizeResult{}
	r.SizeBytes, r.Ranks, r.CCTS, r.IdealS, r.Complete = size, ranks, cct, cct/2, true
	r.Finish(kind)
	return r
}

// Kinds without a bus bandwidth print "-" in its column and, instead of
// the "Avg bus bandwidth" footer, a line saying what algbw is; an incast's
// footer gives the rate into the target.
func TestTableBusBWOnlyWhereItMeansSomething(t *testing.T) {
	for _, c := range []struct {
		kind   metrics.Collective
		footer string
	}{
		{metrics.Incast, "# incast: no bus bandwidth (busbw -); algbw = bytes per sender / time; into the target: 9.70 GB/s on average (senders × bytes per sender / time)\n"},
		{metrics.FlowList, "# flows: no bus bandwidth (busbw -); algbw = all flows' bytes / time, the aggregate throughput\n"},
		{metrics.Messages, "# messages: no bus bandwidth (busbw -); algbw = all messages' bytes / time, the aggregate throughput\n"},
		{metrics.Uniform, "# uniform: no bus bandwidth (busbw -); algbw = all messages' bytes / time, the aggregate throughput\n"},
		{metrics.AnyToAny, "# any-to-any: no bus bandwidth (busbw -); algbw = payload completed within the duration / duration, all pairs (see the endpoint table)\n"},
	} {
		v := VariantResult{Name: "v", Collective: string(c.kind), Results: []metrics.SizeResult{row(1<<20, 32, 1e-3*3.35, c.kind)}}
		var b bytes.Buffer
		if err := WriteTable(&b, v); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if !strings.HasSuffix(got, c.footer) || strings.Contains(got, "Avg bus bandwidth") {
			t.Errorf("%s: footer\n%s\nwant\n%s", c.kind, got, c.footer)
		}
		if f := strings.Fields(strings.Split(got, "\n")[3]); f[4] != "-" || f[3] != "0.31" {
			t.Errorf("%s: row %v, want algbw 0.31 and busbw -", c.kind, f)
		}
	}
	for _, kind := range []metrics.Collective{metrics.AllReduce, metrics.Permutation, metrics.SendRecv} {
		v := VariantResult{Name: "v", Collective: string(kind), Results: []metrics.SizeResult{row(1<<20, 8, 1e-3, kind)}}
		var b bytes.Buffer
		if err := WriteTable(&b, v); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "# Avg bus bandwidth    : ") || strings.Contains(b.String(), " - ") {
			t.Errorf("%s:\n%s", kind, b.String())
		}
	}
	if HasBusBW("incast") || !HasBusBW("alltoall") || !HasBusBW("") || !IsCollective("gather") || IsCollective("permutation") {
		t.Error("HasBusBW / IsCollective")
	}
}

// The sweep summary and compare print "-" for the bus bandwidth of a kind
// without one.
func TestSweepAndCompareBusBWDash(t *testing.T) {
	r := row(1<<20, 32, 1e-3, metrics.Incast)
	o := Output{Variants: []VariantResult{{Name: "p", Collective: "incast", Sweep: Point{{"switch.pfc.enabled", "true"}}, Results: []metrics.SizeResult{r}}}}
	var b bytes.Buffer
	if err := WriteSweepSummary(&b, o); err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(strings.Split(b.String(), "\n")[3]); f[3] != "-" {
		t.Errorf("sweep row %v", f)
	}
	b.Reset()
	cols := []Column{{Name: "1:a", Kind: "incast", Results: []metrics.SizeResult{r}}, {Name: "2:a", Kind: "incast", Results: []metrics.SizeResult{r}}}
	if err := WriteCompare(&b, cols, "busbw"); err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(strings.Split(b.String(), "\n")[2]); strings.Join(f, " ") != "1MiB - - -" {
		t.Errorf("compare row %v", f)
	}
	b.Reset()
	if err := WriteCompare(&b, cols, "algbw"); err != nil || !strings.Contains(b.String(), "1.05") {
		t.Errorf("compare algbw:\n%s", b.String())
	}
}

func parsed(t *testing.T, text string, sets ...string) *scenario.File {
	t.Helper()
	f, err := scenario.ParseOptions("t.yaml", []byte(text), scenario.Options{Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFabricSummary(t *testing.T) {
	f := parsed(t, `name: t
topology: {kind: leaf-spine, hosts: 32, hosts_per_leaf: 8, oversubscription: 2}
switch: {forwarding: adaptive, ecn: {kmin: 100KB, kmax: 400KB, pmax: 0.1, reference_rate: 0}}
transport: {dcqcn: {preset: tuned-final}}
workload: {kind: alltoall, sizes: {list: [1MiB]}}
variants:
  - name: a
  - name: homa
    transport: {kind: homa}
    switch: {pfc: {enabled: false}}
`)
	fs := FabricsOfFile(f)
	var b bytes.Buffer
	if err := WriteFabric(&b, fs); err != nil {
		t.Fatal(err)
	}
	want := `# fabric: leaf-spine, 32 hosts, 4 leaves of 8, 4 spines (2:1 oversubscribed)
#   links: hosts 400Gbps, fabric 400Gbps, 1us one-way
#   forwarding: adaptive
#   switches: buffer 32MiB; PFC xoff 512KiB, xon 504KiB, headroom auto; ECN kmin 100KB, kmax 400KB, pmax 0.1
#   transport: RoCEv2, DCQCN tuned-final; MTU 4KiB, go-back-n
# fabric of homa: switches: buffer 32MiB; PFC off; ECN kmin 100KB, kmax 400KB, pmax 0.1
# fabric of homa: transport: Homa (receiver-driven); MTU 4KiB, go-back-n
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if fs[0].NICGBps != 50 {
		t.Errorf("NIC %v GB/s", fs[0].NICGBps)
	}
	ft := FabricOf("x", parsed(t, "name: t\ntopology: {kind: fat-tree, k: 4, host_link: {rate: 100Gbps}, fabric_link: {rate: 100Gbps}}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n").Base)
	if ft.Fields[0].Value != "fat-tree k=4, 16 hosts, 8 edge + 8 aggregation + 4 core switches (1:1, non-blocking)" || ft.NICGBps != 12.5 {
		t.Errorf("fat-tree: %+v", ft)
	}
	rail := FabricOf("x", parsed(t, "name: t\ntopology: {kind: rail, servers: 4, gpus_per_server: 8, scale_up: {rate: 3600Gbps}}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n").Base)
	if rail.Fields[0].Value != "rail-optimized, 4 servers × 8 GPUs = 32 hosts, 1 group of 4 servers, 8 rail leaves, 4 spines (1:1, non-blocking)" ||
		!strings.Contains(rail.Fields[1].Value, "scale-up 3600Gbps per GPU") {
		t.Errorf("rail: %+v", rail.Fields[:2])
	}
	// Knobs set beside a preset are named, as the file names them: a
	// summary saying only "DCQCN default" would hide them.
	knobs := FabricOf("x", parsed(t, "name: t\ntopology: {kind: leaf-spine, hosts: 16, hosts_per_leaf: 8}\ntransport: {dcqcn: {preset: default, decrease_interval: 21us, clamp_target_rate: true, first_cnp_cut: next-check}}\nworkload: {kind: alltoall, sizes: {list: [1MiB]}}\n").Base)
	if got, want := knobs.Fields[len(knobs.Fields)-1].Value, "RoCEv2, DCQCN default (decrease_interval 21us, clamp_target_rate true, first_cnp_cut next-check); MTU 4KiB, go-back-n"; got != want {
		t.Errorf("transport with knobs:\n got %q\nwant %q", got, want)
	}
	if _, err := SavedFabrics([]string{"t.yaml"}, "", nil, nil); err == nil {
		t.Error("no text: no error")
	}
	if fs, err := SavedFabrics([]string{"gone/t.yaml", "t.yaml"}, string(f.Source), []string{"switch.forwarding=ecmp"}, nil); err != nil || fs[0].Fields[2].Value != "ecmp" {
		t.Errorf("saved with --set: %v %+v", err, fs)
	}
}

func TestOverrides(t *testing.T) {
	if got := Overrides(Output{Seed: 3}); got != "seed 3; no --set or --sweep" {
		t.Errorf("%q", got)
	}
	o := Output{Seed: 7, Sets: []string{"seed=7", "workload.sizes.list=[1MiB, 2MiB]"}, Sweeps: []string{"workload.qps=1,2"}}
	if got := Overrides(o); got != "seed 7; --set seed=7 --set 'workload.sizes.list=[1MiB, 2MiB]' --sweep workload.qps=1,2" {
		t.Errorf("%q", got)
	}
	if got := RunLine(12, Output{Scenario: "x\x1b[2J", ScenarioFile: "x.yaml", Seed: 1}); got != "# run 12: x\\x1b[2J (x.yaml); seed 1; no --set or --sweep\n" {
		t.Errorf("%q", got)
	}
	// A run on real hosts says so, and at what scale (a lab at 1/1000 of
	// the rates beside a simulated run).
	hosts := Output{Scenario: "h", ScenarioFile: "h.yaml", Seed: 1, Variants: []VariantResult{{Results: []metrics.SizeResult{{Hosts: &metrics.HostsRun{Engine: "hosts", Agents: 4, Scale: 0.001}}}}}}
	if got := RunLine(3, hosts); got != "# run 3: h (h.yaml); seed 1; no --set or --sweep; real hosts (4 agents, scale 0.001)\n" {
		t.Errorf("%q", got)
	}
	if got := OverrideFlags([]string{"name=it's"}, nil); got != `--set 'name=it'\''s'` {
		t.Errorf("%q", got)
	}
}
