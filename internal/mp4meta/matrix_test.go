package mp4meta

import (
	"bytes"
	"encoding/binary"
	"testing"

	mp4 "github.com/abema/go-mp4"
)

// tkhdBox is a track header of version with matrix m.
func tkhdBox(version byte, m matrix) []byte {
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.BigEndian, v) }
	w(uint32(0)) // size, set below
	b.WriteString("tkhd")
	w([4]byte{version, 0, 0, 3})
	if version == 1 {
		w([2]uint64{1, 2}) // creation, modification
		w([2]uint32{7, 0}) // track id, reserved
		w(uint64(9000))    // duration
	} else {
		w([5]uint32{1, 2, 7, 0, 9000})
	}
	w([2]uint32{}) // reserved
	w([4]int16{})  // layer, group, volume, reserved
	w(m)           // matrix
	w([2]uint32{64 << 16, 36 << 16})
	out := b.Bytes()
	binary.BigEndian.PutUint32(out, uint32(len(out)))
	return out
}

// trackMatrix reads the matrix where go-mp4 reads it, for both versions
// of the header, and refuses a header too short to hold one.
func TestTrackMatrixReadsBothVersions(t *testing.T) {
	want := matrix{0, 1 << 16, 0, -1 << 16, 0, 0, 5 << 16, 7 << 16, 1 << 30}
	for _, version := range []byte{0, 1} {
		box := tkhdBox(version, want)
		// A prefix stands for the boxes before it in the movie box.
		moov := append(make([]byte, 24), box...)
		bi := mp4.BoxInfo{Offset: 24, Size: uint64(len(box)), HeaderSize: 8, Type: mp4.BoxTypeTkhd()}
		got, err := trackMatrix(moov, bi)
		if err != nil || got != want {
			t.Fatalf("version %d: %v, %v; want %v", version, got, err, want)
		}
		var ref mp4.Tkhd
		if _, err := mp4.Unmarshal(bytes.NewReader(box[8:]), uint64(len(box)-8), &ref, mp4.Context{}); err != nil {
			t.Fatal(err)
		}
		if matrix(ref.Matrix) != got {
			t.Fatalf("version %d: go-mp4 reads %v, trackMatrix %v", version, ref.Matrix, got)
		}
		short := bi
		short.Size -= 8 + 30 // width, height and most of the matrix gone
		if _, err := trackMatrix(moov, short); err == nil {
			t.Fatalf("version %d: a header cut inside its matrix was read", version)
		}
		if _, err := trackMatrix(moov[:len(moov)-1], bi); err == nil {
			t.Fatalf("version %d: a header past the movie box was read", version)
		}
	}
}
