package report

import (
	"fmt"
	"io"
	"strings"

	"fabriclab/units"
)

// WriteProbesTable writes, for every row of v from real hosts with UDP
// probes, each probe: what was sent and received, loss, reordering,
// duplicates and the receiver's one-way jitter.
func WriteProbesTable(w io.Writer, v VariantResult) error {
	var b strings.Builder
	for _, r := range v.Results {
		if r.Hosts == nil || len(r.Hosts.Probes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n# UDP probes (%s row): paced datagrams with sequence numbers; n/a: that end's agent reported nothing\n", units.Size(r.SizeBytes))
		rows := [][]string{{"from", "to", "rate", "size", "sent", "received", "lost", "lost%", "reordered", "dup", "late", "jitter", "send-err"}}
		count := func(n int64) string {
			if n < 0 {
				return "n/a"
			}
			return fmt.Sprint(n)
		}
		for _, p := range r.Hosts.Probes {
			rx := func(n int64) string {
				if p.Received < 0 {
					return "n/a"
				}
				return fmt.Sprint(n)
			}
			loss, jitter := "n/a", "n/a"
			if p.Received >= 0 && p.Sent >= 0 {
				loss = fmt.Sprintf("%.3f", p.LossPct)
			}
			if p.Received >= 0 {
				jitter = units.Duration(p.JitterS * 1e12).String()
			}
			rows = append(rows, []string{fmt.Sprint(p.From), fmt.Sprint(p.To), units.Rate(p.RateGbps * 1e9).String(), units.Size(p.SizeBytes).String(),
				count(p.Sent), count(p.Received), rx(p.Lost), loss, rx(p.Reordered), rx(p.Duplicates), rx(p.Late), jitter, count(p.SendErrors)})
		}
		alignRows(&b, rows, 1, nil)
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(w, b.String())
	return err
}
