package license

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/go-text/typesetting/di"
	"github.com/go-text/typesetting/font"
	"github.com/go-text/typesetting/shaping"
	tdfont "github.com/tdewolff/font"
	"golang.org/x/image/math/fixed"
	"golang.org/x/text/unicode/bidi"
)

// page is a certificate's one page as it is drawn: text is shaped with
// HarfBuzz (go-text/typesetting), so that scripts that join (Arabic) or
// reorder (Devanagari) are drawn as they are written, laid out in the
// direction its script reads, and drawn glyph by glyph from the fonts
// that have them. A page is used by one goroutine.
type page struct {
	err     error // the first font that failed to load
	content bytes.Buffer
	used    []*usedFace
	byFace  map[*font.Face]*usedFace
	byType  map[*typeface]*usedFace
	shaper  shaping.HarfbuzzShaper
	seg     shaping.Segmenter
	wrapper shaping.LineWrapper
}

// usedFace is a typeface the page draws with and the glyphs it drew, each
// numbered in the order first drawn (its CID: its index in the embedded
// subset).
type usedFace struct {
	tf   *typeface
	face *font.Face // this page's: a Face caches, and is not shared
	res  string     // the page's resource name for it
	cids map[font.GID]uint16
	gids []uint16          // gids[cid] is the font's glyph; gids[0] is .notdef
	text map[uint16]string // the text a CID stands for, for ToUnicode
}

func newPage() *page {
	return &page{byFace: map[*font.Face]*usedFace{}, byType: map[*typeface]*usedFace{}}
}

// use is tf's face on this page, added on first use; nil (and p.err set)
// when the font does not load.
func (p *page) use(tf *typeface) *usedFace {
	if u := p.byType[tf]; u != nil {
		return u
	}
	ft, err := tf.shaping()
	if err != nil {
		p.err = cmp.Or(p.err, err)
		return nil
	}
	u := &usedFace{tf: tf, face: font.NewFace(ft), res: "F" + strconv.Itoa(len(p.used)+1),
		cids: map[font.GID]uint16{0: 0}, gids: []uint16{0}, text: map[uint16]string{}}
	p.used = append(p.used, u)
	p.byType[tf], p.byFace[u.face] = u, u
	return u
}

// fallback picks, for each character, the first of faces that has it
// (shaping.Fontmap).
type fallback struct {
	p     *page
	faces []*typeface
}

func (f fallback) ResolveFace(r rune) *font.Face {
	tf := f.faces[0]
	for _, c := range f.faces {
		if c.has(r) {
			tf = c
			break
		}
	}
	if u := f.p.use(tf); u != nil {
		return u.face
	}
	return f.p.fallbackFace(f.faces)
}

// fallbackFace is the first of faces that loads, for a character whose
// face did not (p.err fails the page).
func (p *page) fallbackFace(faces []*typeface) *font.Face {
	for _, tf := range faces {
		if u := p.use(tf); u != nil {
			return u.face
		}
	}
	return nil
}

// textLine is one line of shaped text: its runs in visual order, left to
// right.
type textLine struct {
	runs []shaping.Output
	para []rune // the paragraph the line is of
}

// runesOf is the text of g's cluster.
func (l textLine) runesOf(g shaping.Glyph) []rune {
	from := min(max(g.TextIndex(), 0), len(l.para))
	return l.para[from:min(from+g.RunesCount(), len(l.para))]
}

// layout shapes s at size points in faces and breaks it into lines no
// wider than width (at word boundaries, or inside a word wider than a
// line). The paragraph's direction is its first strong character's, as
// HTML's dir="auto" takes it.
func (p *page) layout(faces []*typeface, size float64, s string, width float64) []textLine {
	runes := []rune(s)
	if len(runes) == 0 || p.use(faces[0]) == nil { // the first face loads, or the page fails
		return nil
	}
	dir := di.DirectionLTR
	if rightToLeft(runes) {
		dir = di.DirectionRTL
	}
	in := shaping.Input{Text: runes, RunEnd: len(runes), Direction: dir, Size: toFixed(size)}
	split := p.seg.Split(in, fallback{p: p, faces: faces})
	outs := make([]shaping.Output, len(split))
	for i, run := range split {
		outs[i] = p.shaper.Shape(run)
	}
	wrapped, _ := p.wrapper.WrapParagraphF(shaping.WrapConfig{Direction: dir, BreakPolicy: shaping.WhenNecessary},
		toFixed(width), runes, shaping.NewSliceIterator(outs))
	lines := make([]textLine, 0, len(wrapped))
	for _, l := range wrapped {
		if len(l) == 0 {
			continue
		}
		runs := slices.Clone(l)
		slices.SortFunc(runs, func(a, b shaping.Output) int { return int(a.VisualIndex - b.VisualIndex) })
		lines = append(lines, textLine{runs: runs, para: runes})
	}
	return lines
}

// rightToLeft reports whether the first strong character of rs reads
// right to left (Hebrew, Arabic and the other scripts that do).
func rightToLeft(rs []rune) bool {
	for _, r := range rs {
		props, _ := bidi.LookupRune(r)
		switch props.Class() {
		case bidi.L:
			return false
		case bidi.R, bidi.AL:
			return true
		}
	}
	return false
}

// draw puts line l on the page with its left end at x and its baseline at
// baseline (points from the top of the page), glyphs in visual order. Each
// glyph's CID maps to the text of its cluster (ToUnicode), so that the text
// can be extracted and searched. A left-to-right run whose glyphs are not
// its characters one for one, in order (Devanagari's reordered vowel
// signs, Thai's combined marks), also carries its text in logical order
// (ActualText), so that a reader extracts it as it was written. A
// right-to-left run carries none: readers such as poppler take the
// characters of a right-to-left run in visual order and reverse them into
// logical order themselves, which would reverse a logical ActualText.
func (p *page) draw(l textLine, size, x, baseline float64) {
	c := &p.content
	c.WriteString("BT\n")
	pen, y := x, pageH-baseline
	for _, run := range l.runs {
		u := p.byFace[run.Face]
		actual := run.Direction.Progression() == di.FromTopLeft && !oneForOne(run)
		if actual {
			fmt.Fprintf(c, "/Span << /ActualText %s >> BDC\n", pdfText(string(l.para[run.Runes.Offset:run.Runes.Offset+run.Runes.Count])))
		}
		fmt.Fprintf(c, "/%s %s Tf\n", u.res, num(size))
		seen := map[int]bool{}
		for _, g := range run.Glyphs {
			cid := u.cid(g.GlyphID)
			if !seen[g.TextIndex()] {
				seen[g.TextIndex()] = true
				if _, ok := u.text[cid]; !ok && g.RunesCount() > 0 {
					u.text[cid] = string(l.runesOf(g))
				}
			}
			fmt.Fprintf(c, "1 0 0 1 %s %s Tm <%04X> Tj\n", num(pen+fromFixed(g.XOffset)), num(y+fromFixed(g.YOffset)), cid)
			pen += fromFixed(g.Advance)
		}
		if actual {
			c.WriteString("EMC\n")
		}
	}
	c.WriteString("ET\n")
}

// oneForOne reports whether run's glyphs are its characters one for one,
// in logical order.
func oneForOne(run shaping.Output) bool {
	prev := -1
	for _, g := range run.Glyphs {
		if g.RunesCount() != 1 || g.GlyphsCount() != 1 || g.TextIndex() <= prev {
			return false
		}
		prev = g.TextIndex()
	}
	return true
}

// cid is glyph g's number in the subset, given on first use.
func (u *usedFace) cid(g font.GID) uint16 {
	if cid, ok := u.cids[g]; ok {
		return cid
	}
	cid := uint16(len(u.gids))
	u.cids[g] = cid
	u.gids = append(u.gids, uint16(g))
	return cid
}

// line draws a straight line, width wide, in grey.
func (p *page) line(x1, y1, x2, y2, width, grey float64) {
	fmt.Fprintf(&p.content, "%s w %s G %s %s m %s %s l S\n", num(width), num(grey), num(x1), num(pageH-y1), num(x2), num(pageH-y2))
}

// rect fills a black rectangle whose top left corner is at x, y.
func (p *page) rect(x, y, w, h float64) {
	fmt.Fprintf(&p.content, "%s %s %s %s re f\n", num(x), num(pageH-y-h), num(w), num(h))
}

// write adds the page, its content and its fonts (each a subset of the
// glyphs drawn, with a ToUnicode map) to f, and returns the page object.
func (p *page) write(f *pdfFile, parent int) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	var fonts strings.Builder
	for _, u := range p.used {
		ref, err := u.write(f)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(&fonts, "/%s %d 0 R ", u.res, ref)
	}
	content := f.addStream("", p.content.Bytes())
	return f.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources << /Font << %s>> >> /Contents %d 0 R >>",
		parent, num(pageW), num(pageH), fonts.String(), content)), nil
}

// write embeds the face's subset as a Type 0 font with Identity-H
// encoding: the codes in the content are CIDs, each the glyph of the same
// number in the subset.
func (u *usedFace) write(f *pdfFile) (int, error) {
	sub, err := u.tf.subset(u.gids)
	if err != nil {
		return 0, err
	}
	sfnt := u.tf.sfnt
	scale := 1000 / float64(sfnt.Head.UnitsPerEm)
	em := func(v float64) int { return int(v*scale + 0.5*sign(v)) }
	base := subsetTag(u.gids) + "+" + u.tf.name
	file := f.addStream(fmt.Sprintf("/Length1 %d", len(sub)), sub)
	desc := f.add(fmt.Sprintf("<< /Type /FontDescriptor /FontName %s /Flags 4 /FontBBox [%d %d %d %d] /ItalicAngle 0 "+
		"/Ascent %d /Descent %d /CapHeight %d /StemV 80 /FontFile2 %d 0 R >>", pdfName(base),
		em(float64(sfnt.Head.XMin)), em(float64(sfnt.Head.YMin)), em(float64(sfnt.Head.XMax)), em(float64(sfnt.Head.YMax)),
		em(float64(sfnt.Hhea.Ascender)), em(float64(sfnt.Hhea.Descender)), em(float64(sfnt.Hhea.Ascender)), file))
	var widths strings.Builder
	for _, g := range u.gids {
		fmt.Fprintf(&widths, "%d ", em(float64(sfnt.GlyphAdvance(g))))
	}
	cid := f.add(fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont %s /CIDSystemInfo << /Registry (Adobe) "+
		"/Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /W [0 [%s]] /CIDToGIDMap /Identity >>", pdfName(base), desc, widths.String()))
	toUnicode := f.addStream("", u.toUnicode())
	return f.add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont %s /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>",
		pdfName(base), cid, toUnicode)), nil
}

// toUnicode is the CMap from each CID to the text it was drawn for.
func (u *usedFace) toUnicode() []byte {
	var b bytes.Buffer
	b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n" +
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n" +
		"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	cids := make([]uint16, 0, len(u.text))
	for cid := range u.text {
		cids = append(cids, cid)
	}
	slices.Sort(cids)
	for chunk := range slices.Chunk(cids, 100) {
		fmt.Fprintf(&b, "%d beginbfchar\n", len(chunk))
		for _, cid := range chunk {
			hex := strings.TrimSuffix(strings.TrimPrefix(pdfText(u.text[cid]), "<FEFF"), ">")
			fmt.Fprintf(&b, "<%04X> <%s>\n", cid, hex)
		}
		b.WriteString("endbfchar\n")
	}
	b.WriteString("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	return b.Bytes()
}

// subset is the TrueType font holding gids only, in that order (the
// glyphs composite ones are made of are added after them).
func (tf *typeface) subset(gids []uint16) ([]byte, error) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	sub, err := tf.sfnt.Subset(gids, tdfont.SubsetOptions{Tables: tdfont.KeepPDFTables})
	if err != nil {
		return nil, fmt.Errorf("certificate font %s: %w", tf.name, err)
	}
	return sub.Write(), nil
}

// subsetTag is the six capital letters that name a subset (PDF 9.6.4),
// the same for the same glyphs.
func subsetTag(gids []uint16) string {
	h := fnv.New32a()
	for _, g := range gids {
		_, _ = h.Write([]byte{byte(g >> 8), byte(g)})
	}
	v := h.Sum32()
	tag := make([]byte, 6)
	for i := range tag {
		tag[i] = 'A' + byte(v%26)
		v /= 26
	}
	return string(tag)
}

func toFixed(v float64) fixed.Int26_6   { return fixed.Int26_6(v * 64) }
func fromFixed(v fixed.Int26_6) float64 { return float64(v) / 64 }

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}

// num is v as a PDF number, to a hundredth of a point.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}
