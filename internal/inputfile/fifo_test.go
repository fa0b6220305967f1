//go:build unix

package inputfile

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO with no writer is refused at once: opening it for reading the
// ordinary way would wait for a writer forever.
func TestFIFORefusedWithoutBlocking(t *testing.T) {
	p := filepath.Join(t.TempDir(), "routes.txt")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Open(p, 0)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || err.Error() != p+" is a named pipe (FIFO), not a regular file" {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open blocked on a FIFO")
	}
}
