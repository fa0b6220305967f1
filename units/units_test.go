package units

import "testing"

func TestParse(t *testing.T) {
	rates := map[string]Rate{"400Gbps": 400 * Gbps, "25 Gb/s": 25 * Gbps, "100G": 100 * Gbps, "1.5Tbps": 1500 * Gbps, "5Mbps": 5 * Mbps}
	for s, want := range rates {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	sizes := map[string]Size{"64KiB": 64 * KiB, "8MB": 8 * MB, "1500": 1500, "4096B": 4096, "1GB": GB, "2MiB": 2 * MiB, "1_000": 1000}
	for s, want := range sizes {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	durs := map[string]Duration{"1us": Microsecond, "300µs": 300 * Microsecond, "2.5ms": 2500 * Microsecond, "0": 0, "10ns": 10 * Nanosecond, "1s": Second}
	for s, want := range durs {
		if got, err := ParseDuration(s); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, bad := range []string{"", "fast", "400", "400GBps", "-1Gbps", "10 furlongs", "1e400Gbps"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"-5MB", "5 parsecs", "MB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"5", "-1us", "1 fortnight"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

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

func FuzzParse(f *testing.F) {
	for _, s := range []string{"400Gbps", "1us", "64KiB", "1e3", "-", "1e", ".5ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ParseRate(s)
		ParseSize(s)
		ParseDuration(s)
	})
}
