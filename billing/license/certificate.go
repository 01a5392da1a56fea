package license

import (
	"context"
	"fmt"
	"strings"

	"github.com/signintech/gopdf"
	"github.com/skip2/go-qrcode"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"broll/tenancy"
)

// CertificateFor is licence id's certificate as p, its holder, gets it
// (Get), with the file name to give it.
func (s *Service) CertificateFor(ctx context.Context, p tenancy.Principal, id string) (pdf []byte, filename string, err error) {
	signed, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, "", err
	}
	pdf, err = Certificate(signed)
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
// it (drawn as vector squares, so it prints sharp at any size). The fonts
// are the Go fonts (BSD licence), embedded in the binary.
func Certificate(s Signed) ([]byte, error) {
	d := s.License
	pdf := &gopdf.GoPdf{}
	pdf.Start(gopdf.Config{PageSize: *gopdf.PageSizeA4, Unit: gopdf.UnitPT})
	pdf.SetInfo(gopdf.PdfInfo{Title: "Licence " + d.LicenseID, Author: d.Licensor, Subject: "Licence certificate for " + d.Clip.Title,
		Creator: d.Licensor, CreationDate: d.GrantedAt})
	pdf.AddPage()
	if err := pdf.AddTTFFontData("regular", goregular.TTF); err != nil {
		return nil, fmt.Errorf("certificate font: %w", err)
	}
	if err := pdf.AddTTFFontData("bold", gobold.TTF); err != nil {
		return nil, fmt.Errorf("certificate font: %w", err)
	}
	w := &writer{pdf: pdf, y: margin}
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
	if w.err != nil {
		return nil, w.err
	}
	return pdf.GetBytesPdf(), nil
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

// writer lays text out top to bottom, keeping the first error.
type writer struct {
	pdf *gopdf.GoPdf
	y   float64
	err error
}

func (w *writer) font(family string, size float64) {
	if w.err == nil {
		w.err = w.pdf.SetFont(family, "", size)
	}
}

func (w *writer) text(family string, size float64, s string) {
	w.font(family, size)
	w.pdf.SetXY(margin, w.y)
	if w.err == nil {
		w.err = w.pdf.Cell(nil, s)
	}
	w.y += size * 1.3
}

// paragraph wraps s to the text width.
func (w *writer) paragraph(family string, size float64, s string) {
	w.wrapped(family, size, margin, textW, s)
}

func (w *writer) wrapped(family string, size, x, width float64, s string) {
	w.font(family, size)
	if w.err != nil {
		return
	}
	lines, err := w.wrap(s, width)
	if err != nil {
		w.err = err
		return
	}
	for _, l := range lines {
		w.pdf.SetXY(x, w.y)
		if w.err = w.pdf.Cell(nil, l); w.err != nil {
			return
		}
		w.y += size * 1.35
	}
}

// field is a label and its value beside it.
func (w *writer) field(label, value string) {
	const labelW = 110.0
	top := w.y
	w.font("bold", 11)
	w.pdf.SetXY(margin, top)
	if w.err == nil {
		w.err = w.pdf.Cell(nil, label)
	}
	w.wrapped("regular", 11, margin+labelW, textW-labelW, value)
	w.y = max(w.y, top+11*1.35) + 6
}

func (w *writer) rule() {
	w.y += 8
	w.pdf.SetLineWidth(0.6)
	w.pdf.SetStrokeColor(150, 150, 150)
	w.pdf.Line(margin, w.y, pageW-margin, w.y)
	w.y += 16
}

// qr draws a QR code of s, size points wide, at the left margin.
func (w *writer) qr(s string, size float64) error {
	code, err := qrcode.New(s, qrcode.Medium)
	if err != nil {
		return fmt.Errorf("certificate QR code: %w", err)
	}
	bits := code.Bitmap() // with its quiet zone
	cell := size / float64(len(bits))
	w.pdf.SetFillColor(0, 0, 0)
	for r, row := range bits {
		for c, dark := range row {
			if dark {
				w.pdf.RectFromUpperLeftWithStyle(margin+float64(c)*cell, w.y+float64(r)*cell, cell, cell, "F")
			}
		}
	}
	w.y += size
	return nil
}

// wrap breaks s into lines no wider than width at spaces; a word wider
// than a line (a URL) is broken where it must be.
func (w *writer) wrap(s string, width float64) ([]string, error) {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		next := word
		if line != "" {
			next = line + " " + word
		}
		wide, err := w.pdf.MeasureTextWidth(next)
		if err != nil {
			return nil, err
		}
		if wide <= width {
			line = next
			continue
		}
		if line != "" {
			lines = append(lines, line)
		}
		parts, err := w.pdf.SplitText(word, width)
		if err != nil {
			return nil, err
		}
		lines = append(lines, parts[:len(parts)-1]...)
		line = parts[len(parts)-1]
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines, nil
}
