// Package pgtest gives tests a fresh PostgreSQL database on the server
// named by $FABRICLAB_TEST_POSTGRES (scripts/test starts a throwaway
// cluster and sets it). Without it the test is skipped, unless
// $FABRICLAB_REQUIRE_POSTGRES=1 (set by scripts/test, so CI never skips).
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Database creates an empty database for t, dropped when t ends, and
// returns its URL.
func Database(t testing.TB) string {
	t.Helper()
	admin := os.Getenv("FABRICLAB_TEST_POSTGRES")
	if admin == "" {
		if os.Getenv("FABRICLAB_REQUIRE_POSTGRES") == "1" {
			t.Fatal("FABRICLAB_REQUIRE_POSTGRES=1 but FABRICLAB_TEST_POSTGRES is not set (run ./scripts/test)")
		}
		t.Skip("no PostgreSQL: set FABRICLAB_TEST_POSTGRES=postgres://… (./scripts/test starts one)")
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("FABRICLAB_TEST_POSTGRES: %v", err)
	}
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b [6]byte
	rand.Read(b[:])
	name := "fabriclab_test_" + hex.EncodeToString(b[:])
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("creating a test database on %s: %v", u.Redacted(), err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", admin)
		if err != nil {
			return
		}
		defer db.Close()
		db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	})
	u.Path = "/" + name
	return u.String()
}
