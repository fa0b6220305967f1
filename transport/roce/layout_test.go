package roce

import (
	"testing"
	"unsafe"
)

// A send QP is a heap object of its own per connection (262,144 in a
// 512-rank all-to-all): it should fill its allocation size class, 352
// bytes, and not spill into the next (384). Its HPCC state is a separate
// object, only with HPCC on.
func TestSendQPFitsItsSizeClass(t *testing.T) {
	if got := unsafe.Sizeof(sendQP{}); got > 352 {
		t.Errorf("sendQP is %d bytes, over the 352-byte size class", got)
	}
}
