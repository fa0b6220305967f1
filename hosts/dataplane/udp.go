package dataplane

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Datagram layout (big-endian), padded with zeros to the flow's Size:
//
//	magic "FLDU" u32 | flow u32 | from u32 | to u32 | session u64 | seq u64 | sent Unix ns i64
const (
	UDPHeaderLen = 40
	udpMagic     = 0x464c4455 // "FLDU"
	// MaxDatagram is the largest IPv4 UDP payload.
	MaxDatagram = 65507
	// maxBurst is how many late datagrams a sender sends back to back
	// before looking at the clock again.
	maxBurst = 64
	// maxLate is how far behind its schedule a sender may fall and still
	// catch up (timer and scheduler noise); beyond it the schedule restarts
	// from now, so a host that cannot keep the rate sends what it can
	// rather than one long burst.
	maxLate = 5 * time.Millisecond
	// maxFlowsPerEndpoint bounds the receiver's table, so stray traffic
	// cannot grow it without end.
	maxFlowsPerEndpoint = 1 << 16
)

type datagram struct {
	Flow, From, To uint32
	Session, Seq   uint64
	SentNs         int64
}

func putDatagram(b []byte, d datagram) {
	_ = b[UDPHeaderLen-1]
	binary.BigEndian.PutUint32(b[0:], udpMagic)
	binary.BigEndian.PutUint32(b[4:], d.Flow)
	binary.BigEndian.PutUint32(b[8:], d.From)
	binary.BigEndian.PutUint32(b[12:], d.To)
	binary.BigEndian.PutUint64(b[16:], d.Session)
	binary.BigEndian.PutUint64(b[24:], d.Seq)
	binary.BigEndian.PutUint64(b[32:], uint64(d.SentNs))
}

func parseDatagram(b []byte) (datagram, bool) {
	if len(b) < UDPHeaderLen || binary.BigEndian.Uint32(b) != udpMagic {
		return datagram{}, false
	}
	return datagram{
		Flow:    binary.BigEndian.Uint32(b[4:]),
		From:    binary.BigEndian.Uint32(b[8:]),
		To:      binary.BigEndian.Uint32(b[12:]),
		Session: binary.BigEndian.Uint64(b[16:]),
		Seq:     binary.BigEndian.Uint64(b[24:]),
		SentNs:  int64(binary.BigEndian.Uint64(b[32:])),
	}, true
}

// udpSend is one flow at its sender.
type udpSend struct {
	flow    UDPFlow
	sent    atomic.Int64
	bytes   atomic.Int64
	errs    atomic.Int64 // sends the kernel refused (ENOBUFS, ICMP unreachable …)
	slips   atomic.Int64 // schedule restarts (see maxLate)
	lastErr atomic.Pointer[string]
	done    atomic.Bool
}

// StartUDP starts paced flows for [start, until). Every flow is checked
// first (rate within MaxRate, destination Allowed, sizes, IDs): one bad
// flow refuses the call and nothing is sent.
func (p *Plane) StartUDP(start, until time.Time, flows []UDPFlow) error {
	if !until.After(start) {
		return fmt.Errorf("dataplane: UDP flows end %s before they start %s", until.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
	}
	type job struct {
		s    *udpSend
		sock *net.UDPConn
		dst  netip.AddrPort
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("dataplane: plane closed")
	}
	jobs := make([]job, 0, len(flows))
	seen := map[int]bool{}
	for _, f := range flows {
		if err := checkID("flow", f.ID); err != nil {
			return err
		}
		if seen[f.ID] || p.flows[f.ID] != nil {
			return fmt.Errorf("dataplane: flow %d started twice", f.ID)
		}
		seen[f.ID] = true
		if f.Rate <= 0 {
			return fmt.Errorf("dataplane: flow %d: rate %d b/s, want > 0", f.ID, f.Rate)
		}
		if p.cfg.MaxRate > 0 && f.Rate > p.cfg.MaxRate {
			return fmt.Errorf("dataplane: flow %d: rate %d b/s above the cap %d b/s", f.ID, f.Rate, p.cfg.MaxRate)
		}
		if f.Size < UDPHeaderLen || f.Size > MaxDatagram {
			return fmt.Errorf("dataplane: flow %d: datagram size %d outside %d…%d", f.ID, f.Size, UDPHeaderLen, MaxDatagram)
		}
		from := p.eps[f.From]
		if from == nil {
			return fmt.Errorf("dataplane: flow %d: endpoint %d is not local", f.ID, f.From)
		}
		to, ok := p.peers[f.To]
		if !ok {
			return fmt.Errorf("dataplane: flow %d: peer %d unknown", f.ID, f.To)
		}
		if !p.allowed(to.Addr.Addr()) {
			return fmt.Errorf("dataplane: flow %d: %s not allowed (outside the run's hosts or --allow)", f.ID, to.Addr.Addr())
		}
		jobs = append(jobs, job{&udpSend{flow: f}, from.udp, to.Addr})
	}
	p.wg.Add(len(jobs))
	for _, j := range jobs {
		p.flows[j.s.flow.ID] = j.s
		go p.sendUDP(j.s, j.sock, j.dst, start, until)
	}
	return nil
}

// sendUDP paces one flow: datagram k leaves at origin + pacer.at(k), the
// origin being start; when the sender is late (coarse sleeps, a busy CPU)
// it catches up in bursts of at most maxBurst, so the average rate holds
// whenever the host can reach it, and beyond maxLate it moves the origin
// instead (a slip). The only allocation is the flow's one buffer.
func (p *Plane) sendUDP(s *udpSend, sock *net.UDPConn, dst netip.AddrPort, start, until time.Time) {
	defer p.wg.Done()
	defer s.done.Store(true)
	f := s.flow
	buf := make([]byte, f.Size)
	pc := pacer{rate: uint64(f.Rate), bits: uint64(f.Size) * 8}
	d := datagram{Flow: uint32(f.ID), From: uint32(f.From), To: uint32(f.To), Session: p.cfg.Session}
	t := time.NewTimer(time.Until(start))
	defer t.Stop()
	var k uint64
	origin := start
	for {
		now := time.Now()
		if !now.Before(until) {
			return
		}
		due := pc.due(now.Sub(origin))
		if due > k+1 && now.Sub(origin.Add(pc.at(k))) > maxLate {
			origin, due = now.Add(-pc.at(k)), k+1
			s.slips.Add(1)
		}
		for n := 0; k < due && n < maxBurst; n++ {
			if !p.allowed(dst.Addr()) { // cannot change in a run; a guard, not a path
				return
			}
			d.Seq, d.SentNs = k, time.Now().UnixNano()
			putDatagram(buf, d)
			if _, err := sock.WriteToUDPAddrPort(buf, dst); err != nil {
				if p.ctx.Err() != nil {
					return
				}
				s.errs.Add(1)
				msg := err.Error()
				s.lastErr.Store(&msg)
			} else {
				s.sent.Add(1)
				s.bytes.Add(int64(f.Size))
			}
			k++
		}
		if k < due {
			if p.ctx.Err() != nil {
				return
			}
			continue
		}
		next := origin.Add(pc.at(k))
		if !next.Before(until) {
			next = until
		}
		t.Reset(time.Until(next))
		select {
		case <-t.C:
		case <-p.ctx.Done():
			return
		}
	}
}

// udpRecv is one endpoint's receiving side: a SeqCounter per flow.
type udpRecv struct {
	id    int
	mu    sync.Mutex
	flows map[uint32]*udpFlowRx
}

type udpFlowRx struct {
	from, to int
	bytes    int64
	seq      SeqCounter
}

func newUDPRecv(id int) *udpRecv { return &udpRecv{id: id, flows: map[uint32]*udpFlowRx{}} }

// count feeds one datagram to its flow's counter; false = not this run's
// (unknown flow beyond the table's bound).
func (r *udpRecv) count(d datagram, n int, arrivedNs int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.flows[d.Flow]
	if f == nil {
		if len(r.flows) >= maxFlowsPerEndpoint {
			return false
		}
		f = &udpFlowRx{from: int(d.From), to: int(d.To)}
		r.flows[d.Flow] = f
	}
	f.bytes += int64(n)
	f.seq.Receive(d.Seq, d.SentNs, arrivedNs)
	return true
}

// udpLoop reads one endpoint's UDP socket into one reused buffer until
// Close. It never sends anything.
func (p *Plane) udpLoop(e *endpoint) {
	defer p.wg.Done()
	buf := make([]byte, 1<<16)
	for {
		n, _, err := e.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			if p.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ICMP errors reported on the socket
		}
		now := time.Now().UnixNano()
		d, ok := parseDatagram(buf[:n])
		if !ok || d.Session != p.cfg.Session || int(d.To) != e.ID || !e.rx.count(d, n, now) {
			p.stray.Add(1)
		}
	}
}
