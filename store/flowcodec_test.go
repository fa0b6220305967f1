package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"fabriclab/metrics"
	"fabriclab/report"
)

// simFlows makes n flow records the way the simulator does (integer
// picosecond times): an all-to-all's flows in rank order, a quarter of
// them unfinished when interrupted is set.
func simFlows(n int, seed uint64, interrupted bool) []metrics.FlowRecord {
	rng := rand.New(rand.NewPCG(seed, 1))
	ranks := int(math.Ceil(math.Sqrt(float64(n)))) + 1
	recs := make([]metrics.FlowRecord, n)
	const ideal = int64(21_474_836) // 1 MiB at 400 Gb/s + 1 µs, in ps
	for i := range recs {
		src, dst := i/(ranks-1), i%(ranks-1)
		if dst >= src {
			dst++
		}
		st := int64(i%4)*5_000_000 + rng.Int64N(3000)
		r := metrics.FlowRecord{ID: i + 7, Src: src, Dst: dst, SrcRank: src, DstRank: dst, Bytes: 1 << 20, StartS: secs(st), EndS: -1}
		if !interrupted || i%4 != 3 {
			fct := ideal + rng.Int64N(3*ideal)
			r.Done, r.EndS, r.FCTS, r.IdealS = true, secs(st+fct), secs(fct), secs(ideal)
			r.Slowdown = r.FCTS / r.IdealS
		}
		r.ScaleUp = src/8 == dst/8
		recs[i] = r
	}
	return recs
}

func TestFlowCodecRoundTrip(t *testing.T) {
	odd := simFlows(100, 3, false)
	odd[5].FCTS += 1e-15 // not derivable from picoseconds: the chunk keeps float bits
	odd[9].Slowdown = math.NaN()
	cases := map[string][]metrics.FlowRecord{
		"empty":       {},
		"one":         simFlows(1, 1, false),
		"interrupted": simFlows(5000, 2, true),
		"floats":      odd,
		"negative":    {{ID: -3, Src: 2, Dst: 1, StartS: -1e-12, EndS: -1}},
	}
	for name, recs := range cases {
		data, err := encodeFlows(recs)
		if err != nil {
			t.Fatal(name, err)
		}
		got, err := decodeFlows(data, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "floats" {
			if data[0] != flowsFloats || !math.IsNaN(got[9].Slowdown) {
				t.Fatalf("floats: layout %d", data[0])
			}
			got[9].Slowdown, recs[9].Slowdown = 0, 0
		} else if data[0] != flowsPicoseconds {
			t.Errorf("%s: layout %d, want picoseconds", name, data[0])
		}
		if len(recs) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, recs) {
			for i := range recs {
				if got[i] != recs[i] {
					t.Fatalf("%s: record %d:\n got %+v\nwant %+v", name, i, got[i], recs[i])
				}
			}
			t.Fatalf("%s: differs", name)
		}
	}
}

// A damaged chunk is an error, never a panic or a wrong record count.
// A chunk claiming more records than it holds is refused before anything is
// allocated for them.
func TestDecodeFlowsRefusesHugeCounts(t *testing.T) {
	for _, n := range []uint64{flowChunk + 1, 1 << 24, flowChunk} {
		var zb bytes.Buffer
		zw, _ := flate.NewWriter(&zb, flate.BestSpeed)
		zw.Write([]byte{0})
		zw.Close()
		chunk := binary.AppendUvarint([]byte{flowsPicoseconds}, n)
		chunk = append(chunk, zb.Bytes()...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := decodeFlows(chunk, nil); err == nil {
			t.Fatalf("count %d accepted", n)
		}
		runtime.ReadMemStats(&after)
		if b := after.TotalAlloc - before.TotalAlloc; b > 1<<20 {
			t.Errorf("count %d: %d bytes allocated for a 12-byte chunk", n, b)
		}
	}
}

func FuzzDecodeFlows(f *testing.F) {
	good, _ := encodeFlows(simFlows(50, 1, true))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{1, 200, 1})
	f.Add([]byte{1, 0x80, 0x80, 0x80, 0x08, 0x62, 0x00, 0x04, 0x00, 0x00, 0xff, 0xff}) // a huge count, no data
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := decodeFlows(data, nil)
		if err != nil && len(recs) != 0 {
			t.Fatalf("error with %d records", len(recs))
		}
	})
}

// TestMillionFlowRecords: a result with a million flow records saves and
// reads back exactly, and the database stays small (README "Results
// store"). The time is logged, not asserted (shared machines are noisy;
// BenchmarkSaveMillionFlows measures it).
func TestMillionFlowRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const n = 1 << 20
	recs := simFlows(n, 9, false)
	backends(t, func(t *testing.T, dsn string) {
		s := openT(t, dsn)
		r := metrics.SizeResult{Completion: metrics.Completion{SizeBytes: 1 << 30, Ranks: 1025}, Outcome: metrics.Outcome{Complete: true}, Records: recs}
		o := report.Output{Scenario: "million", Variants: []report.VariantResult{{Name: "v", Results: []metrics.SizeResult{r}}}}
		t0 := time.Now()
		id := save(t, s, o, StatusDone)
		saved := time.Since(t0)
		t0 = time.Now()
		got, _, err := s.Run(id)
		if err != nil {
			t.Fatal(err)
		}
		read := time.Since(t0)
		if g := got.Variants[0].Results[0].Records; len(g) != n || !reflect.DeepEqual(g, recs) {
			t.Fatalf("read back %d records, differ", len(g))
		}
		var stored int64
		if err := s.db.QueryRow(`SELECT SUM(LENGTH(data)) FROM flow_records`).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		size := stored
		if s.d == sqliteDialect {
			s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
			fi, err := os.Stat(filepath.Join(filepath.Dir(s.name), "runs.db"))
			if err != nil {
				t.Fatal(err)
			}
			size = fi.Size()
		}
		t.Logf("%d flow records: saved in %v, read in %v, %.1f MB stored (%.2f B/record), database %.1f MB",
			n, saved.Round(time.Millisecond), read.Round(time.Millisecond), float64(stored)/1e6, float64(stored)/n, float64(size)/1e6)
		if per := float64(stored) / n; per > 12 {
			t.Errorf("%.1f bytes per flow record stored, want ≤ 12", per)
		}
		if size > 30<<20 {
			t.Errorf("database is %d bytes", size)
		}
	})
}

func BenchmarkSaveMillionFlows(b *testing.B) {
	recs := simFlows(1<<20, 9, false)
	s, err := Open(filepath.Join(b.TempDir(), "runs.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	o := []report.VariantResult{{Name: "v"}}
	b.ResetTimer()
	for range b.N {
		id, err := s.BeginRun(Meta{Name: "million"}, o)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.AddResult(id, 0, 0, metrics.SizeResult{Records: recs}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/run")
}
