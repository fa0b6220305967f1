package fabric

import (
	"testing"
	"unsafe"
)

// The fields of Port that every hop reads sit together, so a hop touches
// few of a port's cache lines (ports are 1,024-byte objects, line-aligned):
// where frames go (to, Peer) and the wire in the first line, the egress's
// flags in one, the ingress's thresholds in one, each priority's queue with
// its bytes in one line, and the per-frame counters beside the frame.
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
	// An enqueue onto a busy port reads that line and its queue's only:
	// the flags, the thresholds, the bytes queued and their maximum.
	if l := line(unsafe.Offsetof(pt.txWire)); l != line(unsafe.Offsetof(pt.kmax)+7) || l != line(unsafe.Offsetof(pt.total)) ||
		l != line(unsafe.Offsetof(pt.maxQueue)+7) || l != line(unsafe.Offsetof(pt.observed)) || l != line(unsafe.Offsetof(pt.dead)) {
		t.Errorf("txWire at %d, kmax at %d, total at %d, maxQueue at %d, observed at %d: not in one line",
			unsafe.Offsetof(pt.txWire), unsafe.Offsetof(pt.kmax), unsafe.Offsetof(pt.total), unsafe.Offsetof(pt.maxQueue), unsafe.Offsetof(pt.observed))
	}
	if line(unsafe.Offsetof(pt.Index)) != line(unsafe.Offsetof(pt.headroom)+7) {
		t.Errorf("Index at %d, headroom at %d: not in one line", unsafe.Offsetof(pt.Index), unsafe.Offsetof(pt.headroom))
	}
	if o := unsafe.Offsetof(pt.ingress); o%64 != 0 {
		t.Errorf("ingress at %d: not one line", o)
	}
	// The per-frame counters sit beside the frame's own fields.
	if line(unsafe.Offsetof(pt.txPackets)) != 1 || line(unsafe.Offsetof(pt.txBytes)+7) != 1 || line(unsafe.Offsetof(pt.maxQueue)) != line(unsafe.Offsetof(pt.txWire)) {
		t.Errorf("txPackets at %d, txBytes at %d, maxQueue at %d: not in the frame's lines",
			unsafe.Offsetof(pt.txPackets), unsafe.Offsetof(pt.txBytes), unsafe.Offsetof(pt.maxQueue))
	}
}

// A switch hop reads the route lookup (table, pins) in the first line of
// the switch and the buffer's accounting (cfg, used, MaxUsed, headroom,
// HashSeed, Ports) in the second. Switches are 320-byte objects, which
// start on a line.
func TestSwitchLayout(t *testing.T) {
	var s Switch
	line := func(off uintptr) uintptr { return off / 64 }
	if sz := unsafe.Sizeof(s); sz > 320 {
		t.Errorf("Switch is %d bytes, more than its 320-byte size class", sz)
	}
	if line(unsafe.Offsetof(s.pins)+7) != 0 {
		t.Errorf("pins at %d: not in the first line", unsafe.Offsetof(s.pins))
	}
	if first, last := unsafe.Offsetof(s.cfg), unsafe.Offsetof(s.Ports)+unsafe.Sizeof(s.Ports)-1; line(first) != 1 || line(last) != 1 {
		t.Errorf("cfg at %d, Ports ending at %d: not in the second line", first, last)
	}
}

// A hop reads and writes one line of a packet: the fields up to INT and
// enq, which holds the next arrival while the packet is on a wire.
// Packets are 128-byte objects, which start on a line.
func TestPacketLayout(t *testing.T) {
	var p Packet
	if s := unsafe.Sizeof(p); s > 128 {
		t.Errorf("Packet is %d bytes, more than its 128-byte size class", s)
	}
	for name, end := range map[string]uintptr{
		"next":    unsafe.Offsetof(p.next) + unsafe.Sizeof(p.next),
		"arrival": unsafe.Offsetof(p.arrival) + unsafe.Sizeof(p.arrival),
		"INT":     unsafe.Offsetof(p.INT) + unsafe.Sizeof(p.INT),
		"enq":     unsafe.Offsetof(p.enq) + unsafe.Sizeof(p.enq),
		"DstQP":   unsafe.Offsetof(p.DstQP) + unsafe.Sizeof(p.DstQP),
	} {
		if end > 64 {
			t.Errorf("%s ends at byte %d: not in the first line", name, end)
		}
	}
}
