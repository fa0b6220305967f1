package workload

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"fabriclab/units"
)

func TestParseFlowList(t *testing.T) {
	in := `# a comment
src,dst,bytes,start

0 1 1500
1,0,64KiB,10us   # trailing comment
2	3	2MB	0.5
3 , 2 , 7 , 1.5ms
`
	got, err := ParseFlowList("f.txt", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []FlowSpec{
		{Src: 0, Dst: 1, Bytes: 1500, Start: 0, Line: 4},
		{Src: 1, Dst: 0, Bytes: 64 << 10, Start: 10 * units.Microsecond, Line: 5},
		{Src: 2, Dst: 3, Bytes: 2e6, Start: units.Second / 2, Line: 6},
		{Src: 3, Dst: 2, Bytes: 7, Start: 1500 * units.Microsecond, Line: 7},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d flows, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("flow %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A CSV a spreadsheet exported starts with a byte-order mark: the header
// is still a header, and a first flow still a flow.
func TestParseFlowListByteOrderMark(t *testing.T) {
	for _, in := range []string{"\ufeffsrc,dst,bytes,start\n0,1,1500,0\n", "\ufeff0,1,1500,0\n"} {
		got, err := ParseFlowList("f.csv", strings.NewReader(in))
		if err != nil || len(got) != 1 || got[0].Bytes != 1500 {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
}

func TestParseFlowListErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"0 1", "f.txt:1: want \"src dst bytes [start [path]]\", got 2 fields"},
		{"0 1 2 3 4 5", "f.txt:1: want"},
		{"0 1 2KB 0 leaf0>>leaf1", "f.txt:1: path: \"leaf0>>leaf1\" is not switch names joined by '>'"},
		{"0 1 2KB 0 leaf0>sp ine", "f.txt:1: want"},
		{"\n\n-1 1 1KB", "f.txt:3: src: \"-1\" is not a host index"},
		{"0 x 1KB", "f.txt:1: dst: \"x\" is not a host index"},
		{"0 0 1KB", "f.txt:1: src and dst are both host 0"},
		{"0 1 0", "f.txt:1: bytes: \"0\" must be more than 0"},
		{"0 1 1QB", "f.txt:1: bytes: \"1QB\": unknown size unit"},
		{"0 1 1KB -1", "f.txt:1: start: \"-1\" must be a time of 0 or more"},
		{"0 1 1KB 5parsecs", "f.txt:1: start: \"5parsecs\": unknown duration unit"},
		{"0 1 1KB 1e300", "f.txt:1: start: \"1e300\" is too large"},
		{"0 1 1KB NaN", "f.txt:1: start: \"NaN\" must be a time"},
		{"0 1 1KB 0\nsrc,dst,bytes,start", "f.txt:2: src: \"src\" is not a host index"},
		{strings.Repeat("1", maxFlowLine+10), "f.txt:1: line longer than"},
	}
	for _, c := range cases {
		_, err := ParseFlowList("f.txt", strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%.40q: err = %v, want prefix %q", c.in, err, c.want)
		}
	}
}

var flowErrRE = regexp.MustCompile(`^f\.txt:\d+: `)

func FuzzParseFlowList(f *testing.F) {
	for _, s := range []string{
		"0 1 1MB 0\n1 0 64KiB 10us\n",
		"src,dst,bytes,start\n0,1,1500,0.001\n",
		"# c\n\n2 3 2MB # x\n",
		"0 0 1\n", "0 1 -1\n", "0 1 1e30\n", "1 2 3 4 5\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		flows, err := ParseFlowList("f.txt", strings.NewReader(in))
		if err != nil {
			msg := err.Error()
			if !flowErrRE.MatchString(msg) || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("bad error %q", msg)
			}
			return
		}
		for _, fl := range flows {
			if fl.Src < 0 || fl.Dst < 0 || fl.Src == fl.Dst || fl.Bytes <= 0 || fl.Start < 0 || fl.Line < 1 {
				t.Fatalf("invalid flow accepted: %+v", fl)
			}
		}
	})
}

// Errors quote at most a short, escaped piece of a token: a file that is
// not a flow list (a password file, a key) is never echoed.
func TestParseFlowListErrorsDoNotEchoLines(t *testing.T) {
	secret := "root:x:0:0:root:/root:/bin/bash"
	long := "0123456789abcdef0123456789"
	for _, in := range []string{
		secret + "\n",
		"0 1 " + secret + "\n",
		"0 1 1" + secret + "\n",
		"0 1 1MB 1" + secret + "\n",
		secret + " 1 1MB\n",
		"0 " + long + " 1MB\n",
		"0 1 " + long + "B\n",
		"0 1 1MB " + long + "\n",
		"0 1 1MB 1ms " + secret + "\n",
		"0 1 \x1b[2J\x07 1MB\n",
	} {
		_, err := ParseFlowList("f.txt", strings.NewReader(in))
		if err == nil {
			t.Fatalf("%q accepted", in)
		}
		msg := err.Error()
		if strings.Contains(msg, secret) || strings.Contains(msg, long) || strings.Contains(msg, "root:/root") ||
			strings.ContainsAny(msg, "\x1b\x07\r\n") || !strings.HasPrefix(msg, "f.txt:1: ") {
			t.Errorf("%q: %q", in, msg)
		}
	}
	_, err := ParseFlowList("f.txt", strings.NewReader("0 1 1MB\n"+strings.Repeat("1", maxFlowLine+10)))
	if err == nil || err.Error() != "f.txt:2: line longer than 1 MiB" {
		t.Errorf("long line: %v", err)
	}
}

// A fifth column pins the flow to a path of switches.
func TestParseFlowListPath(t *testing.T) {
	got, err := ParseFlowList("f.txt", strings.NewReader("src,dst,bytes,start,path\n0 5 1MB 0 leaf0>spine1>leaf1\n1 6 1MB 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0].Path, []string{"leaf0", "spine1", "leaf1"}) || got[1].Path != nil {
		t.Fatalf("flows %+v", got)
	}
	d, err := Flows(8, got)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pins) != 1 || d.Pins[0].Line != 2 || len(d.Pins[0].Path) != 3 {
		t.Errorf("pins %+v", d.Pins)
	}
	c, _ := Combine([]*DAG{d, d}, nil)
	if len(c.Pins) != 2 || c.Pins[2].Line != 2 {
		t.Errorf("combined pins %+v", c.Pins)
	}
}
