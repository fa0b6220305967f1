package workload

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"fabriclab/internal/inputfile"
	"fabriclab/units"
)

// FlowSpec is one flow of an explicit flow list: Bytes from host Src to host
// Dst, starting at Start after the beginning of the run.
type FlowSpec struct {
	Src, Dst int
	Bytes    int64
	Start    units.Duration
	// Path, when given, pins the flow to these switches, in order from
	// the source's to the destination's (the fifth column, names joined
	// by '>': leaf0>spine3>leaf1).
	Path []string
	// Line is the line of the flow in its file, for error messages.
	Line int
}

// maxFlowLine bounds one line of a flow list.
const maxFlowLine = inputfile.MaxLine

// ParseFlowList reads a flow list: one flow per line,
//
//	src dst bytes [start [path]]
//
// separated by spaces, tabs or commas (so a CSV file works). src and dst are
// host indices (0-based; the caller checks them against the topology).
// bytes takes size units (64KiB, 2MB; a bare number is bytes). start takes
// duration units (10us, 1.5ms); a bare number is in seconds, as in most
// trace files; it defaults to 0 when left out. '#' starts a comment; blank
// lines are skipped, and so is a header line "src,dst,bytes,start[,path]"
// before the first flow. path is the switches the flow must cross, from
// the source's to the destination's, joined by '>' (the topology checks
// that they exist and are linked). Errors read "name:line: message" and quote at most a
// short piece of a token (inputfile.Token), never a whole line.
func ParseFlowList(name string, r io.Reader) ([]FlowSpec, error) {
	sc := inputfile.NewScanner(name, r, maxFlowLine)
	var flows []FlowSpec
	errf := sc.Errorf
	for sc.Scan() {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		if len(fields) == 0 {
			continue
		}
		if len(flows) == 0 && isHeader(fields) {
			continue
		}
		if len(fields) < 3 || len(fields) > 5 {
			return nil, errf("want \"src dst bytes [start [path]]\", got %d fields", len(fields))
		}
		f := FlowSpec{Line: sc.Line()}
		var err error
		if f.Src, err = host(fields[0]); err != nil {
			return nil, errf("src: %v", err)
		}
		if f.Dst, err = host(fields[1]); err != nil {
			return nil, errf("dst: %v", err)
		}
		if f.Src == f.Dst {
			return nil, errf("src and dst are both host %d", f.Src)
		}
		b, err := units.ParseSize(fields[2])
		if err != nil {
			return nil, errf("bytes: %s", tokenError(fields[2], err, "a size (e.g. 64KiB)"))
		}
		if b <= 0 {
			return nil, errf("bytes: %s must be more than 0", inputfile.Token(fields[2]))
		}
		f.Bytes = int64(b)
		if len(fields) >= 4 {
			if f.Start, err = start(fields[3]); err != nil {
				return nil, errf("start: %s", tokenError(fields[3], err, "a time (e.g. 10us, or seconds)"))
			}
		}
		if len(fields) == 5 {
			if f.Path, err = pathOf(fields[4]); err != nil {
				return nil, errf("path: %v", err)
			}
		}
		flows = append(flows, f)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return flows, nil
}

// tokenError is the message of err, a parser's complaint about token tok,
// when tok is short enough to quote whole; for a longer token (which the
// parser's message would echo) only that it is not what: the token cut
// short.
func tokenError(tok string, err error, what string) string {
	if len(tok) <= inputfile.TokenBytes {
		return err.Error()
	}
	return inputfile.Token(tok) + " is not " + what
}

// maxPathHops bounds a pinned path.
const maxPathHops = 32

// pathOf reads a pinned path: switch names joined by '>'.
func pathOf(s string) ([]string, error) {
	hops := strings.Split(s, ">")
	if len(hops) > maxPathHops {
		return nil, fmt.Errorf("%d switches; a path crosses at most %d", len(hops), maxPathHops)
	}
	for _, h := range hops {
		if h == "" || len(h) > 64 || strings.IndexFunc(h, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) >= 0 {
			return nil, fmt.Errorf("%s is not switch names joined by '>' (leaf0>spine1>leaf2)", inputfile.Token(s))
		}
	}
	return hops, nil
}

func isHeader(fields []string) bool {
	want := []string{"src", "dst", "bytes", "start", "path"}
	if len(fields) < 3 || len(fields) > len(want) {
		return false
	}
	for i, f := range fields {
		if !strings.EqualFold(f, want[i]) {
			return false
		}
	}
	return true
}

func host(s string) (int, error) {
	h, err := strconv.Atoi(s)
	if err != nil || h < 0 {
		return 0, fmt.Errorf("%s is not a host index (0, 1, 2, …)", inputfile.Token(s))
	}
	return h, nil
}

// start parses a start time; a bare number is seconds.
func start(s string) (units.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return 0, fmt.Errorf("%s must be a time of 0 or more", inputfile.Token(s))
		}
		ps := v * float64(units.Second)
		if ps >= math.MaxInt64/2 {
			return 0, fmt.Errorf("%s is too large", inputfile.Token(s))
		}
		return units.Duration(math.Round(ps)), nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return d, nil
}
