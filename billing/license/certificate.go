package license

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skip2/go-qrcode"

	"broll/tenancy"
)

// CertificateFor is licence id's certificate as p, its holder, gets it
// (Get), with the file name to give it.
func (s *Service) CertificateFor(ctx context.Context, p tenancy.Principal, id string) (pdf []byte, filename string, err error) {
	signed, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, "", err
	}
	pdf, err = Certificate(signed, s.o.Fonts)
	return pdf, signed.License.LicenseID + ".pdf", err
}

// A4 in points, with the certificate's margin.
const (
	pageW, pageH = 595.28, 841.89
	margin       = 56.0
	textW        = pageW - 2*margin
)

// Certificate renders a signed licence as a one-page PDF certificate: the
// clip, the licensee, the terms, the id, the verify URL and a QR code of
// it (drawn as vector squares, so it prints sharp at any size). Text in
// every script the fonts cover is shaped and laid out in its direction
// (see page); the PDF embeds only the glyphs it draws.
func Certificate(s Signed, fonts *Fonts) ([]byte, error) {
	if fonts == nil {
		return nil, errors.New("certificate: no fonts loaded")
	}
	d := s.License
	w := &writer{page: newPage(), fonts: fonts, y: margin}
	w.text("bold", 22, banner(d))
	w.y += 8
	w.text("regular", 12, "issued by "+d.Licensor)
	w.rule()
	w.field("Clip", d.Clip.Title)
	w.field("Clip id", d.Clip.ID)
	w.field("Licensee", d.DisplayLicensee())
	w.field("Granted", d.GrantedAt.Format("2 January 2006, 15:04 UTC"))
	w.field("Status", status(d))
	w.field("Licence type", "Single user. The file may be used by the licensee alone: no redistribution, "+
		"resale, sublicensing or sharing with anyone else.")
	w.field("Terms", "Version "+d.Terms.Version+", "+d.Terms.URL)
	w.field("Licence id", d.LicenseID)
	w.rule()
	w.text("bold", 12, "Verify this licence")
	w.y += 4
	w.paragraph("regular", 10, "Scan the code or open "+d.VerifyURL+" to see whether the licence is active. "+
		"The licence is also a document signed with Ed25519 (key id "+s.KeyID+"): anyone can verify it offline "+
		"against the public keys the licensor publishes at /.well-known/broll-license-keys.json.")
	w.paragraph("regular", 10, d.ProofNote())
	w.y += 12
	if err := w.qr(d.VerifyURL, 150); err != nil {
		return nil, err
	}
	return w.pdf(docInfo{title: "Licence " + d.LicenseID, author: d.Licensor,
		subject: "Licence certificate for " + d.Clip.Title, created: d.GrantedAt})
}

func banner(d Document) string {
	if !d.Livemode {
		return "TEST licence certificate"
	}
	return "Licence certificate"
}

func status(d Document) string {
	switch {
	case d.Status == Revoked && d.RevokedAt != nil:
		return "Revoked on " + d.RevokedAt.Format("2 January 2006")
	case !d.Livemode:
		return "Test licence: it grants no right to use the clip"
	default:
		return "Active (as of this certificate; the verify page has the current status)"
	}
}

// writer lays text out top to bottom on one page.
type writer struct {
	page  *page
	fonts *Fonts
	y     float64
}

// faces is a family's typefaces, in the order a character's is looked for.
func (w *writer) faces(family string) []*typeface {
	if family == "bold" {
		return w.fonts.bold
	}
	return w.fonts.regular
}

// text is one line of s at the left margin.
func (w *writer) text(family string, size float64, s string) {
	for i, l := range w.page.layout(w.faces(family), size, s, pageW) {
		if i == 0 {
			w.page.draw(l, size, margin, w.y+size)
		}
	}
	w.y += size * 1.3
}

// paragraph wraps s to the text width.
func (w *writer) paragraph(family string, size float64, s string) {
	w.wrapped(family, size, margin, textW, s)
}

// wrapped lays s out in lines no wider than width from x, at word breaks
// (a word wider than a line, such as a URL, is broken where it must be).
func (w *writer) wrapped(family string, size, x, width float64, s string) {
	for _, l := range w.page.layout(w.faces(family), size, s, width) {
		w.page.draw(l, size, x, w.y+size)
		w.y += size * 1.35
	}
}

// field is a label and its value beside it.
func (w *writer) field(label, value string) {
	const labelW = 110.0
	top := w.y
	w.text("bold", 11, label)
	w.y = top
	w.wrapped("regular", 11, margin+labelW, textW-labelW, value)
	w.y = max(w.y, top+11*1.35) + 6
}

func (w *writer) rule() {
	w.y += 8
	w.page.line(margin, w.y, pageW-margin, w.y, 0.6, 150.0/255)
	w.y += 16
}

// qr draws a QR code of s, size points wide, at the left margin: a dark
// stretch of a row is one rectangle.
func (w *writer) qr(s string, size float64) error {
	code, err := qrcode.New(s, qrcode.Medium)
	if err != nil {
		return fmt.Errorf("certificate QR code: %w", err)
	}
	bits := code.Bitmap() // with its quiet zone
	cell := size / float64(len(bits))
	for r, row := range bits {
		for c := 0; c < len(row); c++ {
			if !row[c] {
				continue
			}
			from := c
			for c+1 < len(row) && row[c+1] {
				c++
			}
			w.page.rect(margin+float64(from)*cell, w.y+float64(r)*cell, float64(c-from+1)*cell, cell)
		}
	}
	w.y += size
	return nil
}

// docInfo is the PDF's document information.
type docInfo struct {
	title, author, subject string
	created                time.Time
}

// pdf is the page as a PDF file.
func (w *writer) pdf(info docInfo) ([]byte, error) {
	f := &pdfFile{}
	catalog, pages := f.reserve(), f.reserve()
	pg, err := w.page.write(f, pages)
	if err != nil {
		return nil, err
	}
	f.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	f.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", pg))
	meta := f.add(fmt.Sprintf("<< /Title %s /Author %s /Subject %s /Creator %s /Producer %s /CreationDate %s >>",
		pdfText(info.title), pdfText(info.author), pdfText(info.subject), pdfText(info.author), pdfText(info.author), pdfDate(info.created)))
	return f.bytes(catalog, meta), nil
}
