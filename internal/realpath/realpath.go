// Package realpath finds where a path leads the way the kernel would open
// it: symbolic links followed one component at a time, so "link/.." is the
// parent of the link's target, not the link's own directory (which is what
// cleaning the text first would give). The CLI's output guard and the web
// server's examples check both need this answer and must not disagree.
package realpath

import (
	"os"
	"path/filepath"
	"strings"
)

// maxLinks is how many symbolic links a path may go through, as on Linux.
const maxLinks = 40

// Resolve is the absolute path p leads to. Every symbolic link on the way
// is followed, the last one too even when its target does not exist yet (a
// link to a file not written yet names that file). From the first
// component that does not exist, the rest is appended as written, cleaned:
// a file to be created is named by its resolved directory and its name.
// A loop of links stops after 40, at the path reached so far.
func Resolve(p string) string {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(p)
		}
		// The working directory as given may itself go through links
		// ($PWD): it is resolved with the rest.
		p = wd + string(filepath.Separator) + p
	}
	sep := string(filepath.Separator)
	done, rest := sep, p
	for links := 0; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(strings.TrimLeft(rest, sep), sep)
		switch part {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done) // done holds no links: its parent is real
			continue
		}
		next := filepath.Join(done, part)
		info, err := os.Lstat(next)
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			if err != nil { // nothing below it exists
				return filepath.Join(next, rest)
			}
			done = next
			continue
		}
		target, err := os.Readlink(next)
		if links++; err != nil || links > maxLinks {
			return filepath.Join(next, rest)
		}
		if filepath.IsAbs(target) {
			done = sep
		}
		rest = target + sep + rest
	}
	return done
}
