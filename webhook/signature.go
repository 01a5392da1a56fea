package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// secretPrefix marks a signing secret, as Standard Webhooks libraries expect.
const secretPrefix = "whsec_"

// newSecret returns a fresh signing secret: whsec_ and 32 random bytes in
// base64, the form every Standard Webhooks library accepts.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sign returns the webhook-signature header for one message: a "v1,<base64
// HMAC-SHA256 of id.timestamp.body>" per secret, space-separated, so that a
// receiver still holding the old secret during a rotation verifies as well
// as one holding the new.
func Sign(secrets []string, id string, timestamp int64, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, secretPrefix))
		if err != nil {
			return "", fmt.Errorf("webhook: malformed secret: %w", err)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}
