package api

import (
	"fmt"
	"sort"
	"strings"
)

// purchaseBody is a purchase body with at least one defect that makes it
// invalid, so that it can never charge, whatever else it holds. badID adds
// a malformed id to the real ones in every case, for decoders that might
// forgive the other defects.
func (g *gen) purchaseBody(badID bool, extra ...string) string {
	ids := g.realIDs()
	if badID {
		ids = append(ids, fmt.Sprintf("%q", g.badID()))
	}
	fields := map[string]string{}
	switch g.r.IntN(9) {
	case 0: // video_ids of the wrong type
		fields["video_ids"] = g.pick([]string{`"` + g.f.videos[0].String() + `"`, `7`, `{}`, `true`, `[1]`, `[null]`, `[[]]`, `[{}]`})
	case 1: // one bad id among real ones
		ids = append(ids, fmt.Sprintf("%q", g.badID()))
		g.r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	case 2: // an expected_total that can never parse
		fields["expected_total"] = g.pick([]string{"1e400", "-1", "-0.01", "1.234", "9223372036854775808", `"abc"`, `"1e3"`,
			"true", "[]", `"-5"`, "1e2", "99999999999.99", "0.001"})
	case 3: // a dry_run that is not a boolean
		fields["dry_run"] = g.pick([]string{`"yes"`, `1`, `"true"`, `[]`, `{}`})
	case 4: // a field the body does not have
		// None of these folds to a real field: encoding/json matches names
		// case-insensitively, so "Video_IDs" would be video_ids itself.
		fields[g.pick([]string{"videoIds", "video_id", "\u0000", "price", "amount", "ids"})] = g.jsonValue()
	case 5: // the last of a duplicated key is of the wrong type
		return fmt.Sprintf(`{"video_ids":[%s],"video_ids":%s}`, strings.Join(ids, ","), g.pick([]string{`7`, `"x"`, `{}`}))
	case 6: // deep nesting where the ids go
		fields["video_ids"] = g.deep()
	case 7: // too many ids, all unknown
		var many []string
		for range 51 + g.r.IntN(600) {
			many = append(many, fmt.Sprintf("%q", g.uuid()))
		}
		ids = many
	default: // not a JSON object at all
		return g.pick([]string{"", " ", "\xef\xbb\xbf{}", "{", "[", `{"video_ids":`, `{"video_ids":[]} {}`, `{"video_ids":[]}x`,
			"null", `"video_ids"`, "[]", "\x00", `{"video_ids":["` + g.f.videos[0].String() + `"]`, "{'video_ids':[]}",
			`{video_ids:[]}`, "\xff\xfe{\x00}"})
	}
	if _, ok := fields["video_ids"]; !ok {
		fields["video_ids"] = "[" + strings.Join(ids, ",") + "]"
	}
	var parts []string
	for k, v := range fields {
		parts = append(parts, fmt.Sprintf("%q:%s", k, v))
	}
	parts = append(parts, extra...)
	sort.Strings(parts) // map order is random; the seed alone must decide
	g.r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	return "{" + strings.Join(parts, ",") + "}"
}

// keyBody is a key-creation body that is always invalid: an empty, too long
// or mistyped label, or scopes a customer key cannot have.
func (g *gen) keyBody() string {
	label := g.pick([]string{`""`, `"   "`, `null`, `7`, `[]`, `{}`, `true`, `"a\u0000b"`, `"\u0000"`,
		fmt.Sprintf("%q", strings.Repeat("é", 201+g.r.IntN(300))), g.deep()})
	scopes := ""
	if g.chance(0.5) {
		scopes = `,"scopes":` + g.pick([]string{`"broll:read"`, `[1]`, `{}`, `[null]`, `["nope"]`, `["keys:manage"]`, `[` + g.jsonString() + `]`})
		if g.chance(0.5) {
			// A valid label, so the scopes alone must refuse it.
			label = `"ok label"`
			scopes = `,"scopes":` + g.pick([]string{`"broll:read"`, `[1]`, `{}`, `[null]`, `["nope"]`, `["keys:manage"]`})
		}
	}
	return `{"customer_label":` + label + scopes + `}`
}

// clipsBody is an ops import that can never import: every array holds a
// clip whose media file does not exist, or is not a clip array at all.
func (g *gen) clipsBody() string {
	clip := func() string {
		fields := []string{`"title":` + g.pick([]string{`"Woman laughing"`, g.jsonString(), `7`, `null`}),
			`"emotion":` + g.pick([]string{`"happy"`, g.jsonString(), `[]`}),
			`"gender":"female"`, `"difficulty":` + g.pick([]string{`"easy"`, `"impossible"`, g.jsonString()}),
			`"media_file":` + g.pick([]string{`"/nonexistent/clip.mp4"`, `""`, `7`, `"../../../etc/shadow-nonexistent"`}),
			`"duration_seconds":` + g.pick([]string{"1e400", "-1", `"x"`, "12"}),
			`"virality_score":` + g.pick([]string{"101", "-1", "9223372036854775808", "50"}),
		}
		if g.chance(0.3) {
			fields = append(fields, `"id":`+fmt.Sprintf("%q", g.badID()))
		}
		if g.chance(0.2) {
			fields = append(fields, `"unknown":1`)
		}
		g.r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		return "{" + strings.Join(fields, ",") + "}"
	}
	switch g.r.IntN(6) {
	case 0:
		return g.pick([]string{"", "{}", "[]", "[", `[{"title":`, "null", "[null]", "[1,2]", `[[]]`, g.deep()})
	default:
		var clips []string
		for range 1 + g.r.IntN(4) {
			clips = append(clips, clip())
		}
		return "[" + strings.Join(clips, ",") + "]"
	}
}

// mcpBody is a JSON-RPC message that is malformed, or a tool call whose
// arguments are (never a purchase that could succeed).
func (g *gen) mcpBody() string {
	id := g.pick([]string{"1", `"x"`, "42"})
	if g.chance(0.15) { // most calls must get past the envelope to reach the tools
		id = g.pick([]string{"null", "1e400", "[]", "{}", "-9223372036854775809", "1.5"})
	}
	args := func() string {
		switch g.r.IntN(4) {
		case 0:
			return g.jsonValue()
		default:
			var parts []string
			for range 1 + g.r.IntN(3) {
				parts = append(parts, fmt.Sprintf("%q:%s", g.pick(append(catalogParams, "video_id", "video_ids", "expected_total",
					"dry_run", "api_key_id", "start_date")), g.jsonValue()))
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
	}
	switch g.r.IntN(10) {
	case 0:
		return g.pick([]string{"", "{", "[]", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "null", `"x"`, "\xff", g.deep()})
	case 1:
		return fmt.Sprintf(`{"jsonrpc":%s,"id":%s,"method":"tools/list"}`, g.pick([]string{`"1.0"`, `2`, `null`, `""`}), id)
	case 2:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%s,"params":%s}`, id,
			g.pick([]string{`"nope"`, `7`, `null`, g.jsonString(), `"tools/call"`, `"initialize"`, `"resources/read"`}), g.jsonValue())
	case 3:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%s,"arguments":%s}}`, id,
			g.pick([]string{`"nope"`, `7`, `null`, g.jsonString(), `""`}), args())
	case 4:
		// The tool decodes its arguments its own way: a bad id among the
		// real ones keeps every one of these calls from buying.
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"purchase_videos","arguments":%s}}`,
			id, g.purchaseBody(true))
	default:
		tool := g.pick([]string{"search_videos", "get_video", "list_purchases", "get_balance"})
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args())
	}
}
