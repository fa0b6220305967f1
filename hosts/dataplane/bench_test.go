package dataplane

import (
	"fmt"
	"testing"
	"time"
)

// What one plane pushes on loopback: run with
//
//	go test -run '^$' -bench . ./hosts/dataplane
//
// One op of the TCP benchmarks is one stream write acked (1 MiB for
// throughput, 4 KiB for the write rate); of the UDP one, one datagram sent.

func BenchmarkTCPStreams(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) { benchStreams(b, n, 1<<20, 4) })
	}
	b.Run("conns=1/size=4KiB", func(b *testing.B) { benchStreams(b, 1, 4<<10, 16) })
}

func benchStreams(b *testing.B, nconn int, size int64, depth int) {
	snd, _ := newPair(b, Config{Allowed: onlyLoopback})
	var conns []Conn
	var streams []Stream
	for i := range nconn {
		conns = append(conns, Conn{ID: i, From: i % 2, To: 10 + i%2})
		streams = append(streams, Stream{Conn: i, Size: size, Depth: depth})
	}
	dial(b, snd, conns...)
	b.SetBytes(size)
	b.ResetTimer()
	start := time.Now()
	if err := snd.StartStreams(start, start.Add(time.Hour), streams); err != nil {
		b.Fatal(err)
	}
	done := int64(0)
	for done < int64(b.N) {
		time.Sleep(2 * time.Millisecond)
		done = 0
		snd.mu.Lock()
		for _, c := range snd.clients {
			done += c.completions.Load()
		}
		snd.mu.Unlock()
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(done*size)*8/el.Seconds()/1e9, "Gb/s")
	b.ReportMetric(float64(done)/el.Seconds(), "writes/s")
}

func BenchmarkUDP(b *testing.B) {
	const size = 1200
	snd, rcv := newPair(b, Config{Allowed: onlyLoopback})
	b.ResetTimer()
	start := time.Now()
	// A rate no host reaches: the sender goes as fast as it can.
	if err := snd.StartUDP(start, start.Add(time.Hour), []UDPFlow{{ID: 1, From: 0, To: 10, Rate: 1e12, Size: size}}); err != nil {
		b.Fatal(err)
	}
	var s UDPStats
	for s.Sent < int64(b.N) {
		time.Sleep(2 * time.Millisecond)
		s = udpStats(snd.Snapshot(), 1, SideSender)
	}
	el := time.Since(start)
	b.StopTimer()
	r := udpStats(rcv.Snapshot(), 1, SideReceiver)
	b.ReportMetric(float64(s.Sent)/el.Seconds(), "sent/s")
	b.ReportMetric(float64(r.Received)/el.Seconds(), "received/s")
	b.ReportMetric(float64(r.Received)*size*8/el.Seconds()/1e9, "rxGb/s")
}
