package fabric

import (
	"testing"
	"unsafe"
)

// The fields of Port that every hop reads sit together, so a hop touches
// few of a port's cache lines (ports are 1,024-byte objects, line-aligned):
// where frames go (to, Peer) and the wire in the first line, the egress's
// flags in one, the ingress's thresholds in one, each priority's queue with
// its bytes in one line, and the per-frame counters in one line.
func TestPortLayout(t *testing.T) {
	var pt Port
	line := func(off uintptr) uintptr { return off / 64 }
	if s := unsafe.Sizeof(pt); s > 1024 {
		t.Errorf("Port is %d bytes, more than its 1,024-byte size class", s)
	}
	if line(unsafe.Offsetof(pt.pipe)+unsafe.Sizeof(pt.pipe)-1) != 0 || line(unsafe.Offsetof(pt.to)) != 0 {
		t.Errorf("pipe at %d, to at %d: not in the first line", unsafe.Offsetof(pt.pipe), unsafe.Offsetof(pt.to))
	}
	q := unsafe.Offsetof(pt.queues)
	size := unsafe.Sizeof(pt.queues[0])
	for pr := range uintptr(NumPrio) {
		if first, last := q+pr*size, q+(pr+1)*size-1; line(first) != line(last) {
			t.Errorf("queue %d spans lines %d–%d", pr, line(first), line(last))
		}
	}
	// The egress's flags and ECN thresholds share a line; so do the
	// ingress's index, pause flags and thresholds, and its bytes.
	if line(unsafe.Offsetof(pt.txWire)) != line(unsafe.Offsetof(pt.pmax)+7) {
		t.Errorf("txWire at %d, pmax at %d: not in one line", unsafe.Offsetof(pt.txWire), unsafe.Offsetof(pt.pmax))
	}
	if line(unsafe.Offsetof(pt.Index)) != line(unsafe.Offsetof(pt.headroom)+7) {
		t.Errorf("Index at %d, headroom at %d: not in one line", unsafe.Offsetof(pt.Index), unsafe.Offsetof(pt.headroom))
	}
	if o := unsafe.Offsetof(pt.ingress); o%64 != 0 {
		t.Errorf("ingress at %d: not one line", o)
	}
	c := unsafe.Offsetof(pt.C)
	tx, bytes, maxq := c+unsafe.Offsetof(pt.C.TxPackets), c+unsafe.Offsetof(pt.C.TxBytes), c+unsafe.Offsetof(pt.C.MaxQueueBytes)
	if line(tx) != line(bytes) || line(tx) != line(maxq+7) {
		t.Errorf("TxPackets, TxBytes and MaxQueueBytes at %d, %d, %d: not in one line", tx, bytes, maxq)
	}
}
