package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"
)

// Stored errors of a failed attempt. Tenants read them in their delivery
// log, so they are fixed texts that name the kind of failure only: a
// transport error's own text names the resolver's address, the address
// dialled or the proxy's host, none of which a tenant may see.
const (
	errTextForbidden   = "refused: the endpoint resolves to a non-public address"
	errTextTimeout     = "timeout"
	errTextDNS         = "dns lookup failed"
	errTextTLS         = "tls error"
	errTextRefused     = "connection refused"
	errTextReset       = "connection reset"
	errTextUnreachable = "host unreachable"
	errTextCancelled   = "cancelled: the worker stopped"
	errTextFailed      = "connection failed"
)

// describe maps a transport error to one of the fixed texts.
func describe(err error) string {
	var (
		timeout   interface{ Timeout() bool }
		dnsErr    *net.DNSError
		verifyErr *tls.CertificateVerificationError
		recordErr tls.RecordHeaderError
		alertErr  tls.AlertError
		authErr   x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		certErr   x509.CertificateInvalidError
	)
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		return errTextForbidden
	case errors.As(err, &dnsErr):
		return errTextDNS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		return errTextTimeout
	case errors.Is(err, context.Canceled):
		return errTextCancelled
	case errors.As(err, &verifyErr), errors.As(err, &recordErr), errors.As(err, &alertErr),
		errors.As(err, &authErr), errors.As(err, &hostErr), errors.As(err, &certErr):
		return errTextTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return errTextRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errTextReset
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return errTextUnreachable
	default:
		return errTextFailed
	}
}
