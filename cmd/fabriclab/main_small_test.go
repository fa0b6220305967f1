package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// flagError words what a flag takes instead of Go's strconv message, for
// every kind of flag fabriclab has; other errors pass unchanged.
func TestFlagError(t *testing.T) {
	parse := func(args ...string) error {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var u uint64
		var i int
		var b bool
		var d time.Duration
		var f float64
		fs.Uint64Var(&u, "seed", 0, "")
		fs.IntVarP(&i, "parallel", "j", 0, "")
		fs.BoolVar(&b, "quiet", false, "")
		fs.DurationVar(&d, "poll", 0, "")
		fs.Float64Var(&f, "load", 0, "")
		fs.SetOutput(&strings.Builder{})
		return fs.Parse(args)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--seed", "-3"}, `--seed "-3": needs a whole number from 0 to 18446744073709551615 (2^64−1)`},
		{[]string{"--seed=18446744073709551616"}, `--seed "18446744073709551616": needs a whole number from 0 to 18446744073709551615 (2^64−1)`},
		{[]string{"-j", "x"}, `--parallel "x": needs a whole number`},
		{[]string{"-j", "9223372036854775808"}, `--parallel "9223372036854775808": needs a whole number from -9223372036854775808 to 9223372036854775807`},
		{[]string{"--quiet=maybe"}, `--quiet "maybe": needs true or false (or leave the value out for true)`},
		{[]string{"--poll", "5"}, `--poll "5": needs a duration such as 500ms, 30s, 1m or 1h30m`},
		{[]string{"--load", "lots"}, `--load "lots": needs a number`},
		{[]string{"--seed", "\x1b[31m"}, `--seed "\x1b[31m": needs a whole number`},
	} {
		err := flagError(parse(c.args...))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "\x1b") {
			t.Errorf("%v: %v; want %q", c.args, err, c.want)
		}
	}
	other := errors.New("unknown flag: --nope")
	if flagError(other) != other {
		t.Error("another error was changed")
	}
}
