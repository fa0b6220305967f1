package nslab

import (
	"context"
	"fmt"
	"strconv"
)

// Shapers the lab knows, in the order it tries them.
var shapers = []string{"tbf", "htb"}

// shapeLines are the tc commands that shape e's egress with qdisc (tbf:
// one token bucket holding Limit bytes; htb: one class at the rate over a
// bfifo of Limit bytes, the same thing built from the pieces that
// kernels without tbf have).
func shapeLines(qdisc string, e End) []string {
	rate := strconv.FormatInt(e.Rate, 10) + "bit"
	burst := strconv.FormatInt(e.Burst, 10)
	limit := strconv.FormatInt(e.Limit, 10)
	switch qdisc {
	case "tbf":
		return []string{fmt.Sprintf("qdisc replace dev %s root tbf rate %s burst %s limit %s", e.Dev, rate, burst, limit)}
	default:
		return []string{
			fmt.Sprintf("qdisc replace dev %s root handle 1: htb default 1", e.Dev),
			fmt.Sprintf("class replace dev %s parent 1: classid 1:1 htb rate %s ceil %s burst %s cburst %s", e.Dev, rate, rate, burst, burst),
			fmt.Sprintf("qdisc replace dev %s parent 1:1 handle 10: bfifo limit %s", e.Dev, limit),
		}
	}
}

// probeShaper finds the first shaper of shapers the kernel has by shaping
// e with it; e is then shaped.
func (b *builder) probeShaper(ctx context.Context, e End) (string, error) {
	try := shapers
	if b.o.Shaper != "" {
		try = []string{b.o.Shaper}
	}
	for _, q := range try {
		_, err := b.run(ctx, tcBatch(e.NS, shapeLines(q, e)))
		if err == nil {
			return q, nil
		}
		if notFound(err) {
			return "", &MissingCommandError{Name: "tc"}
		}
		if !unknownQdisc(err) {
			return "", fmt.Errorf("shaping %s in %s with %s: %w", e.Dev, e.NS, q, err)
		}
		fmt.Fprintf(b.log, "the kernel has no %s qdisc; trying the next shaper\n", q)
	}
	if b.o.Shaper != "" {
		return "", fmt.Errorf("the kernel has no %s qdisc (sch_%s)", b.o.Shaper, b.o.Shaper)
	}
	return "", ErrNoShaper
}

// shape shapes every link end, one tc process per namespace.
func (b *builder) shape(ctx context.Context) error {
	l := b.l
	if len(l.Links) == 0 {
		return nil
	}
	first := l.Links[0].A
	q, err := b.probeShaper(ctx, first)
	if err != nil {
		return err
	}
	l.Qdisc = q
	byNS := map[string][]string{}
	var order []string
	for _, lk := range l.Links {
		for _, e := range []End{lk.A, lk.B} {
			if e.NS == first.NS && e.Dev == first.Dev {
				continue
			}
			if _, ok := byNS[e.NS]; !ok {
				order = append(order, e.NS)
			}
			byNS[e.NS] = append(byNS[e.NS], shapeLines(q, e)...)
		}
	}
	return b.each(ctx, order, func(ns string) error {
		if _, err := b.run(ctx, tcBatch(ns, byNS[ns])); err != nil {
			return fmt.Errorf("shaping the links of %s: %w", ns, err)
		}
		return nil
	})
}
