package units

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseAccepts(t *testing.T) {
	rates := []struct {
		in   string
		want Rate
	}{
		{"400Gbps", 400 * Gbps}, {"400gbps", 400 * Gbps}, {"25 Gb/s", 25 * Gbps}, {"25gb/s", 25 * Gbps},
		{"100G", 100 * Gbps}, {"100g", 100 * Gbps}, {"1.5Tbps", 1500 * Gbps}, {"5Mbps", 5 * Mbps},
		{"5mbps", 5 * Mbps}, {"10Kbps", 10 * Kbps}, {"10kbps", 10 * Kbps}, {"10kb/s", 10 * Kbps},
		{"1bps", 1}, {"8b/s", 8}, {"0bps", 0}, {"2.5e3Mbps", 2500 * Mbps}, {"1_000Mbps", Gbps},
		{"100M", 100 * Mbps}, {"1T", Tbps}, {"1.5Kbps", 1500}, {"1.000000001Gbps", Gbps + 1},
	}
	for _, c := range rates {
		if got, err := ParseRate(c.in); err != nil || got != c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	sizes := []struct {
		in   string
		want Size
	}{
		{"64KiB", 64 * KiB}, {"8MB", 8 * MB}, {"1500", 1500}, {"4096B", 4096},
		{"1GB", GB}, {"2MiB", 2 * MiB}, {"1_000", 1000}, {"1kB", KB}, {"1KB", KB}, {"1TB", TB},
		{"1TiB", TiB}, {"1GiB", GiB}, {"1.5KB", 1500}, {"1.5KiB", 1536}, {"0.1KB", 100},
		{"4e3", 4000}, {"4e3B", 4000}, {"2.5MB", 2500 * KB}, {"0", 0}, {"0B", 0}, {"-0B", 0},
		{"1.000B", 1}, {"8 MB", 8 * MB}, {"1e-3MB", KB}, {"0.001MB", KB}, {".5KB", 500},
		// Exact decimal scaling: in float64 these are not whole numbers.
		{"1.1KB", 1100}, {"0.3KB", 300}, {"4.35MB", 4350 * KB}, {"1.15e3B", 1150},
	}
	for _, c := range sizes {
		if got, err := ParseSize(c.in); err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	durs := []struct {
		in   string
		want Duration
	}{
		{"1us", Microsecond}, {"300µs", 300 * Microsecond}, {"300μs", 300 * Microsecond},
		{"2.5ms", 2500 * Microsecond}, {"0", 0}, {"10ns", 10 * Nanosecond}, {"1s", Second},
		{"7ps", 7}, {"1.5ns", 1500}, {"0.1us", 100 * Nanosecond}, {"1e3ns", Microsecond},
	}
	for _, c := range durs {
		if got, err := ParseDuration(c.in); err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	cases := []struct {
		parse func(string) error
		in    string
		msg   string // a part of the error message
	}{
		// Rates: bits per second, lower-case b; B is bytes.
		{rate, "", "empty"},
		{rate, "fast", "does not start with a number"},
		{rate, "400", "needs a unit"},
		{rate, "400GBps", "rates are in bits per second"},
		{rate, "400GBPS", "rates are in bits per second"},
		{rate, "50GB/s", "rates are in bits per second"},
		{rate, "400GB", "rates are in bits per second"},
		{rate, "100B", "rates are in bits per second"},
		{rate, "400GbPS", "bps and b/s are lower-case"},
		{rate, "400Gbs", "unknown rate unit"},
		{rate, "400Gbit", "unknown rate unit"},
		{rate, "400Gb", "did you mean Gbps?"},
		{rate, "400Xbps", "unknown rate unit"},
		{rate, "400 G bps", "unknown rate unit"},
		{rate, "-1Gbps", "must not be negative"},
		{rate, "10 furlongs", "unknown rate unit"},
		{rate, "1e400Gbps", "too large"},
		{rate, "1e99999999999Gbps", "exponent"},
		{rate, "1.2.3Gbps", "not a number"},
		// Sizes: B-suffixed, upper-case B, whole bytes.
		{size, "-5MB", "must not be negative"},
		{size, "5 parsecs", "unknown size unit"},
		{size, "MB", "does not start with a number"},
		{size, "8Mb", "b is bits; sizes are in bytes (e.g. 8MB)"},
		{size, "8mb", "b is bits"},
		{size, "8kb", "b is bits"},
		{size, "8Kb", "b is bits"},
		{size, "8Gb", "b is bits"},
		{size, "8Mib", "b is bits"},
		{size, "8b", "b is bits"},
		{size, "8Mbit", "b is bits"},
		{size, "8M", "ambiguous"},
		{size, "8K", "ambiguous"},
		{size, "8G", "ambiguous"},
		{size, "8t", "ambiguous"},
		{size, "8mB", "did you mean MB"},
		{size, "8MIB", "did you mean MiB"},
		{size, "8bytes", "unknown size unit"},
		{size, "4KBB", "unknown size unit"},
		{size, "4096.5B", "whole number of bytes"},
		{size, "1.5B", "whole number of bytes"},
		{size, "1.5", "whole number of bytes"},
		{size, "0.0001KB", "whole number of bytes"},
		{size, "1e-3", "whole number of bytes"},
		{size, "1e30TB", "too large"},
		{size, "1" + strings.Repeat("0", 70), "significant digits"},
		// Durations: lower-case units.
		{duration, "5", "needs a unit"},
		{duration, "-1us", "must not be negative"},
		{duration, "1 fortnight", "unknown duration unit"},
		{duration, "1US", "did you mean us"},
		{duration, "1Ms", "did you mean ms"},
		{duration, "1MS", "did you mean ms"},
		{duration, "1NS", "did you mean ns"},
		{duration, "1S", "did you mean s"},
		{duration, "1Us", "ps, ns, us, µs, ms, s"},
		{duration, "1sec", "unknown duration unit"},
		{duration, "1e400s", "too large"},
	}
	for _, c := range cases {
		err := c.parse(c.in)
		if err == nil {
			t.Errorf("%q accepted", c.in)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: error %q does not say %q", c.in, err, c.msg)
		}
		if !strings.Contains(err.Error(), strconv.Quote(strings.TrimSpace(c.in))) && c.in != "" {
			t.Errorf("%q: error %q does not quote the value", c.in, err)
		}
	}
}

func rate(s string) error     { _, err := ParseRate(s); return err }
func size(s string) error     { _, err := ParseSize(s); return err }
func duration(s string) error { _, err := ParseDuration(s); return err }

func TestStringRoundTrip(t *testing.T) {
	for _, r := range []Rate{400 * Gbps, 25 * Gbps, 5 * Mbps, 1500 * Mbps} {
		back, err := ParseRate(r.String())
		if err != nil || back != r {
			t.Errorf("%v → %q → %v %v", int64(r), r.String(), back, err)
		}
	}
	for _, s := range []Size{64 * KiB, 8 * MB, 1500, GiB} {
		back, err := ParseSize(s.String())
		if err != nil || back != s {
			t.Errorf("%v → %q → %v %v", int64(s), s.String(), back, err)
		}
	}
	for _, d := range []Duration{Microsecond, 2500 * Nanosecond, 7, Second} {
		back, err := ParseDuration(d.String())
		if err != nil || back != d {
			t.Errorf("%v → %q → %v %v", int64(d), d.String(), back, err)
		}
	}
}

func TestSerializationTime(t *testing.T) {
	// 4178 B at 400 Gb/s = 33424 bits / 4e11 = 83.56 ns.
	if got := SerializationTime(4178, 400*Gbps); got != 83560 {
		t.Fatalf("got %d ps", got)
	}
	// Rounds up: 1 B at 3 b/s = 8/3 s.
	if got := SerializationTime(1, 3); got != 2666666666667 {
		t.Fatalf("got %d", got)
	}
	// Large: 1 GB at 1 Mb/s = 8000 s.
	if got := SerializationTime(GB, Mbps); got != 8000*Second {
		t.Fatalf("got %d", got)
	}
}

// FuzzParse: no input panics, and every accepted size prints back to
// itself (Size.String is exact).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"400Gbps", "1us", "64KiB", "1e3", "-", "1e", ".5ms", "400GBPS", "8Mb", "8mb",
		"4096.5B", "1.5B", "1US", "100G", "8M", "kB", "1e-999999999B", "0.1KB", "25 Gb/s",
		"300µs", "1_000", "1e+3KiB", "9" + "99999999999999999999", "1..2", "+1MB",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ParseRate(s)
		ParseDuration(s)
		v, err := ParseSize(s)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, v)
		}
		back, err := ParseSize(v.String())
		if err != nil || back != v {
			t.Fatalf("ParseSize(%q) = %d prints %q, which parses as %d, %v", s, v, v.String(), back, err)
		}
	})
}

func TestZeroRateNeedsNoUnit(t *testing.T) {
	if r, err := ParseRate("0"); err != nil || r != 0 {
		t.Fatalf("ParseRate(0) = %v, %v", r, err)
	}
	if _, err := ParseRate("5"); err == nil {
		t.Fatal("a bare 5 was accepted as a rate")
	}
}
