package api

import (
	"html"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
	"broll/internal/classify"
)

// errorDocsPath is where each problem's type URL points: one page per code.
const errorDocsPath = "/docs/errors"

// problemType is the absolute type URL of a problem: the error's page on
// this service (BROLL_PUBLIC_URL), so a client can follow it.
func problemType(base string, code apperr.Code) string {
	return base + errorDocsPath + "/" + string(code)
}

// errorDoc explains one code: what happened and what the client should do.
type errorDoc struct {
	code    apperr.Code
	meaning string
	action  string
}

// errorDocs are the codes of the Errors section of docs/api.md, in its order.
var errorDocs = []errorDoc{
	{apperr.Invalid, "A parameter or the body is malformed or out of range; `field` names it when there is one.",
		"Fix the request as `detail` says; sending it again unchanged fails again."},
	{apperr.ConflictingSearch, "Search parameters that exclude each other were combined (for example `search` with `semantic_search`).",
		"Send one of them."},
	{apperr.Unauthorized, "No bearer key, or a key that is unknown or revoked.",
		"Send `Authorization: Bearer dsk_...` with a live key."},
	{apperr.InsufficientCredits, "The account's balance does not cover the purchase; nothing was charged. `available` and `total` say by how much.",
		"Ask the operator for a top-up, or buy fewer clips."},
	{apperr.SpendLimitExceeded, "The customer key's spend limit for its period (`period`: day, month or total) would be passed; nothing was charged. `limit`, `spent`, `required` and `period_resets_at` say by how much and until when.",
		"Wait for `period_resets_at`, buy less, or have the platform raise the key's limit (`PATCH /api/v1/keys?id=`)."},
	{apperr.InsufficientScope, "The key lacks the scope this operation needs; `required_scope` names it.",
		"Use a key that holds the scope (a root key holds every scope)."},
	{apperr.Forbidden, "The key may not do this at all (for example a key of no account, or a signed link that expired or was tampered with).",
		"Use the right kind of key, or ask for a fresh link."},
	{apperr.LicenseRevoked, "The download link of a purchase whose licence was revoked (`brollctl license revoke`): the file is no longer delivered, and its licence-stamped copy was removed. The purchase record shows `download_url: null`, `download_revoked: true` and `license.status: revoked`.",
		"Stop using the clip; the operator who revoked the licence can say why (`license.revoked` webhook, `revoked_reason` in the holder's licence)."},
	{apperr.NotFound, "The resource does not exist, or belongs to another account (never revealed which); also unknown routes.",
		"Check the id and the path."},
	{apperr.MethodNotAllowed, "The path exists but does not take this HTTP method; the `Allow` header and `allowed_methods` list the ones it does.",
		"Use one of the allowed methods."},
	{apperr.Conflict, "The request conflicts with the resource's state (a limit reached, a duplicate).",
		"Read `detail`, resolve the conflict, then retry."},
	{apperr.PriceChanged, "`expected_total` was given and the purchase costs something else; nothing was charged.",
		"Quote again (`dry_run`) and confirm the new total."},
	{apperr.IdempotencyKeyInUse, "A request with this `Idempotency-Key` is still running and did not finish within the wait.",
		"Retry with the same key and body shortly: the first request's answer is then replayed."},
	{apperr.PreviewNotReady, "The download link of a test-mode purchase serves the clip's preview, never the full-quality file, and this clip has no preview yet.",
		"Retry once the worker has made the preview (`brollctl clips status`), or test with another clip."},
	{apperr.UploadIncomplete, "An import names an upload whose file has not all arrived (no PUT finished yet, or the s3 object is missing or of another size); nothing was imported. `errors` names the clips.",
		"Finish the upload's PUT (the whole body, of the size it was asked with), then import again."},
	{apperr.UploadClaimed, "An import names an upload that is already another clip's file (an upload makes exactly one clip); nothing was imported. `errors` names the clips.",
		"Upload the file again for a new clip, or import under the clip id that took it to update that clip."},
	{apperr.UploadClosed, "A PUT reached an upload that has its file already (complete, or a clip's file): an upload takes its bytes once.",
		"Ask for a new upload (`POST /api/ops/v1/uploads`) to send another file."},
	{apperr.NotEmbedded, "The clip asked for similar clips (`GET /api/v1/broll/{id}/similar`, `find_similar_videos`) has no vector of the current embedding model yet: it is new or changed and the worker has not embedded it, its embedding failed, or a re-embedding to a new model is under way. `Retry-After` says when to try again.",
		"Retry after `Retry-After` seconds; a clip that stays so needs `brollctl clips reembed --failed` by the operator. Until then `semantic_search` finds clips by a description."},
	{apperr.LimitReached, "The change would take the key past 1,000 collections, or the collection past 5,000 clips; nothing was changed. `limit` is the cap.",
		"Delete collections or remove clips you no longer need, or split the clips over several collections."},
	{apperr.Sunset, "The legacy v0 API has passed its sunset date.",
		"Move to v1: see /docs/migration."},
	{apperr.PayloadTooLarge, "The body is over `BROLL_MAX_BODY_BYTES`, counted after decompression.",
		"Send a smaller body (fewer items per request)."},
	{apperr.UnsupportedMedia, "The body's `Content-Encoding` is neither `gzip` nor `identity`, or its type is not JSON.",
		"Send JSON, plain or gzip-compressed."},
	{apperr.IdempotencyKeyReused, "This `Idempotency-Key` was used in the last 24 h with another request body.",
		"Use a new key for a new request; reuse a key only to retry the same request."},
	{apperr.RangeUnsatisfiable, "The `Range` of a download lies outside the file.",
		"Ask for a range within the file's size, or for the whole file."},
	{apperr.RateLimited, "The key (or the client address) made too many requests; `Retry-After` says when to try again.",
		"Wait `Retry-After` seconds, then retry; spread requests out."},
	{apperr.Internal, "An unexpected failure on the server; `request_id` lets the operator find it in the logs.",
		"Retry later; if it persists, report the `request_id`."},
	{apperr.Unavailable, "A backing service is down or a query ran past the statement timeout; `Retry-After` says when to try again.",
		"Retry after `Retry-After` seconds; a purchase retried is never charged twice."},
}

func errorDocOf(code string) (errorDoc, bool) {
	i := slices.IndexFunc(errorDocs, func(d errorDoc) bool { return string(d.code) == code })
	if i < 0 {
		return errorDoc{}, false
	}
	return errorDocs[i], true
}

// codeMarkup turns `x` into <code>x</code> in escaped text.
func codeMarkup(s string) string {
	parts := strings.Split(html.EscapeString(s), "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("<code>" + p + "</code>")
		} else {
			b.WriteString(p)
		}
	}
	return b.String()
}

const errorPageHead = `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
	`<meta name="viewport" content="width=device-width, initial-scale=1"><title>%s</title>` +
	`<style>body{max-width:48em;margin:2em auto;padding:0 1em;font:16px/1.5 system-ui,sans-serif}` +
	`code{background:#f3f3f3;padding:0 .2em}td,th{padding:.3em .6em;text-align:left;vertical-align:top}</style></head><body>`

func sendErrorPage(c *fiber.Ctx, title, body string) error {
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'unsafe-inline'")
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.SendString(strings.Replace(errorPageHead, "%s", html.EscapeString(title), 1) + body + `</body></html>`)
}

// errorIndex lists every code with its status, linked to its page.
func errorIndex(c *fiber.Ctx) error {
	var b strings.Builder
	b.WriteString(`<h1>Error codes</h1><p>Every error is <code>application/problem+json</code> (RFC 9457); ` +
		`its <code>type</code> links to the page of its <code>code</code>. Back to the <a href="/docs">API explorer</a>.</p>` +
		`<table><thead><tr><th>code</th><th>status</th><th>meaning</th></tr></thead><tbody>`)
	for _, d := range errorDocs {
		b.WriteString(`<tr><td><a href="` + errorDocsPath + "/" + string(d.code) + `"><code>` + string(d.code) + `</code></a></td><td>` +
			strconv.Itoa(classify.Status(d.code)) + `</td><td>` + codeMarkup(d.meaning) + `</td></tr>`)
	}
	b.WriteString(`</tbody></table>`)
	return sendErrorPage(c, "Error codes · B-roll API", b.String())
}

// errorPage explains one code; an unknown one is a 404 problem.
func errorPage(c *fiber.Ctx) error {
	d, ok := errorDocOf(c.Params("code"))
	if !ok {
		return apperr.NotFoundf("no such error code; see %s", errorDocsPath)
	}
	status := classify.Status(d.code)
	return sendErrorPage(c, string(d.code)+" · B-roll API errors",
		`<p><a href="`+errorDocsPath+`">Error codes</a></p><h1><code>`+string(d.code)+`</code>: `+html.EscapeString(titles[d.code])+`</h1>`+
			`<p>HTTP status <strong>`+strconv.Itoa(status)+" "+html.EscapeString(http.StatusText(status))+`</strong></p>`+
			`<h2>What happened</h2><p>`+codeMarkup(d.meaning)+`</p><h2>What to do</h2><p>`+codeMarkup(d.action)+`</p>`+
			`<p>MCP tools report the same code in their error result.</p>`)
}
