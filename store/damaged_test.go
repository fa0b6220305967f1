package store

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"fabriclab/metrics"
	"fabriclab/store/pgtest"
)

// marker is put into damaged values: no error may echo it.
const marker = "SECRETMARKER"

// oneLineErr fails unless err is a one-line error that does not echo
// marker.
func oneLineErr(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, marker) || len(msg) > 400 {
		t.Errorf("%s: error is not one short line without the value: %q", what, msg)
	}
}

// damagedRun saves testOutput, then runs the statements (damage) on the
// database, and returns the store and the run id.
func damagedRun(t *testing.T, dsn string, stmts ...string) (*Store, int64) {
	t.Helper()
	s := openT(t, dsn)
	id := save(t, s, testOutput(), StatusDone)
	for _, q := range stmts {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return s, id
}

// mustBeDamaged checks that every reader of run id fails with a one-line
// "damaged" error (and never panics).
func mustBeDamaged(t *testing.T, s *Store, id int64, readers ...string) {
	t.Helper()
	if len(readers) == 0 {
		readers = []string{"runs", "meta", "run"}
	}
	for _, r := range readers {
		var err error
		switch r {
		case "runs":
			_, err = s.Runs(Filter{})
		case "meta":
			_, err = s.Meta(id)
		case "run":
			_, _, err = s.Run(id)
		}
		if err == nil {
			t.Errorf("%s: a damaged database read without an error", r)
			continue
		}
		oneLineErr(t, r, err)
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "is damaged") {
			t.Errorf("%s: %v, want a damaged error", r, err)
		}
	}
}

// TestDamagedSchemaVersion: defect 7, a schema_version of −1 panicked
// (index out of range in migrate); any value this build could not have
// written is a one-line error, on Open and on OpenReadOnly.
func TestDamagedSchemaVersion(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		sqlite := !IsPostgres(dsn)
		for _, c := range []struct {
			name   string
			stmts  []string
			sqlite bool // values PostgreSQL's column types refuse
		}{
			{name: "negative", stmts: []string{`UPDATE schema_version SET version = -1`}},
			{name: "very negative", stmts: []string{`UPDATE schema_version SET version = -2147483648`}},
			{name: "two rows", stmts: []string{`INSERT INTO schema_version (version) VALUES (1)`}},
			{name: "text", stmts: []string{`UPDATE schema_version SET version = '` + marker + `'`}, sqlite: true},
			{name: "real", stmts: []string{`UPDATE schema_version SET version = 2.5`}, sqlite: true},
			{name: "blob", stmts: []string{`UPDATE schema_version SET version = x'00ff'`}, sqlite: true},
			{name: "huge", stmts: []string{`UPDATE schema_version SET version = 9223372036854775807`}, sqlite: true},
		} {
			if c.sqlite && !sqlite {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				dsn := freshDSN(t, sqlite)
				s, _ := damagedRun(t, dsn, c.stmts...)
				s.Close()
				for _, open := range []struct {
					name string
					fn   func(string) (*Store, error)
				}{{"Open", Open}, {"OpenReadOnly", OpenReadOnly}} {
					s, err := open.fn(dsn)
					if err == nil {
						s.Close()
						if c.name == "huge" {
							t.Errorf("%s: schema %s accepted", open.name, c.name)
						} else {
							t.Errorf("%s: damaged schema_version (%s) accepted", open.name, c.name)
						}
						continue
					}
					oneLineErr(t, open.name, err)
					if c.name == "huge" {
						if !strings.Contains(err.Error(), "this fabriclab knows up to") {
							t.Errorf("%s: %v", open.name, err)
						}
					} else if !errors.Is(err, ErrDamaged) {
						t.Errorf("%s: %v, want a damaged error", open.name, err)
					}
				}
			})
		}
	})
}

// TestDamagedRows: defect 7, every value read from the runs, variants,
// results and flow_records rows is checked; a value this build could not
// have written (or cannot decode) is a one-line "damaged" error that does
// not echo the value, never a panic and never silently dropped.
func TestDamagedRows(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		sqlite := !IsPostgres(dsn)
		cases := []struct {
			name    string
			stmt    string
			sqlite  bool     // a value PostgreSQL's column types refuse
			readers []string // default: runs, meta and run
		}{
			{name: "unknown status", stmt: `UPDATE runs SET status = '` + marker + `'`},
			{name: "empty status", stmt: `UPDATE runs SET status = ''`},
			{name: "unknown engine", stmt: `UPDATE runs SET engine = '` + marker + `'`},
			{name: "negative pid", stmt: `UPDATE runs SET pid = -5`},
			{name: "huge pid", stmt: `UPDATE runs SET pid = 4294967297`},
			{name: "text seed", stmt: `UPDATE runs SET seed = '` + marker + `'`, sqlite: true},
			{name: "real seed", stmt: `UPDATE runs SET seed = 1.5`, sqlite: true},
			{name: "sets not JSON", stmt: `UPDATE runs SET sets = '` + marker + `'`},
			{name: "sets not a list", stmt: `UPDATE runs SET sets = '{"` + marker + `": 1}'`},
			{name: "sets of numbers", stmt: `UPDATE runs SET sets = '[1, 2]'`},
			{name: "sweeps not JSON", stmt: `UPDATE runs SET sweeps = '["` + marker + `"'`},
			{name: "name is a blob", stmt: `UPDATE runs SET name = x'00ff'`, sqlite: true},
			{name: "negative expected", stmt: `UPDATE runs SET expected_rows = -3`},
			{name: "variant gap", stmt: `UPDATE variants SET idx = 5 WHERE idx = 2`, readers: []string{"run"}},
			{name: "variant negative", stmt: `UPDATE variants SET idx = -1 WHERE idx = 0`, readers: []string{"run"}},
			{name: "variant idx text", stmt: `UPDATE variants SET idx = '` + marker + `' WHERE idx = 0`, sqlite: true, readers: []string{"run"}},
			{name: "variant sweep not JSON", stmt: `UPDATE variants SET sweep = '` + marker + `' WHERE idx = 1`, readers: []string{"run"}},
			{name: "variant sweep not an object", stmt: `UPDATE variants SET sweep = '[1]' WHERE idx = 1`, readers: []string{"run"}},
			{name: "variant name blob", stmt: `UPDATE variants SET name = x'00' WHERE idx = 1`, sqlite: true, readers: []string{"run"}},
			{name: "result of unknown variant", stmt: `UPDATE results SET variant_idx = 7 WHERE variant_idx = 1 AND size_idx = 1`, readers: []string{"run"}},
			{name: "result of negative variant", stmt: `UPDATE results SET variant_idx = -1 WHERE variant_idx = 1 AND size_idx = 1`, readers: []string{"run"}},
			{name: "negative size index", stmt: `UPDATE results SET size_idx = -1 WHERE variant_idx = 1 AND size_idx = 1`, readers: []string{"run"}},
			{name: "size index text", stmt: `UPDATE results SET size_idx = '` + marker + `' WHERE variant_idx = 1 AND size_idx = 1`, sqlite: true, readers: []string{"run"}},
			{name: "result not gzip", stmt: `UPDATE results SET data = '` + marker + `' WHERE variant_idx = 1 AND size_idx = 1`, readers: []string{"run"}},
			{name: "result text", stmt: `UPDATE results SET data = 'abc' WHERE variant_idx = 1`, sqlite: true, readers: []string{"run"}},
			{name: "flow records count huge", stmt: `UPDATE flow_records SET records = 1073741824`, readers: []string{"run"}},
			{name: "flow records count zero", stmt: `UPDATE flow_records SET records = 0`, readers: []string{"run"}},
			{name: "flow records count negative", stmt: `UPDATE flow_records SET records = -1`, readers: []string{"run"}},
			{name: "flow records count text", stmt: `UPDATE flow_records SET records = '` + marker + `'`, sqlite: true, readers: []string{"run"}},
			{name: "flow records chunk gap", stmt: `UPDATE flow_records SET chunk = 3 WHERE size_idx = 1`, readers: []string{"run"}},
			{name: "flow records of no result", stmt: `UPDATE flow_records SET size_idx = 9 WHERE size_idx = 1`, readers: []string{"run"}},
			{name: "flow records data", stmt: `UPDATE flow_records SET data = '` + marker + `'`, readers: []string{"run"}},
		}
		for _, c := range cases {
			if c.sqlite && !sqlite {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				dsn := freshDSN(t, sqlite)
				s, id := damagedRun(t, dsn, c.stmt)
				mustBeDamaged(t, s, id, c.readers...)
			})
		}
	})
}

// freshDSN is a new empty database of the backend a backends subtest
// runs on, for one of its own subtests.
func freshDSN(t *testing.T, sqlite bool) string {
	if sqlite {
		return "sqlite:" + filepath.Join(t.TempDir(), "runs.db")
	}
	return pgtest.Database(t)
}

// gzipBomb is a gzip stream of n bytes of JSON (a long string), which
// compresses about a thousand times.
func gzipBomb(t testing.TB, n int) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write([]byte(`{"error":"` + marker))
	chunk := bytes.Repeat([]byte("a"), 1<<16)
	for w := 0; w < n; w += len(chunk) {
		zw.Write(chunk)
	}
	zw.Write([]byte(`"}`))
	zw.Close()
	return b.Bytes()
}

// TestDecompressIsBounded: defect 7, a 2 MB result row decompressed
// without a bound (4.6 GB RSS). More than maxResultJSON bytes of JSON is a
// one-line damaged error, after reading at most about that much.
func TestDecompressIsBounded(t *testing.T) {
	defer setLimit(&maxResultJSON, 1<<20)()
	bomb := gzipBomb(t, 16<<20) // 16 MiB of JSON in a ~16 KB row
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := decompress(bomb)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("16 MiB of JSON accepted with a 1 MiB limit")
	}
	oneLineErr(t, "decompress", err)
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("decompressing a bomb allocated %d bytes, limit 1 MiB", got)
	}
	// Within the limit it reads back.
	r := metrics.SizeResult{Completion: metrics.Completion{SizeBytes: 5}, Outcome: metrics.Outcome{Error: strings.Repeat("x", 1000)}}
	blob, err := compress(r)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decompress(blob); err != nil || got.SizeBytes != 5 || got.Error != r.Error {
		t.Fatalf("good blob: %+v %v", got.SizeBytes, err)
	}
	// A result larger than the limit is refused when saving, so that what
	// is saved can be read back.
	if _, err := compress(metrics.SizeResult{Outcome: metrics.Outcome{Error: strings.Repeat("x", 2<<20)}}); err == nil {
		t.Error("a result over the limit was compressed")
	} else {
		oneLineErr(t, "compress", err)
	}
}

// TestDamagedResultBomb: the same through Run, in a real database.
func TestDamagedResultBomb(t *testing.T) {
	defer setLimit(&maxResultJSON, 1<<20)()
	backends(t, func(t *testing.T, dsn string) {
		s, id := damagedRun(t, dsn)
		if _, err := s.db.Exec(s.d.rebind(`UPDATE results SET data = ? WHERE run_id = ? AND variant_idx = 1 AND size_idx = 1`),
			gzipBomb(t, 16<<20), id); err != nil {
			t.Fatal(err)
		}
		mustBeDamaged(t, s, id, "run")
	})
}

// TestDamagedFlowCounts: a flow_records row's count is checked against
// the limits before anything is allocated for it, and a result's records
// add up to at most maxResultRecords.
func TestDamagedFlowCounts(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s, id := damagedRun(t, dsn)
		// A chunk whose header claims more than its row says.
		data, _ := encodeFlows(simFlows(3, 1, false))
		hdr := binary.AppendUvarint([]byte{flowsPicoseconds}, flowChunk)
		forged := append(hdr, data[2:]...)
		if _, err := s.db.Exec(s.d.rebind(`UPDATE flow_records SET data = ? WHERE run_id = ? AND size_idx = 0`), forged, id); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		mustBeDamaged(t, s, id, "run")
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
			t.Errorf("a forged chunk allocated %d bytes", got)
		}
	})
	backends(t, func(t *testing.T, dsn string) {
		defer setLimit(&maxResultRecords, 2)()
		s := openT(t, dsn)
		o := testOutput()
		o.Variants[0].Results[0].Records = simFlows(2, 1, false)
		id := save(t, s, o, StatusDone)
		if _, _, err := s.Run(id); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		r := o.Variants[0].Results[0]
		r.Records = simFlows(3, 1, false)
		if err := s.AddResult(id, 0, 5, r); err == nil {
			t.Error("a result over the record limit was saved")
		} else {
			oneLineErr(t, "AddResult", err)
		}
		// Two chunks of 2 records: more than the limit for one result.
		chunk, _ := encodeFlows(simFlows(2, 1, false))
		if _, err := s.db.Exec(s.d.rebind(`INSERT INTO flow_records (run_id, variant_idx, size_idx, chunk, records, data) VALUES (?, 0, 0, 1, 2, ?)`), id, chunk); err != nil {
			t.Fatal(err)
		}
		mustBeDamaged(t, s, id, "run")
	})
}

// setLimit sets *p to v and returns the function that restores it.
func setLimit[T any](p *T, v T) func() {
	old := *p
	*p = v
	return func() { *p = old }
}
