// Package units parses and prints the quantities people type into scenario
// files: link rates (400Gbps), sizes (64KiB, 8MB) and durations (1us).
//
// All three are plain integers underneath so that the simulator never does
// float arithmetic on time: Rate is bits per second, Size is bytes and Duration
// is picoseconds (the simulator's clock unit).
package units

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Rate is a data rate in bits per second.
type Rate int64

// Size is an amount of data in bytes.
type Size int64

// Duration is a span of simulated time in picoseconds.
type Duration int64

// Common constants.
const (
	Bps  Rate = 1
	Kbps Rate = 1e3
	Mbps Rate = 1e6
	Gbps Rate = 1e9
	Tbps Rate = 1e12

	Byte Size = 1
	KB   Size = 1e3
	MB   Size = 1e6
	GB   Size = 1e9
	TB   Size = 1e12
	KiB  Size = 1 << 10
	MiB  Size = 1 << 20
	GiB  Size = 1 << 30
	TiB  Size = 1 << 40

	Picosecond  Duration = 1
	Nanosecond  Duration = 1e3
	Microsecond Duration = 1e6
	Millisecond Duration = 1e9
	Second      Duration = 1e12
)

var rateUnits = map[string]float64{
	"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12,
	"b/s": 1, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "tb/s": 1e12,
	"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
}

// Size units are case-sensitive in the B/b sense only for clarity; we accept
// "B" suffix forms. Decimal (KB, MB) are powers of 10 as nccl-tests and disk
// vendors use; binary (KiB, MiB) are powers of 2.
var sizeUnits = map[string]float64{
	"": 1, "b": 1, "byte": 1, "bytes": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
}

var durationUnits = map[string]float64{
	"ps": 1, "ns": 1e3, "us": 1e6, "µs": 1e6, "μs": 1e6, "ms": 1e9, "s": 1e12,
}

// splitNumber splits "400Gbps" into 400 and "Gbps".
func splitNumber(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "", fmt.Errorf("empty value")
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' || c == '_' {
			// 'e' is only part of the number if followed by a digit or sign.
			if c == 'e' || c == 'E' {
				if i+1 >= len(s) || !(s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+') {
					break
				}
			}
			i++
			continue
		}
		break
	}
	num := strings.ReplaceAll(s[:i], "_", "")
	if num == "" {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("%q is not a number", s)
	}
	return v, strings.TrimSpace(s[i:]), nil
}

func scale(s string, v float64, unit string, table map[string]float64, kind, hint string) (int64, error) {
	m, ok := table[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("%q: unknown %s unit %q (use %s)", s, kind, unit, hint)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q: %s must not be negative", s, kind)
	}
	x := v * m
	if x > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q: %s is too large", s, kind)
	}
	return int64(math.Round(x)), nil
}

// ParseRate parses "400Gbps", "25 Gb/s", "100G". A bare number is rejected
// because bits-vs-bytes mistakes are common.
func ParseRate(s string) (Rate, error) {
	v, u, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if u == "" {
		return 0, fmt.Errorf("%q: a rate needs a unit (e.g. 400Gbps)", s)
	}
	if strings.HasSuffix(u, "B/s") || strings.HasSuffix(u, "Bps") {
		return 0, fmt.Errorf("%q: rates are in bits per second (e.g. 400Gbps), not bytes", s)
	}
	x, err := scale(s, v, u, rateUnits, "rate", "bps, Kbps, Mbps, Gbps, Tbps")
	return Rate(x), err
}

// ParseSize parses "64KiB", "8MB", "1500", "4096B".
func ParseSize(s string) (Size, error) {
	v, u, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	x, err := scale(s, v, u, sizeUnits, "size", "B, KB, MB, GB, KiB, MiB, GiB")
	return Size(x), err
}

// ParseDuration parses "1us", "300µs", "2.5ms", "0". A bare non-zero number
// is rejected.
func ParseDuration(s string) (Duration, error) {
	v, u, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if u == "" {
		if v == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("%q: a duration needs a unit (ps, ns, us, ms, s)", s)
	}
	x, err := scale(s, v, u, durationUnits, "duration", "ps, ns, us, ms, s")
	return Duration(x), err
}

// String prints the rate in the largest unit that keeps it readable.
func (r Rate) String() string {
	switch {
	case r >= Tbps && r%Tbps == 0:
		return fmt.Sprintf("%dTbps", r/Tbps)
	case r >= Gbps:
		return trimFloat(float64(r)/1e9) + "Gbps"
	case r >= Mbps:
		return trimFloat(float64(r)/1e6) + "Mbps"
	case r >= Kbps:
		return trimFloat(float64(r)/1e3) + "Kbps"
	}
	return fmt.Sprintf("%dbps", int64(r))
}

// String prints the size with the unit that gives the smallest exact
// number (8MB rather than 7812.5KiB; 64KiB rather than 65536B).
func (s Size) String() string {
	best, name := int64(s), "B"
	for _, u := range []struct {
		v Size
		n string
	}{{KiB, "KiB"}, {KB, "KB"}, {MiB, "MiB"}, {MB, "MB"}, {GiB, "GiB"}, {GB, "GB"}, {TiB, "TiB"}, {TB, "TB"}} {
		if s >= u.v && s%u.v == 0 && int64(s/u.v) <= best {
			best, name = int64(s/u.v), u.n
		}
	}
	return fmt.Sprintf("%d%s", best, name)
}

// String prints the duration in the largest unit that keeps it readable.
func (d Duration) String() string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a == 0:
		return "0s"
	case a >= Second:
		return trimFloat(float64(d)/1e12) + "s"
	case a >= Millisecond:
		return trimFloat(float64(d)/1e9) + "ms"
	case a >= Microsecond:
		return trimFloat(float64(d)/1e6) + "us"
	case a >= Nanosecond:
		return trimFloat(float64(d)/1e3) + "ns"
	}
	return fmt.Sprintf("%dps", int64(d))
}

// Seconds converts to float seconds for reporting.
func (d Duration) Seconds() float64 { return float64(d) / 1e12 }

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// UnmarshalText lets YAML/JSON decoders read human units.
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := ParseRate(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// UnmarshalText lets YAML/JSON decoders read human units.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// UnmarshalText lets YAML/JSON decoders read human units.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalText prints human units so that round-trips are readable.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// MarshalText prints human units so that round-trips are readable.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalText prints human units so that round-trips are readable.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// SerializationTime is how long size bytes take on a link of rate r, in ps,
// rounded up so that a link never runs faster than its rate.
func SerializationTime(size Size, r Rate) Duration {
	if r <= 0 || size <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(size)*8, 1e12)
	if hi >= uint64(r) {
		return Duration(math.MaxInt64)
	}
	q, rem := bits.Div64(hi, lo, uint64(r))
	if rem != 0 {
		q++
	}
	return Duration(q)
}

// BytesIn is how many whole bytes a link of rate r carries in d (rounded
// down), computed in integers.
func BytesIn(r Rate, d Duration) int64 {
	if r <= 0 || d <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(r), uint64(d))
	if hi >= 8e12 {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, 8e12)
	return int64(q)
}
