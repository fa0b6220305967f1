package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Pick chooses what telemetry keeps: the Top busiest ports (slowest
// flows), or those listed (ports as "leaf0->spine1", flows by ID). In YAML
// it is a number (8), "top 8", or a list.
type Pick struct {
	Top  int
	List []string
}

// IsZero reports an empty pick (nothing kept).
func (p Pick) IsZero() bool { return p.Top == 0 && len(p.List) == 0 }

// UnmarshalYAML reads a number, "top N" or a list (the walker has checked
// the form).
func (p *Pick) UnmarshalYAML(unmarshal func(any) error) error {
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	got, err := pickOf(v)
	if err != nil {
		return err
	}
	*p = got
	return nil
}

// pickOf is the pick a decoded YAML or JSON value means.
func pickOf(v any) (Pick, error) {
	switch x := v.(type) {
	case nil:
		return Pick{}, nil
	case uint64:
		if x > math.MaxInt32 {
			return Pick{}, fmt.Errorf("%d is too large", x)
		}
		return Pick{Top: int(x)}, nil
	case int64:
		if x > math.MaxInt32 || x < math.MinInt32 {
			return Pick{}, fmt.Errorf("%d is out of range", x)
		}
		return Pick{Top: int(x)}, nil
	case int:
		if x > math.MaxInt32 || x < math.MinInt32 {
			return Pick{}, fmt.Errorf("%d is out of range", x)
		}
		return Pick{Top: x}, nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > math.MaxInt32 {
			return Pick{}, fmt.Errorf("needs a whole number, \"top N\" or a list, got %v", x)
		}
		return Pick{Top: int(x)}, nil
	case string:
		n, ok := parseTop(x)
		if !ok {
			return Pick{}, fmt.Errorf("needs a number, \"top N\" or a list, got %q", x)
		}
		return Pick{Top: n}, nil
	case []any:
		out := Pick{List: make([]string, 0, len(x))}
		for _, e := range x {
			out.List = append(out.List, fmt.Sprint(e))
		}
		return out, nil
	}
	return Pick{}, fmt.Errorf("needs a number, \"top N\" or a list")
}

// parseTop reads "top N" (or a bare N).
func parseTop(s string) (int, bool) {
	f := strings.Fields(s)
	if len(f) == 2 && f[0] == "top" {
		f = f[1:]
	}
	if len(f) != 1 {
		return 0, false
	}
	n, err := strconv.Atoi(f[0])
	return n, err == nil && n >= 0
}

// MarshalJSON writes a pick as YAML reads it back: the number, or the list.
func (p Pick) MarshalJSON() ([]byte, error) {
	if len(p.List) > 0 {
		return json.Marshal(p.List)
	}
	return json.Marshal(p.Top)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Pick) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	got, err := pickOf(v)
	if err != nil {
		return err
	}
	*p = got
	return nil
}

// PortPair splits a port's name "node->peer" (or "node→peer") into its
// two ends.
func PortPair(name string) (node, peer string, ok bool) {
	for _, sep := range []string{"->", "→"} {
		if a, b, found := strings.Cut(name, sep); found {
			a, b = strings.TrimSpace(a), strings.TrimSpace(b)
			return a, b, a != "" && b != ""
		}
	}
	return "", "", false
}
