package dataplane

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// TCPInfo is the part of the kernel's TCP_INFO a run reports for one
// connection. BytesRetrans and DeliveredCE need Linux ≥ 4.19 and read 0 on
// older kernels.
type TCPInfo struct {
	RTT          time.Duration // smoothed
	RTTVar       time.Duration
	Retrans      int64 // segments retransmitted over the connection's life (tcpi_total_retrans)
	BytesRetrans int64
	Lost         int64 // segments currently thought lost
	Unacked      int64 // segments in flight
	Cwnd         int64 // segments
	DeliveredCE  int64 // segments delivered with CE marks (ECN echoed)
	CC           string
}

// readTCPInfo asks the kernel; it fails once the socket is closed.
func readTCPInfo(c *net.TCPConn) (*TCPInfo, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var ti *unix.TCPInfo
	var cc string
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		ti, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		if gerr == nil {
			cc, _ = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
		}
	}); err != nil {
		return nil, err
	}
	if gerr != nil {
		return nil, gerr
	}
	return &TCPInfo{
		RTT:          time.Duration(ti.Rtt) * time.Microsecond,
		RTTVar:       time.Duration(ti.Rttvar) * time.Microsecond,
		Retrans:      int64(ti.Total_retrans),
		BytesRetrans: int64(ti.Bytes_retrans),
		Lost:         int64(ti.Lost),
		Unacked:      int64(ti.Unacked),
		Cwnd:         int64(ti.Snd_cwnd),
		DeliveredCE:  int64(ti.Delivered_ce),
		CC:           cc,
	}, nil
}
