package report

import (
	"fmt"
	"io"
	"strings"

	"fabriclab/metrics"
	"fabriclab/units"
)

// WriteSlowdownTable writes, for each row of a variant that grouped its
// messages by size (kind messages, uniform, flows), the slowdown
// distribution per size bucket, after a line saying what load was offered
// and carried (kind messages). Without buckets it writes nothing.
//
//	# slowdown by message size, 1.0MiB row over Homa: w5, 5210 messages; load offered 0.80 of the link (7.7 Gb/s per host), carried 7.6 Gb/s per host, drained 1.2 ms after the window: carried
//	#        size  count   mean    p50    p99  p99.9     max
//	#         (B)
//	   1442–1442    512   1.04   1.01   1.71   2.10    2.10
func WriteSlowdownTable(w io.Writer, v VariantResult) error {
	var b strings.Builder
	for _, r := range sortedResults(v.Results) {
		row := ""
		if len(v.Results) > 1 {
			row = fmt.Sprintf(", %s row", units.Size(r.SizeBytes))
		}
		over := ""
		if r.Transport != "" {
			over = " over " + r.Transport
		}
		if len(r.Jobs) == 0 {
			slowdownTable(&b, row+over, r.SlowdownBySize, r.Load)
			continue
		}
		for _, j := range r.Jobs { // several jobs: each one's own
			slowdownTable(&b, row+", job "+j.Name+over, j.SlowdownBySize, j.Load)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// slowdownTable writes one slowdown-by-size table (nothing without
// buckets); what names the row or job.
func slowdownTable(b *strings.Builder, what string, buckets []metrics.SizeBucket, ld *metrics.MessageLoad) {
	if len(buckets) == 0 {
		return
	}
	b.WriteString("# slowdown by message size" + what)
	if ld != nil {
		verdict := "carried"
		if !ld.Carried {
			verdict = "NOT carried"
		}
		fmt.Fprintf(b, ": %s, %d messages; load offered %.2f of the link (%.2f Gb/s per host), throughput %.2f Gb/s per host, drained %s ms after the %s ms window: %s",
			ld.SizeDist, ld.Messages, ld.OfferedLoad, ld.OfferedGbps, ld.ThroughputGbps, ms(ld.DrainS), ms(ld.DurationS), verdict)
		if ld.RTT != nil {
			fmt.Fprintf(b, "; %d RPCs, RTT p50 %s us, p99 %s us, max %s us", ld.RPCs, usec(ld.RTT.P50), usec(ld.RTT.P99), usec(ld.RTT.Max))
		}
	}
	b.WriteString("\n")
	rows := [][]string{{"size", "count", "mean", "p50", "p99", "p99.9", "max"}, {"(B)", "", "", "", "", "", ""}}
	for _, k := range buckets {
		sd := k.Slowdown
		size := k.Range()
		rows = append(rows, []string{size, fmt.Sprint(sd.Count), f2(sd.Mean), f2(sd.P50), f2(sd.P99), f2(sd.P999), f2(sd.Max)})
	}
	alignRows(b, rows, 2, nil)
	rttTable(b, what, buckets)
}

// rttTable writes the RPCs' round trip by request size (nothing without
// RPCs): the latency benchmark the Homa paper draws, request and response
// of the same length with response_size: same.
//
//	# RTT by request size: us from the request sent to the response received
//	#       size   rpcs     p50     p99     max
//	#        (B)
//	        1000    812    4.33    4.71    5.02
func rttTable(b *strings.Builder, what string, buckets []metrics.SizeBucket) {
	rows := [][]string{{"size", "rpcs", "p50", "p99", "max"}, {"(B)", "", "(us)", "(us)", "(us)"}}
	for _, k := range buckets {
		if k.RTT == nil {
			continue
		}
		size := k.Range()
		rows = append(rows, []string{size, fmt.Sprint(k.RTT.Count), usec(k.RTT.P50), usec(k.RTT.P99), usec(k.RTT.Max)})
	}
	if len(rows) == 2 {
		return
	}
	b.WriteString("# RTT by request size" + what + ": from the request sent to the response received\n")
	alignRows(b, rows, 2, nil)
}

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }

func ms(s float64) string { return fmt.Sprintf("%.2f", s*1e3) }
