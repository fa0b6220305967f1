package dataplane

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// readBuf is each receiving connection's one read buffer, reused for every
// read: payload is counted and dropped, never copied further.
const readBuf = 256 << 10

// conn is one TCP connection at either end. The sending end (dialled) runs
// a writer and an ack reader; the receiving end (accepted) runs one reader
// that also writes the acks. Counters are atomics so Snapshot never waits
// for the data path.
type conn struct {
	p            *Plane
	id, from, to int
	side         Side
	nc           *net.TCPConn
	cc           string // the congestion control read back after connect (sender)

	mu    sync.Mutex // sched, fl
	sched sched
	fl    inflight
	kick  chan struct{}

	// Only the writer goroutine touches these: the reused header and iovec.
	hdr  [headerLen]byte
	vec  [2][]byte
	bufs net.Buffers

	bytes       atomic.Int64 // sender: payload written; receiver: payload read
	acked       atomic.Int64 // sender: payload acknowledged
	completions atomic.Int64 // sender: acks received; receiver: frames read whole
	out, maxOut atomic.Int64 // sender: frames written and not yet acked

	errMsg    atomic.Pointer[string]
	closeOnce sync.Once
	final     atomic.Pointer[TCPInfo] // TCP_INFO read just before close
	closed    atomic.Bool
}

func newConn(p *Plane, id, from, to int, side Side, nc *net.TCPConn) *conn {
	return &conn{p: p, id: id, from: from, to: to, side: side, nc: nc, kick: make(chan struct{}, 1)}
}

func (c *conn) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// close reads TCP_INFO a last time (so Snapshot still has retransmits
// after the end) and closes the socket, which ends both goroutines.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		if ti, err := readTCPInfo(c.nc); err == nil {
			c.final.Store(ti)
		}
		c.closed.Store(true)
		c.nc.Close()
	})
}

// fail records why the connection ended, unless the plane is closing (then
// errors are just the sockets going away), and closes it.
func (c *conn) fail(err error) {
	if c.p.ctx.Err() == nil && !c.closed.Load() {
		msg := err.Error()
		if errors.Is(err, io.EOF) {
			msg = "closed by peer"
		}
		c.errMsg.CompareAndSwap(nil, &msg)
	}
	c.close()
}

// failed is the recorded error, "" if none (closed cleanly or healthy).
func (c *conn) failed() string {
	if m := c.errMsg.Load(); m != nil {
		return *m
	}
	return ""
}

// writeLoop is the sending end's writer: it asks sched what to send and
// sleeps on a kick (post, ack, stream start) or sched's wake time.
func (c *conn) writeLoop() {
	defer c.p.wg.Done()
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		c.mu.Lock()
		a, ok, wake := c.sched.next(time.Now(), c.fl.streams)
		if ok {
			c.fl.push(a)
			out := int64(c.fl.len())
			c.out.Store(out)
			if out > c.maxOut.Load() {
				c.maxOut.Store(out)
			}
		}
		c.mu.Unlock()
		if !ok {
			if !wake.IsZero() {
				t.Reset(time.Until(wake))
			}
			select {
			case <-c.kick:
			case <-t.C:
			case <-c.p.ctx.Done():
				return
			}
			t.Stop()
			continue
		}
		if a.kind == kindMsg {
			c.p.events.push(Event{Kind: EventStarted, Msg: int64(a.id), Conn: c.id, From: c.from, To: c.to, Bytes: a.n, T: time.Now()})
		}
		if err := c.writeFrame(a); err != nil {
			c.fail(err)
			return
		}
	}
}

// writeFrame writes the header and the first payload chunk in one writev
// (net.Buffers), then the rest in chunks of the plane's shared zero
// buffer: no allocation and no copy in user space per write.
func (c *conn) writeFrame(a action) error {
	zero := c.p.zero
	putHeader(c.hdr[:], header{Kind: a.kind, ID: a.id, Len: a.n})
	first := min(a.n, int64(len(zero)))
	c.vec = [2][]byte{c.hdr[:], zero[:first]}
	c.bufs = c.vec[:]
	n, err := c.bufs.WriteTo(c.nc)
	if n > headerLen {
		c.bytes.Add(n - headerLen)
	}
	if err != nil {
		return err
	}
	for left := a.n - first; left > 0; {
		m, err := c.nc.Write(zero[:min(left, int64(len(zero)))])
		c.bytes.Add(int64(m))
		left -= int64(m)
		if err != nil {
			return err
		}
	}
	return nil
}

// ackLoop is the sending end's reader: every ack must match the oldest
// outstanding frame.
func (c *conn) ackLoop() {
	defer c.p.wg.Done()
	buf := make([]byte, 256*headerLen)
	d := decoder{accept: clientAccepts}
	for {
		n, err := c.nc.Read(buf)
		for p := buf[:n]; len(p) > 0; {
			s, derr := d.next(p)
			if derr == nil && s.done {
				derr = c.acked1(s.frame)
			}
			if derr != nil {
				c.fail(derr)
				return
			}
			p = p[s.n:]
		}
		if err != nil {
			c.fail(err)
			return
		}
	}
}

func (c *conn) acked1(h header) error {
	c.mu.Lock()
	a, err := c.fl.ack(h)
	out := int64(c.fl.len())
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.acked.Add(a.n)
	c.completions.Add(1)
	c.out.Store(out)
	if a.kind == kindMsg {
		c.p.events.push(Event{Kind: EventAcked, Msg: int64(a.id), Conn: c.id, From: c.from, To: c.to, Bytes: a.n, T: time.Now()})
	}
	c.wake()
	return nil
}

// readLoop is the receiving end: count payload as it arrives, and for
// every frame read whole queue an ack (all acks of one read go out in one
// write) and, for a message, a Delivered event.
func (c *conn) readLoop() {
	defer c.p.wg.Done()
	buf := make([]byte, readBuf)
	acks := make([]byte, 0, 64*headerLen)
	d := decoder{accept: serverAccepts}
	for {
		n, err := c.nc.Read(buf)
		var got int64
		var now time.Time
		for p := buf[:n]; len(p) > 0; {
			s, derr := d.next(p)
			if derr != nil {
				c.fail(derr)
				return
			}
			p = p[s.n:]
			got += int64(s.payload)
			if !s.done {
				continue
			}
			c.bytes.Add(got) // bytes before the completion they make up
			got = 0
			c.completions.Add(1)
			acks = acks[:len(acks)+headerLen]
			putHeader(acks[len(acks)-headerLen:], header{Kind: ackOf(s.frame.Kind), ID: s.frame.ID, Len: s.frame.Len})
			if s.frame.Kind == kindMsg {
				if now.IsZero() {
					now = time.Now()
				}
				c.p.events.push(Event{Kind: EventDelivered, Msg: int64(s.frame.ID), Conn: c.id, From: c.from, To: c.to, Bytes: s.frame.Len, T: now})
			}
			if len(acks)+headerLen > cap(acks) {
				if werr := c.flush(&acks); werr != nil {
					c.fail(werr)
					return
				}
			}
		}
		c.bytes.Add(got)
		if werr := c.flush(&acks); werr != nil {
			c.fail(werr)
			return
		}
		if err != nil {
			if errors.Is(err, io.EOF) && !d.inBody && d.have == 0 { // the sender hung up between frames
				c.close()
				return
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("peer closed in the middle of a frame")
			}
			c.fail(err)
			return
		}
	}
}

func (c *conn) flush(acks *[]byte) error {
	if len(*acks) == 0 {
		return nil
	}
	_, err := c.nc.Write(*acks)
	*acks = (*acks)[:0]
	return err
}
