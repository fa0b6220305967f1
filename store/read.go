package store

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
)

// A database file is input: a damaged or hostile one must give a one-line
// error, never a panic, a wrong answer or unbounded memory. So rows are
// scanned as the raw values the driver returns (database/sql's kinds:
// int64, float64, bool, []byte, string, time.Time, nil) and every value
// is checked here before it is used. Errors name the column and, for
// integers, the value; never the bytes of a text or a blob.

// ErrDamaged is returned (wrapped) when a value read from the database is
// one this fabriclab could not have written: a schema_version that is not
// one integer, an unknown status, a sets/sweeps/sweep column that is not
// its JSON, variant indexes with gaps, a result of a variant that is not
// there, a result blob that does not decompress (or to more than the
// limit), flow records that do not decode. The message is one line.
var ErrDamaged = errors.New("damaged")

// ErrMigrationNeeded is returned (wrapped) by OpenReadOnly for a database
// whose schema is older than SchemaVersion, or that has no tables yet:
// opening it once with Open (any command that writes) migrates it.
var ErrMigrationNeeded = errors.New("a migration is needed")

// wrapped is an error with its own text that also matches target.
type wrapped struct {
	msg    string
	target error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.target }

// damaged is the error for a value this build could not have written.
func (s *Store) damaged(format string, a ...any) error {
	return fmt.Errorf("store: database %s is %w: %s", s.name, ErrDamaged, oneLine(fmt.Sprintf(format, a...)))
}

type scanner interface{ Scan(...any) error }

// scanRaw scans one row of n columns as the driver's values.
func scanRaw(sc scanner, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, sc.Scan(ptrs...)
}

// checker converts a row's raw values, keeping the first problem.
type checker struct {
	vals []any
	bad  string
}

func (c *checker) fail(format string, a ...any) {
	if c.bad == "" {
		c.bad = fmt.Sprintf(format, a...)
	}
}

// int is column i, an integer in [lo, hi].
func (c *checker) int(i int, name string, lo, hi int64) int64 {
	x, ok := c.vals[i].(int64)
	switch {
	case !ok:
		c.fail("%s is %s, not an integer", name, kindOf(c.vals[i]))
		return 0
	case x < lo || x > hi:
		c.fail("%s %d is out of range (%d to %d)", name, x, lo, hi)
		return 0
	}
	return x
}

// text is column i, a text.
func (c *checker) text(i int, name string) string {
	x, ok := c.vals[i].(string)
	if !ok {
		c.fail("%s is %s, not text", name, kindOf(c.vals[i]))
	}
	return x
}

// blob is column i, binary data.
func (c *checker) blob(i int, name string) []byte {
	x, ok := c.vals[i].([]byte)
	if !ok {
		c.fail("%s is %s, not binary data", name, kindOf(c.vals[i]))
	}
	return x
}

// kindOf names the kind of a raw value, never the value.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case int64:
		return "an integer"
	case float64:
		return "a real number"
	case bool:
		return "a boolean"
	case string:
		return "text"
	case []byte:
		return "binary data"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

type querier interface {
	Query(query string, args ...any) (*sql.Rows, error)
}

// schemaVersion reads schema_version: its one row's value (present false
// when the table has no row). Several rows, a value that is not an integer
// or a negative one are damage.
func (s *Store) schemaVersion(q querier) (v int64, present bool, err error) {
	rows, err := q.Query(`SELECT version FROM schema_version`)
	if err != nil {
		return 0, false, fmt.Errorf("store: database %s: %s", s.name, oneLine(err.Error()))
	}
	defer rows.Close()
	n := 0
	var raw any
	for rows.Next() {
		if n++; n > 1 {
			return 0, false, s.damaged("schema_version has more than one row")
		}
		if err := rows.Scan(&raw); err != nil {
			return 0, false, fmt.Errorf("store: database %s: %s", s.name, oneLine(err.Error()))
		}
	}
	if err := rows.Err(); err != nil {
		return 0, false, fmt.Errorf("store: database %s: %s", s.name, oneLine(err.Error()))
	}
	if n == 0 {
		return 0, false, nil
	}
	c := checker{vals: []any{raw}}
	v = c.int(0, "schema_version", 0, math.MaxInt64) // above SchemaVersion: the caller says newer
	if c.bad != "" {
		return 0, false, s.damaged("%s", c.bad)
	}
	return v, true, nil
}
