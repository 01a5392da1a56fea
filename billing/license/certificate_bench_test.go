package license

import "testing"

// BenchmarkCertificate renders a certificate whose licensee name is
// Latin, the common case, and reports the PDF's size.
func BenchmarkCertificate(b *testing.B) {
	k, _ := NewKeyring(secretA)
	s, err := k.Sign(sample())
	if err != nil {
		b.Fatal(err)
	}
	testFonts(b) // loaded once, at start
	var size int
	for b.Loop() {
		pdf, err := certificateForTest(b, s)
		if err != nil {
			b.Fatal(err)
		}
		size = len(pdf)
	}
	b.ReportMetric(float64(size), "pdf-bytes")
}

// BenchmarkCertificateScripts is the same with a name in each script the
// certificate test reads back, one after another.
func BenchmarkCertificateScripts(b *testing.B) {
	k, _ := NewKeyring(secretA)
	var signed []Signed
	for _, c := range scriptNames {
		d := sample()
		name := c.name
		d.Licensee.Name = &name
		s, err := k.Sign(d)
		if err != nil {
			b.Fatal(err)
		}
		signed = append(signed, s)
	}
	testFonts(b)
	var size, i int
	for b.Loop() {
		pdf, err := certificateForTest(b, signed[i%len(signed)])
		if err != nil {
			b.Fatal(err)
		}
		size += len(pdf)
		i++
	}
	b.ReportMetric(float64(size)/float64(i), "pdf-bytes")
}
