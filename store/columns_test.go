package store

import (
	"path/filepath"
	"reflect"
	"testing"

	"fabriclab/metrics"
	"fabriclab/report"
)

// The stored columns of report.ResultColumns are exactly the results
// table's value columns, with the types the migrations gave them: the
// column table cannot drift from the schema (a new stored column needs a
// new migration).
func TestResultColumnsMatchSchema(t *testing.T) {
	s := openT(t, "sqlite:"+filepath.Join(t.TempDir(), "runs.db"))
	rows, err := s.db.Query(`PRAGMA table_info(results)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type col struct{ name, typ string }
	var got []col
	for rows.Next() {
		var cid, notNull, pk int
		var name, typ string
		var dflt any
		if err := rows.Scan(&cid, &name, &typ, &notNull, &dflt, &pk); err != nil {
			t.Fatal(err)
		}
		if notNull == 0 {
			t.Errorf("column %s may be NULL", name)
		}
		switch name {
		case "run_id", "variant_idx", "size_idx", "data":
			continue // the row's keys and its JSON, not result columns
		}
		got = append(got, col{name, typ})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var want []col
	for _, c := range report.ResultColumns {
		if c.SQL != "" {
			want = append(want, col{c.Name, c.SQL})
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results table columns\n got %v\nwant %v (report.ResultColumns with SQL set)", got, want)
	}
}

// AddResult fills every SQL column from its own field of the result (each
// field a different value, so a column reading the wrong one shows).
func TestResultColumnsStored(t *testing.T) { backends(t, testResultColumnsStored) }

func testResultColumnsStored(t *testing.T, dsn string) {
	s := openT(t, dsn)
	r := metrics.SizeResult{
		Completion: metrics.Completion{SizeBytes: 1001, Ranks: 1002, Algorithm: "ring",
			Timing:           metrics.Timing{CCTS: 1.5, AlgBWGBps: 2.5, BusBWGBps: 3.5, IdealS: 4.5, IdealPct: 5.5},
			CollectiveIdealS: 6.5, CollectiveIdealPct: 7.5},
		FabricTotals: metrics.FabricTotals{RoutedIdealS: 8.5, RoutedIdealPct: 9.5,
			PFCPauses: 1003, ECNMarks: 1004, Drops: 1005, Retransmits: 1006, CNPs: 1007, Timeouts: 1008},
		Outcome: metrics.Outcome{Complete: true, Error: "partly"},
		Jobs:    []metrics.JobResult{{Name: "main", AloneCCTS: 10.5, Interference: 11.5}},
	}
	o := report.Output{Scenario: "cols", Variants: []report.VariantResult{{Name: "v", Collective: "ring", Results: []metrics.SizeResult{r}}}}
	id := save(t, s, o, StatusDone)
	var (
		size, ranks, pfc, ecn, drops, retx, cnps, timeouts int64
		cct, alg, bus, ideal, idealPct, routed, routedPct  float64
		complete                                           bool
		errText                                            string
	)
	err := s.db.QueryRow(s.d.rebind(`SELECT size_bytes, ranks, cct_s, algbw_gbps, busbw_gbps, ideal_s, ideal_pct,
		pfc_pauses, ecn_marks, drops, retransmits, cnps, timeouts, complete, routed_ideal_s, routed_ideal_pct, error
		FROM results WHERE run_id = ?`), id).Scan(&size, &ranks, &cct, &alg, &bus, &ideal, &idealPct,
		&pfc, &ecn, &drops, &retx, &cnps, &timeouts, &complete, &routed, &routedPct, &errText)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{size, ranks, cct, alg, bus, ideal, idealPct, pfc, ecn, drops, retx, cnps, timeouts, complete, routed, routedPct, errText}
	want := []any{int64(1001), int64(1002), 1.5, 2.5, 3.5, 4.5, 5.5, int64(1003), int64(1004), int64(1005), int64(1006),
		int64(1007), int64(1008), true, 8.5, 9.5, "partly"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored columns\n got %v\nwant %v", got, want)
	}
	back, _, err := s.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Variants[0].Results[0], r) {
		t.Errorf("read back %+v\nwant %+v", back.Variants[0].Results[0], r)
	}
}
