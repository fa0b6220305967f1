package main

import (
	"strings"
	"testing"
)

// The size bound is said in units nccl sizes take (there is no P).
func TestNCCLSizeBound(t *testing.T) {
	for _, in := range []string{"0", "0.5", "1048577G"} {
		_, err := parseNCCLSize(in)
		if err == nil || !strings.Contains(err.Error(), "a size must be from 1 byte to 1048576G (2^50 bytes)") {
			t.Errorf("%q: %v", in, err)
		}
	}
	if n, err := parseNCCLSize("1048576G"); err != nil || n != 1<<50 {
		t.Errorf("1048576G: %d, %v", n, err)
	}
}

// The command line in the printed scenario's first comment is escaped: a
// newline in a --set value cannot start a line of YAML, nor ESC reach
// the terminal.
func TestNCCLPrintScenarioEscapesArgs(t *testing.T) {
	code, out, stderr := storeApp(t, nil, "nccl", "all_reduce", "-b", "1K", "-e", "1K", "--ranks", "4", "--print-scenario",
		"--set", "seed=1\nname: evil\x1b[31m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	first, rest, _ := strings.Cut(out, "\n")
	if first != `# fabriclab nccl all_reduce -b 1K -e 1K --ranks 4 --set seed=1\nname: evil\x1b[31m` ||
		strings.Contains(out, "\x1b") || strings.Contains(rest, "evil") {
		t.Errorf("%q", out)
	}
}

// A flag value that is no number says what the flag takes, not Go's
// strconv message; exit 2.
func TestNCCLFlagNumberErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--seed", "-3"}, `fabriclab: --seed "-3": needs a whole number from 0 to 18446744073709551615 (2^64−1) (see 'fabriclab nccl --help')`},
		{[]string{"-n", "x"}, `fabriclab: --iters "x": needs a whole number (see 'fabriclab nccl --help')`},
	} {
		code, _, stderr := storeApp(t, nil, append([]string{"nccl", "all_reduce"}, c.args...)...)
		if code != exitUsage || strings.TrimSpace(stderr) != c.want {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, stderr, c.want)
		}
	}
}
