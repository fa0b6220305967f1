package workload

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A size distribution's errors never echo a line of the file: given
// /etc/passwd, or any file whose first line is a secret, the error quotes
// at most a short, escaped piece of a token.
func TestParseSizeDistErrorsDoNotEchoLines(t *testing.T) {
	secret := "root:x:0:0:root:/root:/bin/bash"
	long := "0123456789abcdef0123456789"
	num := "1234567890123456789012345678"
	for _, in := range []string{
		"-" + num + "\n1 1\n",
		"0 0\n-" + num + " 1\n",
		"0 0\n1" + num + "00000000000000000000 1\n",
		"0 0\n5 -" + num + "\n",
		"10\n1 0.5\n2 1" + num + "\n",
		"0 0\n10 1" + num + "\n",
		"0 0\n" + num + " 0.5\n5 1\n",
		"0 0\n10 0.5\n20 0.4" + num + "\n30 1\n",
		secret + "\n1 1\n",
		"-" + long + "\n1 1\n",
		"0 0\n" + secret + " 1\n",
		"0 0\n1 " + secret + "\n",
		"0 0\n-" + long + " 1\n",
		"0 0\n1" + long + " 1\n",
		"0 0\n5 -" + long + "\n",
		"10\n1 0.5\n2 1" + long + "\n",
		"0 0\n10 0.5\n5" + long + "e-20 1\n",
		"0 0\n10 0.5\n20 0.4" + long + "\n",
		"0 0\n10 1" + long + "\n",
		"\x1b[2J\x07\n",
	} {
		_, err := ParseSizeDist("t.txt", strings.NewReader(in), ParseOptions{})
		if err == nil {
			t.Fatalf("%q accepted", in)
		}
		msg := err.Error()
		if strings.Contains(msg, secret) || strings.Contains(msg, long) || strings.Contains(msg, num) || strings.Contains(msg, "root:/root") || strings.ContainsAny(msg, "\x1b\x07\r\n") {
			t.Errorf("%q: %q", in, msg)
		}
	}
	if b, err := os.ReadFile("/etc/passwd"); err == nil && len(b) > 0 {
		first, _, _ := strings.Cut(string(b), "\n")
		_, err := LoadSizeDist("/etc/passwd", "")
		if err == nil || (len(first) > 16 && strings.Contains(err.Error(), first)) {
			t.Errorf("/etc/passwd: %v", err)
		}
	}
}

// Only regular files are read: a FIFO is refused at once instead of
// waiting for a writer, a device (which never ends) in one line.
func TestLoadSizeDistRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cdf.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := LoadSizeDist(fifo, "")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a regular file") {
			t.Fatalf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("LoadSizeDist blocked on a FIFO")
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := LoadSizeDist("/dev/zero", "")
		if err == nil || strings.ContainsAny(err.Error(), "\n") || !strings.Contains(err.Error(), "/dev/zero is a device, not a regular file") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
}

// A size distribution's long line is reported with its number and the limit.
func TestParseSizeDistLongLine(t *testing.T) {
	_, err := ParseSizeDist("t.txt", strings.NewReader("0 0\n"+strings.Repeat("9", 2<<20)+" 1\n"), ParseOptions{})
	if err == nil || err.Error() != "t.txt:2: line longer than 1 MiB" {
		t.Errorf("long line: %v", err)
	}
}
