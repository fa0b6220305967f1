package store

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"fabriclab/metrics"
)

// A queued run's rows land once each, whoever saves them and however
// often; the last one ends the run (failed if a row carries an error), and
// each row reads back with its flow records.
func TestQueuedRunRowsOnce(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s := openT(t, dsn)
		o := testOutput()
		rows := 0
		for _, v := range o.Variants {
			rows += len(v.Results)
		}
		id, err := s.BeginRun(Meta{Name: "q", Queue: "fabriclab", Expected: rows}, o.Variants)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := s.Meta(id); m.Status != StatusQueued || m.Queue != "fabriclab" || m.Missing() != 0 {
			t.Fatalf("queued run: %+v", m)
		}
		// Two workers save every row at once, and once more each.
		var wg sync.WaitGroup
		var mu sync.Mutex
		saved, ended := 0, 0
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for pass := 0; pass < 2; pass++ {
					for vi, v := range o.Variants {
						for si, r := range v.Results {
							if vi == 1 && si == 0 {
								r.Error = "boom"
							}
							ok, end, err := s.AddQueuedResult(id, vi, si, r)
							if err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							if ok {
								saved++
							}
							if end {
								ended++
							}
							mu.Unlock()
						}
					}
				}
			}()
		}
		wg.Wait()
		if saved != rows || ended != 1 {
			t.Fatalf("%d rows saved of %d, the run ended %d times", saved, rows, ended)
		}
		m, err := s.Meta(id)
		if err != nil || m.Status != StatusFailed || m.Rows != rows || m.Finished == "" {
			t.Fatalf("after the last row: %+v, %v", m, err)
		}
		keys, err := s.ResultKeys(id)
		if err != nil || len(keys) != rows {
			t.Fatalf("keys %v, %v", keys, err)
		}
		for _, k := range keys {
			r, err := s.Result(id, k.Variant, k.Size)
			want := o.Variants[k.Variant].Results[k.Size]
			if k.Variant == 1 && k.Size == 0 {
				want.Error = "boom"
			}
			if err != nil || !reflect.DeepEqual(r, want) {
				t.Errorf("row %v: %v", k, err)
			}
			if has, err := s.HasResult(id, k.Variant, k.Size); !has || err != nil {
				t.Errorf("HasResult %v: %v %v", k, has, err)
			}
		}
		if _, err := s.Result(id, 9, 9); !errors.Is(err, ErrNotFound) {
			t.Errorf("missing row: %v", err)
		}
		if _, _, err := s.AddQueuedResult(id+1, 0, 0, metrics.SizeResult{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("row of a missing run: %v", err)
		}
	})
}

func TestCancelQueued(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s := openT(t, dsn)
		o := testOutput()
		id, err := s.BeginRun(Meta{Name: "q", Queue: "fabriclab", Expected: 4}, o.Variants)
		if err != nil {
			t.Fatal(err)
		}
		if was, err := s.CancelQueued(id); !was || err != nil {
			t.Fatalf("cancel: %v %v", was, err)
		}
		if was, err := s.CancelQueued(id); was || err != nil {
			t.Fatalf("cancel again: %v %v", was, err)
		}
		if m, _ := s.Meta(id); m.Status != StatusInterrupted || m.Missing() != 0 {
			t.Errorf("cancelled run: %+v", m)
		}
		// A row that lands after the cancel is kept; the run stays cancelled.
		if ok, end, err := s.AddQueuedResult(id, 0, 0, o.Variants[0].Results[0]); !ok || end || err != nil {
			t.Errorf("late row: %v %v %v", ok, end, err)
		}
		if _, err := s.CancelQueued(id + 1); !errors.Is(err, ErrNotFound) {
			t.Errorf("missing run: %v", err)
		}
	})
}
