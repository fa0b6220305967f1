package units

import (
	"strings"
	"testing"
)

// A size unit in the wrong case is refused with the right spelling, kiB
// as KIB is: the IEC prefix is an upper-case Ki.
func TestKiBIsCaseSensitive(t *testing.T) {
	for _, in := range []string{"1kiB", "1KIB"} {
		_, err := ParseSize(in)
		if err == nil || !strings.Contains(err.Error(), "did you mean KiB? size units are case-sensitive") {
			t.Errorf("ParseSize(%q): %v", in, err)
		}
	}
}

// Nothing finer than the base unit is rounded away: a duration is whole
// picoseconds and a rate whole bits per second, as a size is whole bytes.
func TestFinerThanTheBaseUnitIsRefused(t *testing.T) {
	for _, in := range []string{"0.0001ps", "1.5ps", "0.5ps", "1.0000000000001us", "1e-400s"} {
		_, err := ParseDuration(in)
		if err == nil || !strings.Contains(err.Error(), "finer than a picosecond") {
			t.Errorf("ParseDuration(%q): %v", in, err)
		}
	}
	for _, in := range []string{"0.0001bps", "1.5bps", "0.5b/s", "1.0000000001Gbps", "1e-400G"} {
		_, err := ParseRate(in)
		if err == nil || !strings.Contains(err.Error(), "not a whole number of bits per second") {
			t.Errorf("ParseRate(%q): %v", in, err)
		}
	}
}

// A bare number too large for any unit is refused for its range, not for
// the unit it lacks.
func TestBareNumberOutOfRange(t *testing.T) {
	if _, err := ParseDuration("1e400"); err == nil || !strings.Contains(err.Error(), `"1e400": duration is too large`) {
		t.Errorf("ParseDuration(1e400): %v", err)
	}
	if _, err := ParseRate("1e400"); err == nil || !strings.Contains(err.Error(), `"1e400": rate is too large`) {
		t.Errorf("ParseRate(1e400): %v", err)
	}
	// In range, the unit is what is missing.
	if _, err := ParseDuration("1e3"); err == nil || !strings.Contains(err.Error(), "needs a unit") {
		t.Errorf("ParseDuration(1e3): %v", err)
	}
}

// Duration.String is exact, so that every duration parses back to itself
// now that nothing is rounded (float formatting lost picoseconds past
// 2^53 ps, about 2.5 hours).
func TestDurationStringExact(t *testing.T) {
	for _, d := range []Duration{1, 999, 1500, 2500 * Nanosecond, Second + 1, -3 * Millisecond / 2,
		9007199254740993, 1<<62 - 1, 4611686018427387903, 123456789012345678} {
		back, err := ParseDuration(strings.TrimPrefix(d.String(), "-"))
		if d < 0 {
			back = -back
		}
		if err != nil || back != d {
			t.Errorf("%d prints %q, which parses as %d, %v", int64(d), d.String(), back, err)
		}
	}
	for d, want := range map[Duration]string{2500 * Nanosecond: "2.5us", Second: "1s", 7: "7ps", -1500: "-1.5ns", 1234567: "1.234567us"} {
		if got := d.String(); got != want {
			t.Errorf("%d prints %q, want %q", int64(d), got, want)
		}
	}
}
