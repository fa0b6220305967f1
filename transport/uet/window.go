package uet

import "math/bits"

// psnSet is a set of packet sequence numbers at or above a base that only
// grows (drop moves it up), as bits in words: what a sender or receiver
// tracks between its cumulative point and the newest PSN. It grows as
// PSNs far ahead are set and reuses its words as the base moves, so a
// connection's window costs a few words and steady state allocates
// nothing.
type psnSet struct {
	base  int64 // PSN of bit 0 of words[off] (a multiple of 64)
	words []uint64
	off   int
}

func (s *psnSet) slot(psn int64) (w int, bit uint64, ok bool) {
	if psn < s.base {
		return 0, 0, false
	}
	i := (psn - s.base) >> 6
	return s.off + int(i), 1 << uint((psn-s.base)&63), true
}

// has reports whether psn is in the set (PSNs below the base are not).
func (s *psnSet) has(psn int64) bool {
	w, b, ok := s.slot(psn)
	return ok && w < len(s.words) && s.words[w]&b != 0
}

// add puts psn (at or above the base) in the set; it reports whether it
// was new.
func (s *psnSet) add(psn int64) bool {
	w, b, ok := s.slot(psn)
	if !ok {
		return false
	}
	for w >= len(s.words) {
		s.words = append(s.words, 0)
	}
	if s.words[w]&b != 0 {
		return false
	}
	s.words[w] |= b
	return true
}

// remove takes psn out; it reports whether it was there.
func (s *psnSet) remove(psn int64) bool {
	w, b, ok := s.slot(psn)
	if !ok || w >= len(s.words) || s.words[w]&b == 0 {
		return false
	}
	s.words[w] &^= b
	return true
}

// drop forgets every PSN below to (to ≥ the base).
func (s *psnSet) drop(to int64) {
	for s.base+64 <= to && s.off < len(s.words) {
		s.off++
		s.base += 64
	}
	if s.off == len(s.words) {
		// Nothing kept: jump the base.
		s.words, s.off = s.words[:0], 0
		s.base = to &^ 63
	} else if s.off > len(s.words)/2 {
		n := copy(s.words, s.words[s.off:])
		s.words, s.off = s.words[:n], 0
	}
	if w, _, ok := s.slot(to); ok && w < len(s.words) {
		s.words[w] &^= 1<<uint((to-s.base)&63) - 1
	}
}

// firstMissing is the least PSN at or above from not in the set.
func (s *psnSet) firstMissing(from int64) int64 {
	for {
		w, _, ok := s.slot(from)
		if !ok || w >= len(s.words) {
			return from
		}
		shift := uint((from - s.base) & 63)
		free := ^s.words[w] >> shift
		if free != 0 {
			return from + int64(bits.TrailingZeros64(free))
		}
		from += int64(64 - shift)
	}
}

// bitsFrom is the 64 PSNs from psn on as a bit mask (bit i: psn+i).
func (s *psnSet) bitsFrom(psn int64) uint64 {
	var m uint64
	for i := int64(0); i < 64; {
		w, _, ok := s.slot(psn + i)
		if !ok {
			i++
			continue
		}
		if w >= len(s.words) {
			break
		}
		shift := uint((psn + i - s.base) & 63)
		m |= (s.words[w] >> shift) << uint(i)
		i += int64(64 - shift)
	}
	return m
}
