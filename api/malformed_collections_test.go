package api

import (
	"fmt"
	"strings"
)

// collections is a malformed request to a collection route, or a purchase
// naming a collection badly: every body is one a strict reader refuses,
// so none may create, change or buy anything.
func (g *gen) collections(key string) badReq {
	col := "/api/v1/collections/"
	id := g.f.collection
	if g.chance(0.3) {
		id = g.pathID()
	}
	switch g.r.IntN(8) {
	case 0:
		return badReq{kind: "collections create", method: "POST", path: "/api/v1/collections", header: g.contentType(g.authHeader(key)),
			body: []byte(g.collectionBody())}
	case 1:
		return badReq{kind: "collections update", method: "PATCH", path: col + id, header: g.contentType(g.authHeader(key)),
			body: []byte(g.collectionBody())}
	case 2:
		return badReq{kind: "collections items", method: "PUT", path: col + id + "/items", header: g.contentType(g.authHeader(key)),
			body: []byte(g.purchaseBody(true))}
	case 3:
		q := "?video_id=" + g.esc(g.badID())
		if g.chance(0.2) {
			q = g.pick([]string{"", "?video_id=", "?video_id=" + g.esc(g.badID()) + "&video_id=" + g.f.videos[0].String()})
		}
		return badReq{kind: "collections remove", method: "DELETE", path: col + id + "/items" + q, header: g.authHeader(key)}
	case 4:
		return badReq{kind: "collections list", method: "GET", path: "/api/v1/collections" +
			g.query([]string{"limit", "cursor", "api_key_id", "page", "offset"}, nil), header: g.authHeader(key)}
	case 5:
		return badReq{kind: "collections get", method: "GET", path: col + id + g.query([]string{"limit", "cursor"}, nil), header: g.authHeader(key)}
	case 6:
		return badReq{kind: "collections delete", method: "DELETE", path: col + g.pathID(), header: g.authHeader(key)}
	default:
		return badReq{kind: "purchase collection", method: "POST", path: "/api/v1/broll/purchase", header: g.contentType(g.authHeader(key)),
			body: []byte(g.collectionPurchaseBody())}
	}
}

// collectionBody is a create or update body that is never valid.
func (g *gen) collectionBody() string {
	switch g.r.IntN(7) {
	case 0: // a name of the wrong type
		return `{"name":` + g.pick([]string{"7", "true", "[]", "{}", `["a"]`}) + `}`
	case 1: // a name too long, blank, or with bidirectional controls
		return `{"name":` + g.pick([]string{`"` + strings.Repeat("n", 201) + `"`, `"   "`, `"\u202egnp.exe"`, `"a\u0007b"`, `""`}) + `}`
	case 2: // a description of the wrong type, or too long
		return `{"name":"ok","description":` + g.pick([]string{"7", "[]", `"` + strings.Repeat("d", 2001) + `"`}) + `}`
	case 3: // a member the body does not have
		return fmt.Sprintf(`{"name":"ok",%q:%s}`, g.pick([]string{"video_ids", "title", "\u0000", "owner"}), g.jsonValue())
	case 4: // a member given twice
		return `{"name":"a","NAME":"b"}`
	case 5: // deep nesting
		return `{"name":` + g.deep() + `}`
	default: // not a JSON object
		return g.pick([]string{"", " ", "{", "[]", "null", `"name"`, `{"name":"a"} {}`, "\xff", `{name:"a"}`})
	}
}

// collectionPurchaseBody names a collection in a purchase body that is
// never valid: both video_ids and collection_id, or a bad collection_id.
func (g *gen) collectionPurchaseBody() string {
	switch g.r.IntN(3) {
	case 0:
		return `{"collection_id":"` + g.f.collection + `","video_ids":["` + g.f.videos[0].String() + `"]}`
	case 1:
		return `{"collection_id":` + g.pick([]string{fmt.Sprintf("%q", g.badID()), "7", "null", "[]", `""`}) + `}`
	default:
		return `{"collection_id":"` + g.f.collection + `","expected_total":` + g.pick([]string{"-1", "1e400", `"x"`, "1.234"}) + `}`
	}
}
