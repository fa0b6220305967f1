// Package inputfile is the one reader of the files a scenario refers to
// (switch.routes_file, workload.file flow lists, workload.size_dist CDF
// files): regular files only, never larger than a cap, read line by line
// with errors that name the file and the line.
//
// Opening never blocks: the path is checked with os.Stat first (a FIFO,
// device, directory or socket is refused before it is opened), opened with
// O_NONBLOCK where the system has it, and checked again on the open
// descriptor, so a file swapped for a FIFO in between is refused too.
package inputfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"unicode/utf8"
)

// Limit is the default cap on the size of a referenced file.
const Limit = 256 << 20

// MaxLine is the default cap on the length of one line.
const MaxLine = 1 << 20

// TokenBytes is the most bytes of a token from a file that an error quotes
// (see Token).
const TokenBytes = 16

// Error is a file that cannot be used: missing, unreadable, not a regular
// file or too large. Its message is one line naming the file; Unwrap gives
// the cause (fs.ErrNotExist, fs.ErrPermission, …) when there is one.
type Error struct {
	Path string
	Msg  string // what is wrong, after the path
	Err  error
}

func (e *Error) Error() string { return e.Path + " " + e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// File is an open regular file whose reads stop with an error past the cap.
type File struct {
	f     *os.File
	path  string
	limit int64
	n     int64
}

// Open opens path for reading if it is a regular file of at most limit
// bytes (limit ≤ 0: Limit).
func Open(path string, limit int64) (*File, error) {
	if limit <= 0 {
		limit = Limit
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, statError(path, err)
	}
	if err := check(path, st, limit); err != nil {
		return nil, err
	}
	f, err := openNonblock(path)
	if err != nil {
		return nil, statError(path, err)
	}
	// The path may have been swapped since the Stat: check what was opened.
	st, err = f.Stat()
	if err == nil {
		err = check(path, st, limit)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, path: path, limit: limit}, nil
}

// ReadAll opens path as Open does and returns its contents.
func ReadAll(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// check refuses anything but a regular file of at most limit bytes.
func check(path string, st fs.FileInfo, limit int64) error {
	m := st.Mode()
	what := ""
	switch {
	case m.IsRegular():
		if st.Size() > limit {
			return &Error{Path: path, Msg: fmt.Sprintf("is larger than %s (%d bytes)", SizeText(limit), st.Size())}
		}
		return nil
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	default:
		what = "a special file"
	}
	return &Error{Path: path, Msg: "is " + what + ", not a regular file"}
}

func statError(path string, err error) error {
	var pe *fs.PathError
	cause := err
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Path: path, Msg: "does not exist", Err: fs.ErrNotExist}
	case errors.Is(err, fs.ErrPermission):
		return &Error{Path: path, Msg: "cannot be read: permission denied", Err: fs.ErrPermission}
	}
	return &Error{Path: path, Msg: "cannot be read: " + cause.Error(), Err: err}
}

// Read reads from the file; past the cap it fails (the file grew since it
// was opened).
func (f *File) Read(p []byte) (int, error) {
	if f.n >= f.limit {
		// One byte more tells a file of exactly limit bytes from a longer one.
		var b [1]byte
		if n, _ := f.f.Read(b[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, &Error{Path: f.path, Msg: "is larger than " + SizeText(f.limit)}
	}
	if rest := f.limit - f.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := f.f.Read(p)
	f.n += int64(n)
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Path is the path the file was opened as.
func (f *File) Path() string { return f.path }

// SizeText writes a byte count the way limits are spoken of: "1 MiB",
// "64 KiB", else "N bytes".
func SizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Token quotes a token read from a file for an error message: at most
// TokenBytes bytes of it (cut at a character boundary, "…" marking the
// cut), with every non-printable byte escaped, so that an error about a
// file never echoes a whole line of it.
func Token(s string) string {
	if len(s) <= TokenBytes {
		return strconv.Quote(s)
	}
	cut := TokenBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut == 0 {
		cut = TokenBytes // not UTF-8: Quote escapes the bytes
	}
	return strconv.Quote(s[:cut]) + "…"
}

// Scanner reads a file line by line, counting lines, and words its errors
// "name:line: message".
type Scanner struct {
	name    string
	sc      *bufio.Scanner
	line    int
	maxLine int
	err     error
}

// NewScanner scans r, named name in errors, for lines of at most maxLine
// bytes (maxLine ≤ 0: MaxLine).
func NewScanner(name string, r io.Reader, maxLine int) *Scanner {
	if maxLine <= 0 {
		maxLine = MaxLine
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(maxLine, 4096)), maxLine)
	return &Scanner{name: name, sc: sc, maxLine: maxLine}
}

// Scan advances to the next line (its terminator and a trailing \r
// dropped); false at the end or on an error (see Err).
func (s *Scanner) Scan() bool {
	if s.err != nil {
		return false
	}
	if s.sc.Scan() {
		s.line++
		return true
	}
	if err := s.sc.Err(); err != nil {
		s.line++ // the line that could not be read
		if errors.Is(err, bufio.ErrTooLong) {
			s.err = s.Errorf("line longer than %s", SizeText(int64(s.maxLine)))
		} else {
			var fe *Error
			if errors.As(err, &fe) {
				s.err = s.Errorf("the file %s", fe.Msg) // it grew past the cap
			} else {
				s.err = s.Errorf("%v", err)
			}
		}
	}
	return false
}

// Text is the current line (the first without a byte-order mark).
func (s *Scanner) Text() string {
	if s.line == 1 {
		return string(TrimBOM(s.sc.Bytes()))
	}
	return s.sc.Text()
}

// bom is UTF-8's byte-order mark, which editors on Windows and
// spreadsheets exporting CSV put at the start of a file.
const bom = "\ufeff"

// TrimBOM is text without a leading byte-order mark: YAML allows one at
// the start of a stream, and it is no part of a CSV file's first cell.
func TrimBOM(text []byte) []byte { return bytes.TrimPrefix(text, []byte(bom)) }

// Line is the number of the current line (1-based), or of the line that
// failed after an error.
func (s *Scanner) Line() int { return s.line }

// Err is the first error met, already "name:line: …"; nil at a clean end.
func (s *Scanner) Err() error { return s.err }

// Errorf words an error about the current line: "name:line: message".
func (s *Scanner) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", s.name, s.line, fmt.Sprintf(format, args...))
}
