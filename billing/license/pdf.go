package license

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"
)

// pdfFile is a PDF being written: numbered objects, then the cross-reference
// table and trailer. It knows only what a one-page certificate needs.
type pdfFile struct {
	objects [][]byte // object n is objects[n-1]
	// z compresses the streams, one after another (a compressor's state is
	// large: it is made once per file).
	z *zlib.Writer
}

// reserve allocates an object number, to be set later (an object that
// refers to one not written yet).
func (p *pdfFile) reserve() int {
	p.objects = append(p.objects, nil)
	return len(p.objects)
}

// set writes object n.
func (p *pdfFile) set(n int, body string) { p.objects[n-1] = []byte(body) }

// add writes a new object and returns its number.
func (p *pdfFile) add(body string) int {
	n := p.reserve()
	p.set(n, body)
	return n
}

// addStream writes a Flate-compressed stream object with dict's entries
// (without the << >>).
func (p *pdfFile) addStream(dict string, data []byte) int {
	var z bytes.Buffer
	if p.z == nil {
		p.z = zlib.NewWriter(&z)
	} else {
		p.z.Reset(&z)
	}
	_, _ = p.z.Write(data) // a bytes.Buffer does not fail
	_ = p.z.Close()
	n := p.reserve()
	p.objects[n-1] = fmt.Appendf(nil, "<< %s /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream", dict, z.Len(), z.Bytes())
	return n
}

// bytes is the file, with root as its catalog and info as its Info
// dictionary.
func (p *pdfFile) bytes(root, info int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(p.objects))
	for i, o := range p.objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(p.objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(p.objects)+1, root, info, xref)
	return b.Bytes()
}

// pdfText is s as a PDF text string: UTF-16BE with its byte order mark, in
// hex, so that any character is kept and nothing needs escaping.
func pdfText(s string) string {
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteString(">")
	return b.String()
}

// pdfDate is t as a PDF date.
func pdfDate(t time.Time) string {
	return "(D:" + t.UTC().Format("20060102150405") + "Z)"
}

// pdfName is s as a PDF name: letters, digits, '-' and '+' as they are.
func pdfName(s string) string {
	var b strings.Builder
	b.WriteByte('/')
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '+':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "#%02X", c)
		}
	}
	return b.String()
}
