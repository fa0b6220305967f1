package inputfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenRegularFile(t *testing.T) {
	p := write(t, "a.txt", "one\ntwo\r\n\nfour")
	f, err := Open(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := NewScanner("a.txt", f, 0)
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	if sc.Err() != nil || strings.Join(got, "|") != "one|two||four" || sc.Line() != 4 {
		t.Fatalf("lines %q, line %d, err %v", got, sc.Line(), sc.Err())
	}
	if err := sc.Errorf("bad %d", 7); err.Error() != "a.txt:4: bad 7" {
		t.Errorf("Errorf = %q", err)
	}
}

func TestOpenRefusals(t *testing.T) {
	dir := t.TempDir()
	big := write(t, "big.txt", strings.Repeat("x", 2000))
	cases := []struct{ path, want string }{
		{filepath.Join(dir, "nope.txt"), "nope.txt does not exist"},
		{dir, " is a directory, not a regular file"},
		{big, "big.txt is larger than 1 KiB (2000 bytes)"},
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		cases = append(cases, struct{ path, want string }{"/dev/null", "/dev/null is a device, not a regular file"})
	}
	for _, c := range cases {
		_, err := Open(c.path, 1024)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%s: err = %v, want %q", c.path, err, c.want)
		}
	}
	_, err := Open(filepath.Join(dir, "nope.txt"), 0)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file is not fs.ErrNotExist: %v", err)
	}
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != filepath.Join(dir, "nope.txt") {
		t.Errorf("not an *Error naming the path: %#v", err)
	}
}

// A device that never ends gives one line, not a scanner's complaint.
func TestDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := Open("/dev/zero", 0)
	if err == nil || err.Error() != "/dev/zero is a device, not a regular file" {
		t.Fatalf("err = %v", err)
	}
}

func TestLongLine(t *testing.T) {
	p := write(t, "long.txt", "ok\n\n"+strings.Repeat("7", 5000)+"\nafter\n")
	f, err := Open(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := NewScanner("long.txt", f, 4096)
	n := 0
	for sc.Scan() {
		n++
	}
	if n != 2 || sc.Err() == nil || sc.Err().Error() != "long.txt:3: line longer than 4 KiB" {
		t.Fatalf("%d lines, err %v", n, sc.Err())
	}
	if NewScanner("x", strings.NewReader(""), 0).maxLine != MaxLine {
		t.Error("default line limit")
	}
	if SizeText(MaxLine) != "1 MiB" || SizeText(1500) != "1500 bytes" || SizeText(3<<30) != "3 GiB" {
		t.Error("SizeText")
	}
}

// A file that grows past the cap after it was opened stops with an error.
func TestReadStopsAtLimit(t *testing.T) {
	p := write(t, "grow.txt", "0123456789")
	f, err := Open(p, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := io.ReadAll(f); err != nil || string(b) != "0123456789" {
		t.Fatalf("%q %v", b, err)
	}
	g, _ := Open(p, 10)
	defer g.Close()
	if err := os.WriteFile(p, []byte("0123456789ab"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(g); err == nil || !strings.Contains(err.Error(), "is larger than 10 bytes") {
		t.Fatalf("grown file: %v", err)
	}
	if err := os.WriteFile(p, []byte("0123\n5678\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Open(p, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := os.WriteFile(p, []byte("01234\n6789\nab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := NewScanner("grow.txt", h, 0)
	for sc.Scan() {
	}
	if err := sc.Err(); err == nil || err.Error() != "grow.txt:3: the file is larger than 10 bytes" {
		t.Fatalf("grown file, by lines: %v", err)
	}
}

func TestToken(t *testing.T) {
	cases := map[string]string{
		"12x":                    `"12x"`,
		"0123456789abcdef":       `"0123456789abcdef"`,
		"0123456789abcdefSECRET": `"0123456789abcdef"…`,
		"a\x1b[2Jb":              `"a\x1b[2Jb"`,
		"ééééééééé":              `"éééééééé"…`, // 18 bytes: cut before the 9th
		"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\xef": `"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0"…`,
	}
	for in, want := range cases {
		if got := Token(in); got != want {
			t.Errorf("Token(%q) = %s, want %s", in, got, want)
		}
	}
}
