package mp4meta

import (
	"encoding/binary"
	"math"

	mp4 "github.com/abema/go-mp4"
)

// matrix is a display matrix as QuickTime and ISO BMFF write it (movie
// and track headers): a b u / c d v / x y w, row vectors, a b c d x y in
// 16.16 fixed point and u v w in 2.30.
type matrix [9]int32

// identity is the matrix a header without a turn holds.
var identity = matrix{1 << 16, 0, 0, 0, 1 << 16, 0, 0, 0, 1 << 30}

// fixed is element i as a real number.
func (m matrix) fixed(i int) float64 {
	if i%3 == 2 {
		return float64(m[i]) / (1 << 30)
	}
	return float64(m[i]) / (1 << 16)
}

// trackMatrix reads the display matrix of the track header bi in the
// movie box moov. It reads the matrix's bytes where the header's version
// puts them rather than the whole box through go-mp4's reflection: every
// probe reads it, and it is all the probe needs of the box.
func trackMatrix(moov []byte, bi mp4.BoxInfo) (matrix, error) {
	var m matrix
	start := bi.Offset + bi.HeaderSize
	end := bi.Offset + bi.Size
	if start >= end || end > uint64(len(moov)) {
		return m, corrupt("the track header (tkhd) is damaged")
	}
	// Version and flags; times, track id, reserved and duration (32 bits
	// each in version 0; times and duration 64 in version 1); reserved
	// (64), layer, group, volume, reserved (16 each).
	at := start + 4 + 20 + 8 + 8
	if moov[start] == 1 {
		at = start + 4 + 32 + 8 + 8
	}
	if at+36 > end {
		return m, corrupt("the track header (tkhd) is damaged")
	}
	for i := range m {
		m[i] = int32(binary.BigEndian.Uint32(moov[at+4*uint64(i):]))
	}
	return m, nil
}

// shown is how the picture is turned when m (the track's) is applied and
// then movie (the movie header's), as players apply them: the clockwise
// turn in whole degrees and whether the picture is mirrored. A matrix
// that is a flip top to bottom (F) followed by a turn by t (R) is F·R =
// [cos t, sin t; sin t, -cos t], so the turn is atan2(b, a) whether or not
// it mirrors, and it mirrors when its determinant is negative.
func (m matrix) shown(movie matrix) (rotation int, mirrored bool) {
	var p [2][2]float64 // the top left of m·movie
	for i := range 2 {
		for j := range 2 {
			for e := range 3 {
				p[i][j] += m.fixed(3*i+e) * movie.fixed(3*e+j)
			}
		}
	}
	deg := math.Round(math.Atan2(p[0][1], p[0][0]) * 180 / math.Pi)
	rotation = int(math.Mod(deg+360, 360))
	return rotation, p[0][0]*p[1][1]-p[0][1]*p[1][0] < 0
}

// upright is the picture size w x h as shown after a turn by rotation:
// a quarter turn either way swaps its sides (a player turns by other
// angles within the same frame).
func upright(w, h, rotation int) (int, int) {
	if rotation == 90 || rotation == 270 {
		return h, w
	}
	return w, h
}
