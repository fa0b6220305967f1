package report

import (
	"strings"
	"testing"

	"fabriclab/metrics"
)

func TestWriteProbesTable(t *testing.T) {
	r := metrics.SizeResult{}
	r.SizeBytes = 1 << 20
	r.Hosts = &metrics.HostsRun{Engine: "hosts", Probes: []metrics.Probe{
		{From: 0, To: 11, RateGbps: 0.02, SizeBytes: 1000, Sent: 2500, SentBytes: 2500000, Received: 2400, ReceivedBytes: 2400000,
			Lost: 100, LossPct: 4, Reordered: 3, Duplicates: 1, JitterS: 0.000125},
		{From: 3, To: 1, RateGbps: 1, SizeBytes: 1024, Sent: 10, SentBytes: 10240, SendErrors: 2, Received: -1},
	}}
	var b strings.Builder
	if err := WriteProbesTable(&b, VariantResult{Results: []metrics.SizeResult{r}}); err != nil {
		t.Fatal(err)
	}
	want := `
# UDP probes (1MiB row): paced datagrams with sequence numbers; n/a: that end's agent reported nothing
#  from  to    rate  size  sent  received  lost  lost%  reordered  dup  late  jitter  send-err
      0  11  20Mbps   1KB  2500      2400   100  4.000          3    1     0   125us         0
      3   1   1Gbps  1KiB    10       n/a   n/a    n/a        n/a  n/a   n/a     n/a         2
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteProbesTable(&b, VariantResult{Results: []metrics.SizeResult{{}}}); err != nil || b.Len() != 0 {
		t.Errorf("a row without probes wrote %q", b.String())
	}
}
