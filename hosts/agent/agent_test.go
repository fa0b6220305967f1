package agent

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestInfoAndClock(t *testing.T) {
	a := startAgent(t, Config{Allow: loopAllow, Version: "v-test", NewPlane: (&fakePlanes{}).new})
	c := dialAgent(t, a.addr, testToken)
	in, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if in.Version != "v-test" || in.Hostname != host || in.MaxRate != DefaultMaxRate || in.MaxDuration != int64(DefaultMaxDuration) ||
		strings.Join(in.Allow, ",") != "127.0.0.0/8" || strings.Join(in.CongestionControls, ",") != "reno,cubic" || in.Lease != int64(DefaultLease) {
		t.Errorf("Info = %+v", in)
	}
	before := time.Now().UnixNano()
	tc, err := c.Clock(context.Background())
	after := time.Now().UnixNano()
	if err != nil || tc < before || tc > after {
		t.Errorf("Clock = %d, %v; want within [%d, %d]", tc, err, before, after)
	}
}
