package report

import (
	"strings"
	"testing"

	"fabriclab/metrics"
)

func TestWriteEndpointsTable(t *testing.T) {
	r := metrics.SizeResult{}
	r.SizeBytes = 65536
	r.Endpoints = &metrics.Endpoints{Pairs: 2, FullRateGbps: 0.02, MinGbps: 0.01, MeanGbps: 0.015, MaxGbps: 0.02, Spread: 2, Jain: 0.9,
		PerPair: []metrics.EndpointResult{{Client: 0, Server: 6, Completions: 10, Bytes: 655360, Gbps: 0.01, PctFull: 50}, {Client: 0, Server: 7, Gbps: 0.02, PctFull: 100}}}
	r.Checkpoints = []metrics.Checkpoint{
		{TS: 0.5, Endpoints: []metrics.EndpointCount{{Client: 0, Server: 6, Bytes: 625000}, {Client: 0, Server: 7, Bytes: 1250000}}},
		{TS: 0.6, Endpoints: []metrics.EndpointCount{{Client: 0, Server: 6, Bytes: 0}, {Client: 0, Server: 7, Bytes: 125000}}},
	}
	var b strings.Builder
	if err := WriteEndpointsTable(&b, VariantResult{Results: []metrics.SizeResult{r}}); err != nil {
		t.Fatal(err)
	}
	want := `
# endpoints: 64KiB writes, full rate 20.0 Mb/s a pair; Mb/s per checkpoint, over the run and % of full
#  client  server  500ms   end   run  %full
        0       6   10.0   0.0  10.0     50
        0       7   20.0  10.0  20.0    100
# 2 pairs: min 10.0, mean 15.0, max 20.0 Mb/s; spread 2.00, Jain's index 0.900 (end: the writes in flight when the duration ended)
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteEndpointsTable(&b, VariantResult{Results: []metrics.SizeResult{{}}}); err != nil || b.Len() != 0 {
		t.Errorf("a row without endpoints wrote %q", b.String())
	}
}
