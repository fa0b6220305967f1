package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"fabriclab/metrics"
)

// flowChunk is how many flow records go into one stored row: large enough
// for the compressor to find the columns' regularities, small enough that a
// row stays a few hundred kilobytes.
const flowChunk = 1 << 16

// Chunk layouts.
const (
	flowsPicoseconds = 1 // times stored as integer picoseconds (what the simulator measures)
	flowsFloats      = 2 // times stored as raw float64 bits (records that did not come from the simulator)
)

// encodeFlows packs flow records column by column: every integer column as
// zigzag varint deltas from the previous record (IDs, hosts, ranks and
// sizes of a collective's flows move in small steps), then deflate. The
// simulator measures time in integer picoseconds and the records' seconds
// are exactly ps/1e12, FCT = end − start and slowdown = FCT / ideal, so
// the picoseconds are stored and the floats recomputed bit for bit; a chunk
// where that does not hold keeps the float64 bits instead. Either way the
// records read back are identical.
func encodeFlows(recs []metrics.FlowRecord) ([]byte, error) {
	layout := byte(flowsPicoseconds)
	for i := range recs {
		if !derivable(&recs[i]) {
			layout = flowsFloats
			break
		}
	}
	var raw []byte
	ints := func(f func(r *metrics.FlowRecord) int64) {
		prev := int64(0)
		for i := range recs {
			v := f(&recs[i])
			raw = binary.AppendVarint(raw, v-prev)
			prev = v
		}
	}
	floats := func(f func(r *metrics.FlowRecord) float64) {
		for i := range recs {
			raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(f(&recs[i])))
		}
	}
	ints(func(r *metrics.FlowRecord) int64 { return int64(r.ID) })
	ints(func(r *metrics.FlowRecord) int64 { return int64(r.Src) })
	ints(func(r *metrics.FlowRecord) int64 { return int64(r.Dst) })
	ints(func(r *metrics.FlowRecord) int64 { return int64(r.SrcRank) })
	ints(func(r *metrics.FlowRecord) int64 { return int64(r.DstRank) })
	ints(func(r *metrics.FlowRecord) int64 { return r.Bytes })
	ints(func(r *metrics.FlowRecord) int64 {
		var f int64
		if r.Done {
			f |= 1
		}
		if r.ScaleUp {
			f |= 2
		}
		return f
	})
	if layout == flowsPicoseconds {
		ints(func(r *metrics.FlowRecord) int64 { return ps(r.StartS) })
		ints(func(r *metrics.FlowRecord) int64 { // FCT; −1 for flows that did not finish
			if !r.Done {
				return -1
			}
			return ps(r.EndS) - ps(r.StartS)
		})
		ints(func(r *metrics.FlowRecord) int64 { return ps(r.IdealS) })
	} else {
		floats(func(r *metrics.FlowRecord) float64 { return r.StartS })
		floats(func(r *metrics.FlowRecord) float64 { return r.EndS })
		floats(func(r *metrics.FlowRecord) float64 { return r.FCTS })
		floats(func(r *metrics.FlowRecord) float64 { return r.IdealS })
		floats(func(r *metrics.FlowRecord) float64 { return r.Slowdown })
	}
	var b bytes.Buffer
	b.WriteByte(layout)
	var n [binary.MaxVarintLen64]byte
	b.Write(n[:binary.PutUvarint(n[:], uint64(len(recs)))])
	zw, err := flate.NewWriter(&b, flate.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ps is seconds as the simulator's integer picoseconds.
func ps(s float64) int64 { return int64(math.Round(s * 1e12)) }

func secs(p int64) float64 { return float64(p) / 1e12 }

// derivable reports whether r's float fields are exactly what the
// picosecond layout recomputes.
func derivable(r *metrics.FlowRecord) bool {
	if math.Abs(r.StartS) > 1e3 || math.Abs(r.EndS) > 1e3 || math.Abs(r.IdealS) > 1e3 {
		return false // beyond where float64 holds picoseconds exactly
	}
	if secs(ps(r.StartS)) != r.StartS {
		return false
	}
	if !r.Done {
		return r.EndS == -1 && r.FCTS == 0 && r.IdealS == 0 && r.Slowdown == 0
	}
	s, e, i := ps(r.StartS), ps(r.EndS), ps(r.IdealS)
	fct := secs(e - s)
	return secs(e) == r.EndS && secs(i) == r.IdealS && fct == r.FCTS && fct/secs(i) == r.Slowdown
}

// chunkRecords is the record count in a chunk's header (false when there
// is no valid header), read before decoding it.
func chunkRecords(data []byte) (uint64, bool) {
	if len(data) < 2 || data[0] != flowsPicoseconds && data[0] != flowsFloats {
		return 0, false
	}
	n, k := binary.Uvarint(data[1:])
	return n, k > 0
}

// decodeFlows appends the records of one chunk to dst.
func decodeFlows(data []byte, dst []metrics.FlowRecord) ([]metrics.FlowRecord, error) {
	if len(data) < 2 {
		return dst, errors.New("short chunk")
	}
	layout := data[0]
	if layout != flowsPicoseconds && layout != flowsFloats {
		return dst, fmt.Errorf("unknown chunk layout %d", layout)
	}
	n, k := binary.Uvarint(data[1:])
	if k <= 0 || n > flowChunk {
		return dst, errors.New("bad record count")
	}
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(data[1+k:])), int64(n)*(11*binary.MaxVarintLen64)+1))
	if err != nil {
		return dst, err
	}
	// Every record takes at least one byte per integer column (and 8 per
	// float column): refuse a count the data cannot hold before allocating.
	least := uint64(10)
	if layout == flowsFloats {
		least = 7 + 5*8
	}
	if uint64(len(raw)) < n*least {
		return dst, errors.New("truncated chunk")
	}
	base := len(dst)
	dst = append(dst, make([]metrics.FlowRecord, n)...)
	recs := dst[base:]
	var bad error
	ints := func(f func(r *metrics.FlowRecord, v int64)) {
		prev := int64(0)
		for i := range recs {
			d, m := binary.Varint(raw)
			if m <= 0 {
				bad = errors.New("truncated column")
				return
			}
			raw = raw[m:]
			prev += d
			f(&recs[i], prev)
		}
	}
	floats := func(f func(r *metrics.FlowRecord, v float64)) {
		for i := range recs {
			if len(raw) < 8 {
				bad = errors.New("truncated column")
				return
			}
			f(&recs[i], math.Float64frombits(binary.LittleEndian.Uint64(raw)))
			raw = raw[8:]
		}
	}
	ints(func(r *metrics.FlowRecord, v int64) { r.ID = int(v) })
	ints(func(r *metrics.FlowRecord, v int64) { r.Src = int(v) })
	ints(func(r *metrics.FlowRecord, v int64) { r.Dst = int(v) })
	ints(func(r *metrics.FlowRecord, v int64) { r.SrcRank = int(v) })
	ints(func(r *metrics.FlowRecord, v int64) { r.DstRank = int(v) })
	ints(func(r *metrics.FlowRecord, v int64) { r.Bytes = v })
	ints(func(r *metrics.FlowRecord, v int64) { r.Done, r.ScaleUp = v&1 != 0, v&2 != 0 })
	if layout == flowsPicoseconds {
		ints(func(r *metrics.FlowRecord, v int64) { r.StartS = secs(v) })
		ints(func(r *metrics.FlowRecord, v int64) {
			if r.Done {
				r.EndS = secs(ps(r.StartS) + v)
				r.FCTS = secs(v)
			} else {
				r.EndS = -1
			}
		})
		ints(func(r *metrics.FlowRecord, v int64) {
			r.IdealS = secs(v)
			if r.Done {
				r.Slowdown = r.FCTS / r.IdealS
			}
		})
	} else {
		floats(func(r *metrics.FlowRecord, v float64) { r.StartS = v })
		floats(func(r *metrics.FlowRecord, v float64) { r.EndS = v })
		floats(func(r *metrics.FlowRecord, v float64) { r.FCTS = v })
		floats(func(r *metrics.FlowRecord, v float64) { r.IdealS = v })
		floats(func(r *metrics.FlowRecord, v float64) { r.Slowdown = v })
	}
	if bad == nil && len(raw) != 0 {
		bad = errors.New("trailing bytes")
	}
	if bad != nil {
		return dst[:base], bad
	}
	return dst, nil
}
