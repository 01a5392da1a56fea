package mp4meta_test

import (
	"bytes"
	"testing"

	"broll/internal/mp4meta"
)

// BenchmarkRead reads a 10 s, 30 fps clip (300 samples) as stored
// landscape and as a phone stores an upright clip (a quarter-turn
// display matrix): the matrix is read and applied on every probe.
func BenchmarkRead(b *testing.B) {
	for _, c := range []struct {
		name string
		file []byte
	}{
		{"unrotated", video(b, "a.mp4", "320x180", "30", "10", "-movflags", "+faststart")},
		{"rotated", video(b, "r.mp4", "320x180", "30", "10", "-movflags", "+faststart", "-metadata:s:v:0", "rotate=90")},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := bytes.NewReader(c.file)
			b.SetBytes(int64(len(c.file)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := mp4meta.Read(r, int64(len(c.file))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
