// Package units parses and prints the quantities people type into scenario
// files: link rates (400Gbps), sizes (64KiB, 8MB) and durations (1us).
//
// All three are plain integers underneath so that the simulator never does
// float arithmetic on time: Rate is bits per second, Size is bytes and Duration
// is picoseconds (the simulator's clock unit).
//
// Units are case-sensitive where case carries meaning, so that the classic
// bits-versus-bytes slip is caught instead of being off by 8:
//
//   - sizes are bytes and end in an upper-case B: B, kB or KB, MB, GB, TB
//     (powers of ten, as nccl-tests and disk vendors count) and KiB, MiB,
//     GiB, TiB (powers of two, with an upper-case K as IEC writes it: kiB
//     is refused like KIB). A bare number is bytes.
//     A lower-case b (8Mb, 8mb, 8Mib) is bits and an error; so are the bare
//     K, M, G, T shorthands, which would be ambiguous between 10^6 and 2^20
//     (and mean powers of ten in a rate). A size must come to a whole
//     number of bytes (1.5KB is fine, 1.5B is not).
//   - rates are bits per second and end in bps or b/s with a lower-case b,
//     after an optional prefix in either case (Gbps, gbps, Gb/s), or are the
//     prefix alone as a shorthand (100G). An upper-case B (GBps, GB/s,
//     400GBPS) is bytes and an error. A bare number is an error. A rate
//     must come to a whole number of bits per second (1.5Kbps is fine,
//     1.5bps is not).
//   - durations take ps, ns, us, µs (or μs), ms, s in lower case only; a
//     bare number must be 0. A duration must come to a whole number of
//     picoseconds, the simulator's clock unit (1.5ns is fine, 1.5ps is
//     not).
//
// Numbers are decimal, with an optional fraction and exponent (1.5e3) and
// _ separators, and are scaled exactly (no float rounding on the way), so
// nothing is rounded: a value finer than its base unit is refused. A bare
// number too large for any unit is refused as too large, not for its
// missing unit.
package units

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"
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

// sizeUnits: exact spellings only.
var sizeUnits = map[string]int64{
	"B":  1,
	"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
}

const sizeHint = "B, kB or KB, MB, GB, TB, KiB, MiB, GiB, TiB"

// ratePrefixes: the prefix of bps, b/s or the shorthand, any case.
var ratePrefixes = map[string]int64{"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}

const rateHint = "bps, Kbps, Mbps, Gbps, Tbps, the b/s forms such as Gb/s, or the shorthand 100G"

var durationUnits = map[string]int64{
	"ps": 1, "ns": 1e3, "us": 1e6, "µs": 1e6, "μs": 1e6, "ms": 1e9, "s": 1e12,
}

const durationHint = "ps, ns, us, µs, ms, s"

// Bounds on how a number may be written: enough for any real value, small
// enough that exact arithmetic on it stays cheap.
const (
	maxDigits   = 64
	maxExponent = 1000
	// maxValue keeps every parsed quantity far from overflowing int64 when
	// the simulator adds or scales it.
	maxValue = math.MaxInt64 / 2
)

// decimal is a number as written: (−1)^neg × mant × 10^exp.
type decimal struct {
	text string // as written, for suggestions
	neg  bool
	mant *big.Int
	exp  int
}

// splitNumber splits "400Gbps" into 400 and "Gbps".
func splitNumber(s string) (decimal, string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return decimal{}, "", fmt.Errorf("empty value")
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
		return decimal{}, "", fmt.Errorf("%q does not start with a number", s)
	}
	d, err := parseDecimal(num)
	if err != nil {
		return decimal{}, "", fmt.Errorf("%q %v", s, err)
	}
	d.text = s[:i]
	return d, strings.TrimSpace(s[i:]), nil
}

// parseDecimal reads [+-]digits[.digits][e[+-]digits] exactly.
func parseDecimal(num string) (decimal, error) {
	var d decimal
	s := num
	if s != "" && (s[0] == '+' || s[0] == '-') {
		d.neg = s[0] == '-'
		s = s[1:]
	}
	mant, expText, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, expText, hasExp = strings.Cut(s, "E")
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return d, fmt.Errorf("is not a number")
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > maxDigits {
		return d, fmt.Errorf("has more than %d significant digits", maxDigits)
	}
	d.exp = -len(frac)
	if hasExp {
		e, err := strconv.Atoi(expText)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return d, fmt.Errorf("is not a number")
		}
		if err != nil || e > maxExponent || e < -maxExponent {
			return d, fmt.Errorf("has an exponent beyond ±%d", maxExponent)
		}
		d.exp += e
	}
	d.mant = new(big.Int)
	if digits != "" {
		d.mant.SetString(digits, 10)
	}
	return d, nil
}

// scale multiplies d by the unit m: the exact quotient and whether a
// fraction of the base unit was left over (rounded half up into q).
func (d decimal) scale(m int64) (q int64, exact, tooLarge bool) {
	num := new(big.Int).Mul(d.mant, big.NewInt(m))
	den := big.NewInt(1)
	ten := big.NewInt(10)
	if d.exp >= 0 {
		num.Mul(num, new(big.Int).Exp(ten, big.NewInt(int64(d.exp)), nil))
	} else {
		den.Exp(ten, big.NewInt(int64(-d.exp)), nil)
	}
	qb, r := new(big.Int).QuoRem(num, den, new(big.Int))
	exact = r.Sign() == 0
	if r.Lsh(r, 1).Cmp(den) >= 0 {
		qb.Add(qb, big.NewInt(1))
	}
	if !qb.IsInt64() || qb.Int64() > maxValue {
		return 0, exact, true
	}
	return qb.Int64(), exact, false
}

// value scales a parsed number by unit multiplier m, rounding to the nearest
// base unit, and checks sign and size. exact is false when a fraction of the
// base unit was rounded away.
func value(s string, d decimal, m int64, kind string) (x int64, exact bool, err error) {
	if d.neg && d.mant.Sign() != 0 {
		return 0, false, fmt.Errorf("%q: %s must not be negative", s, kind)
	}
	x, exact, tooLarge := d.scale(m)
	if tooLarge {
		return 0, false, fmt.Errorf("%q: %s is too large", s, kind)
	}
	return x, exact, nil
}

// caseHint suggests the correct spelling of a unit written in the wrong
// case, if there is exactly one.
func caseHint(u string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(u, k) {
			return k
		}
	}
	return ""
}

func keys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ParseRate parses "400Gbps", "25 Gb/s", "100G" (see the package rules). A
// bare number other than 0 is rejected because bits-vs-bytes mistakes are
// common, and so is an upper-case B (bytes).
func ParseRate(s string) (Rate, error) {
	d, u, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if u == "" {
		if d.mant.Sign() == 0 {
			return 0, nil // zero needs no unit (e.g. "no scale-up domain")
		}
		if err := bareRange(s, d, "rate"); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%q: a rate needs a unit (e.g. 400Gbps)", s)
	}
	if strings.Contains(u, "B") {
		return 0, fmt.Errorf("%q: rates are in bits per second, written with a lower-case b (e.g. 400Gbps or 25Gb/s); B is bytes", s)
	}
	prefix, ok := strings.CutSuffix(u, "bps")
	if !ok {
		prefix, ok = strings.CutSuffix(u, "b/s")
	}
	if !ok && len(u) != 1 {
		prefix = "?" // neither bps, b/s nor a one-letter shorthand
	}
	m, known := ratePrefixes[strings.ToLower(prefix)]
	if !known || (!ok && prefix == "") {
		msg := fmt.Sprintf("%q: unknown rate unit %q (use %s)", s, u, rateHint)
		lower := strings.ToLower(u)
		if strings.HasSuffix(lower, "bps") || strings.HasSuffix(lower, "b/s") {
			msg += "; bps and b/s are lower-case"
		} else if p, ok := strings.CutSuffix(u, "b"); ok && len(p) == 1 && ratePrefixes[lower[:1]] > 0 {
			msg += fmt.Sprintf("; did you mean %sbps?", p)
		}
		return 0, errors.New(msg)
	}
	x, exact, err := value(s, d, m, "rate")
	if err != nil {
		return 0, err
	}
	if !exact {
		return 0, fmt.Errorf("%q: not a whole number of bits per second; rates are counted in whole bits per second (1.5Kbps is 1500bps)", s)
	}
	return Rate(x), nil
}

// ParseSize parses "64KiB", "8MB", "1500", "4096B" (see the package rules):
// B-suffixed units only, a whole number of bytes.
func ParseSize(s string) (Size, error) {
	d, u, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	m := int64(1)
	if u != "" {
		var ok bool
		if m, ok = sizeUnits[u]; !ok {
			return 0, sizeUnitError(s, d, u)
		}
	}
	x, exact, err := value(s, d, m, "size")
	if err != nil {
		return 0, err
	}
	if !exact {
		return 0, fmt.Errorf("%q: not a whole number of bytes; sizes are counted in whole bytes", s)
	}
	return Size(x), nil
}

// sizeUnitError explains a unit ParseSize does not take.
func sizeUnitError(s string, d decimal, u string) error {
	// Bits: an optional prefix, an optional i, then b, bit or bits.
	base, bits := strings.CutSuffix(u, "bits")
	if !bits {
		base, bits = strings.CutSuffix(u, "bit")
	}
	if !bits {
		base, bits = strings.CutSuffix(u, "b")
	}
	if bits {
		base, _ = strings.CutSuffix(base, "i")
	}
	if _, prefix := ratePrefixes[strings.ToLower(base)]; bits && prefix {
		return fmt.Errorf("%q: b is bits; sizes are in bytes (e.g. 8MB)", s)
	}
	if len(u) == 1 && strings.Contains("KkMmGgTt", u) {
		p := strings.ToUpper(u)
		return fmt.Errorf("%q: %s alone is ambiguous for a size; write %s%sB (powers of ten) or %s%siB (powers of two)", s, u, d.text, p, d.text, p)
	}
	if k := caseHint(u, keys(sizeUnits)); k != "" {
		return fmt.Errorf("%q: unknown size unit %q (did you mean %s? size units are case-sensitive: %s)", s, u, k, sizeHint)
	}
	return fmt.Errorf("%q: unknown size unit %q (use %s)", s, u, sizeHint)
}

// ParseDuration parses "1us", "300µs", "2.5ms", "0". A bare non-zero number
// is rejected; units are lower-case.
func ParseDuration(s string) (Duration, error) {
	d, u, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if u == "" {
		if d.mant.Sign() == 0 {
			return 0, nil
		}
		if err := bareRange(s, d, "duration"); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%q: a duration needs a unit (%s)", s, durationHint)
	}
	m, ok := durationUnits[u]
	if !ok {
		if k := caseHint(u, keys(durationUnits)); k != "" {
			return 0, fmt.Errorf("%q: unknown duration unit %q (did you mean %s? duration units are lower-case: %s)", s, u, k, durationHint)
		}
		return 0, fmt.Errorf("%q: unknown duration unit %q (use %s)", s, u, durationHint)
	}
	x, exact, err := value(s, d, m, "duration")
	if err != nil {
		return 0, err
	}
	if !exact {
		return 0, fmt.Errorf("%q: finer than a picosecond; durations are whole picoseconds, the simulator's clock unit (1.5ns is 1500ps)", s)
	}
	return Duration(x), nil
}

// bareRange refuses a bare number that no unit could make valid (too
// large even in the base unit, or negative) for that reason rather than
// for the unit it lacks.
func bareRange(s string, d decimal, kind string) error {
	_, _, err := value(s, d, 1, kind)
	return err
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

// String prints the duration in the largest unit that keeps it readable,
// exactly (to the picosecond), so that it parses back to itself.
func (d Duration) String() string {
	if d == 0 {
		return "0s"
	}
	sign, a := "", uint64(d)
	if d < 0 {
		sign, a = "-", -uint64(d)
	}
	for _, u := range []struct {
		v    uint64
		name string
	}{{uint64(Second), "s"}, {uint64(Millisecond), "ms"}, {uint64(Microsecond), "us"}, {uint64(Nanosecond), "ns"}} {
		if a >= u.v {
			return sign + exactQuotient(a, u.v) + u.name
		}
	}
	return sign + strconv.FormatUint(a, 10) + "ps"
}

// exactQuotient writes a/unit (unit a power of ten) in decimal without
// rounding or trailing zeros: 2500/1000 is "2.5".
func exactQuotient(a, unit uint64) string {
	q, r := a/unit, a%unit
	if r == 0 {
		return strconv.FormatUint(q, 10)
	}
	frac := strconv.FormatUint(unit+r, 10)[1:] // r with the unit's leading zeros
	return strconv.FormatUint(q, 10) + "." + strings.TrimRight(frac, "0")
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
