package store

import (
	"strings"
	"testing"

	"fabriclab/metrics"
)

// TestPostgresPasswordsNeverShown: a password in the user info or in a
// password= parameter appears in no error (the review found the latter
// printed).
func TestPostgresPasswordsNeverShown(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:s3cret1@127.0.0.1:1/db?connect_timeout=1",
		"postgres://u@127.0.0.1:1/db?password=s3cret2&connect_timeout=1",
		"postgresql://u:s3cret1@127.0.0.1:1/db?password=s3cret2&connect_timeout=1",
	} {
		for _, open := range []func(string) (*Store, error){Open, OpenReadOnly} {
			_, err := open(dsn)
			if err == nil {
				t.Fatalf("%s: opened", dsn)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error shows a password: %v", err)
			}
		}
	}
}

// TestRunMemoryBudget: a run's results are charged what they decode to
// (bytes plus 8 per array element) before decoding, so rows of zeros
// that each fit the per-result limit cannot add up to gigabytes.
func TestRunMemoryBudget(t *testing.T) {
	var r metrics.SizeResult
	r.FCTCurveS = make([]float64, 100_000) // "0,0,0,…": 200 KB of JSON, 1 MB decoded
	blob, err := compress(r)
	if err != nil {
		t.Fatal(err)
	}
	budget := int64(2_500_000)
	for i := range 3 {
		_, err = decompressWithin(blob, &budget)
		if (err != nil) != (i == 2) {
			t.Fatalf("row %d: %v (budget left %d)", i, err, budget)
		}
	}
	if !strings.Contains(err.Error(), "the most one read holds") || strings.Contains(err.Error(), "0,0") {
		t.Errorf("error %q", err)
	}
}

// TestURLLikePathsAreRefused: a mistyped URL (POSTGRES:// is PostgreSQL,
// postgres:/x or mysql://… are not files) never becomes a SQLite file.
func TestURLLikePathsAreRefused(t *testing.T) {
	if !IsPostgres("POSTGRES://u@127.0.0.1:1/db") {
		t.Error("POSTGRES:// is not taken for PostgreSQL")
	}
	t.Chdir(t.TempDir())
	for _, dsn := range []string{"postgres:/x", "mysql://h/db", "sqlite:file:/x", " ", "sqlite: "} {
		if _, err := Open(dsn); err == nil {
			t.Errorf("%q: opened", dsn)
		}
	}
}
