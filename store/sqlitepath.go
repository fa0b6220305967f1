package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SQLitePath returns the file path a DSN names for SQLite — dsn without its
// "sqlite:" prefix, as given (not made absolute) — and true. For a
// PostgreSQL URL, or a DSN that names no file ("" or "sqlite:"), it returns
// "" and false. SQLite also writes PATH-wal, PATH-shm and PATH-journal next
// to the database.
func SQLitePath(dsn string) (string, bool) {
	if IsPostgres(dsn) {
		return "", false
	}
	path := strings.TrimPrefix(dsn, "sqlite:")
	return path, path != ""
}

// checkSQLitePath refuses what is not the path of a regular file, or of
// one that could be created: a NUL byte, a directory's name (a trailing
// slash, "." or ".."), an existing file that is not regular (device, FIFO,
// socket, directory; a symbolic link counts as what it points to). exists
// says whether the file is there.
func checkSQLitePath(path string) (exists bool, err error) {
	if strings.IndexByte(path, 0) >= 0 {
		return false, errors.New("the path contains a NUL byte")
	}
	if looksLikeURL(path) {
		// postgres:/x, mysql://…, a mistyped URL: a file of that name is
		// never what was meant.
		return false, errors.New("it looks like a URL, but only postgres:// and postgresql:// URLs name databases; a file path cannot start with a scheme")
	}
	if strings.TrimSpace(path) == "" {
		return false, errors.New("the path is blank")
	}
	if base := path[strings.LastIndexByte(path, '/')+1:]; base == "" || base == "." || base == ".." ||
		strings.HasSuffix(path, string(filepath.Separator)) {
		return false, errors.New("the path names a directory, not a file")
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is in the message already
		}
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return true, fmt.Errorf("not a regular file (%s)", fileKind(fi.Mode()))
	}
	return true, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "not a file"
	}
}

// sqliteURI is the "file:" URI that makes modernc.org/sqlite open exactly
// path, with the given query parameters. Without escaping, SQLite would
// take '?' as the start of options, '#' as the end of the name and %XX as
// an escape (`b#c.db` opened `b`, `d%20e.db` opened `d e.db`); a relative
// path is made absolute (from the working directory, without cleaning:
// the kernel resolves "..") so that the URI always has the empty authority
// of file:///… and a name such as ":memory:" is a file.
func sqliteURI(path, params string) (string, error) {
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		path = wd + string(filepath.Separator) + path
	}
	return "file://" + uriEscaper.Replace(filepath.ToSlash(path)) + "?" + params, nil
}

// uriEscaper escapes what SQLite's URI parser gives a meaning to in the
// path part.
var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// looksLikeURL reports whether path starts with a URL scheme ("x:" with x
// letters, digits, + - . and at least two characters, so that a Windows
// drive letter is not one) followed by "/".
func looksLikeURL(path string) bool {
	i := strings.IndexByte(path, ':')
	if i < 2 || i+1 >= len(path) || path[i+1] != '/' {
		return false
	}
	for k, c := range path[:i] {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || k > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')
		if !ok {
			return false
		}
	}
	return true
}
