package store

import (
	"bytes"
	"compress/gzip"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fuzzOneLine fails on a multi-line error.
func fuzzOneLine(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Fatalf("%s: error on several lines: %q", what, err.Error())
	}
}

func FuzzDecompress(f *testing.F) {
	good, _ := compress(testOutput().Variants[1].Results[1])
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add(gzipBomb(f, 2<<20))
	var notJSON bytes.Buffer
	zw := gzip.NewWriter(&notJSON)
	zw.Write([]byte("not json\n\x00"))
	zw.Close()
	f.Add(notJSON.Bytes())
	defer setLimit(&maxResultJSON, 1<<20)()
	f.Fuzz(func(t *testing.T, blob []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := decompress(blob)
		runtime.ReadMemStats(&after)
		fuzzOneLine(t, "decompress", err)
		if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
			t.Fatalf("%d-byte blob: %d bytes allocated", len(blob), got)
		}
	})
}

// FuzzRead writes fuzzer-chosen values into a real SQLite database's rows
// (schema_version, a run's status, sets and expected rows, a variant's
// index and sweep, a result row's indexes and blob, a flow_records row's
// count and blob) and reads it back with Runs, Meta and Run, through Open
// and OpenReadOnly: never a panic, every error one line, memory bounded.
func FuzzRead(f *testing.F) {
	good := testOutput()
	blob, _ := compress(good.Variants[0].Results[0])
	chunk, _ := encodeFlows(good.Variants[0].Results[0].Records)
	big, _ := encodeFlows(simFlows(flowChunk, 1, false))
	// version, versionText (used when not empty), status, sets, expected,
	// variant idx, sweep, result variant_idx, size_idx, result blob,
	// records, chunk index, chunk blob
	f.Add(int64(SchemaVersion), "", StatusDone, `["seed=9"]`, int64(4), int64(1), `{"a":"b"}`, int64(0), int64(0), blob, int64(1), int64(0), chunk)
	f.Add(int64(-1), "", StatusDone, `[]`, int64(0), int64(1), `null`, int64(0), int64(0), blob, int64(1), int64(0), chunk)
	f.Add(int64(1), "abc", "bogus", `{`, int64(-1), int64(9), `[1]`, int64(5), int64(-2), []byte("x"), int64(1<<40), int64(2), []byte{1, 0xff})
	f.Add(int64(SchemaVersion+1), "", StatusRunning, `["a"]`, int64(1<<40), int64(-1), `"s"`, int64(0), int64(1), gzipBomb(f, 2<<20), int64(flowChunk), int64(0), big)
	f.Add(int64(SchemaVersion), "3", StatusIncomplete, `null`, int64(7), int64(2), `{}`, int64(1), int64(1), blob, int64(flowChunk+1), int64(-1), big[:len(big)/3])
	defer setLimit(&maxResultJSON, 1<<20)()
	defer setLimit(&maxResultRecords, 1<<17)()
	f.Fuzz(func(t *testing.T, version int64, versionText, status, sets string, expected, vidx int64, sweep string,
		rvi, rsi int64, rblob []byte, records, chunkIdx int64, fblob []byte) {
		path := filepath.Join(t.TempDir(), "runs.db")
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		id := save(t, s, good, StatusDone)
		var v any = version
		if versionText != "" {
			v = versionText
		}
		for _, u := range []struct {
			q    string
			args []any
		}{
			{`UPDATE schema_version SET version = ?`, []any{v}},
			{`UPDATE runs SET status = ?, sets = ?, expected_rows = ?`, []any{status, sets, expected}},
			{`UPDATE variants SET idx = ?, sweep = ? WHERE idx = 1`, []any{vidx, sweep}},
			{`UPDATE results SET variant_idx = ?, size_idx = ?, data = ? WHERE variant_idx = 1 AND size_idx = 1`, []any{rvi, rsi, rblob}},
			{`UPDATE flow_records SET records = ?, chunk = ?, data = ? WHERE variant_idx = 0 AND size_idx = 1`, []any{records, chunkIdx, fblob}},
		} {
			if _, err := s.db.Exec(u.q, u.args...); err != nil {
				t.Logf("%s: %v", u.q, err) // a constraint: that row keeps its value
			}
		}
		s.Close()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, open := range []func(string) (*Store, error){OpenReadOnly, Open} {
			s, err := open(path)
			fuzzOneLine(t, "open", err)
			if err != nil {
				continue
			}
			_, err = s.Runs(Filter{})
			fuzzOneLine(t, "runs", err)
			_, err = s.Meta(id)
			fuzzOneLine(t, "meta", err)
			_, _, err = s.Run(id)
			fuzzOneLine(t, "run", err)
			s.Close()
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 256<<20 {
			t.Fatalf("reading allocated %d bytes", got)
		}
	})
}
