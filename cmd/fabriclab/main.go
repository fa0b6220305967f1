// Command fabriclab is the CLI of the fabriclab network test lab: it runs
// scenario files and prints, writes and validates their results.
//
// The CLI is thin: scenario loads and expands files, lab runs one job,
// report formats results; runner.go runs jobs in parallel with progress,
// signals.go stops them on SIGINT, SIGTERM and SIGHUP.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"fabriclab/internal/inputfile"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	processStop = newSignalStop(cancel, os.Exit)
	processStop.listen()
	os.Exit(newApp(os.Stdout, os.Stderr).execute(ctx, os.Args[1:]))
}

// flagError rewords the error of a flag value that does not parse as the
// flag's type: pflag passes on Go's own message (`invalid argument "-3"
// for "--seed" flag: strconv.ParseUint: parsing "-3": invalid syntax`),
// which becomes what the flag takes (`--seed "-3": needs a whole number
// from 0 to 18446744073709551615 (2^64−1)`). Any other error, and a flag
// of a type of fabriclab's own (which words its errors itself), is
// returned as it is. The flag error function of the root command calls it.
func flagError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) || ive.GetFlag() == nil {
		return err
	}
	fl := ive.GetFlag()
	var ne *strconv.NumError
	outOfRange := errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
	var want string
	switch fl.Value.Type() {
	case "uint64", "uint":
		want = "a whole number from 0 to 18446744073709551615 (2^64−1)"
	case "uint32":
		want = "a whole number from 0 to 4294967295 (2^32−1)"
	case "int", "int64":
		want = "a whole number"
		if outOfRange {
			want += " from -9223372036854775808 to 9223372036854775807"
		}
	case "int32":
		want = "a whole number"
		if outOfRange {
			want += " from -2147483648 to 2147483647"
		}
	case "float64", "float32":
		want = "a number"
	case "bool":
		want = "true or false (or leave the value out for true)"
	case "duration":
		want = "a duration such as 500ms, 30s, 1m or 1h30m"
	default:
		return err
	}
	v := strconv.Quote(ive.GetValue()) // escaped: it reaches the terminal
	if len(ive.GetValue()) > 64 {
		v = inputfile.Token(ive.GetValue())
	}
	return fmt.Errorf("--%s %s: needs %s", fl.Name, v, want)
}

// flagErrorFunc is a command's flag error function: a usage error (exit
// 2) worded by flagError.
func flagErrorFunc(cmd *cobra.Command, err error) error {
	return usageErr(cmd, "%v", flagError(err))
}
