package tenancy

import (
	"context"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// TestSignInRacingAResetIsEnded: a password reset (or set, or "sign out
// everywhere") ends every session, and endAll's comment says a sign-in
// racing with it "is either ended or not yet begun". A sign-in that read
// and is verifying the old password hash while the reset commits and
// EndAll runs starts its session after EndAll: the old password yields a
// live session (up to MaxAge) after the reset.
func TestSignInRacingAResetIsEnded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.svc = New(b.pool, ServiceOptions{PasswordHashing: 1})
	b.svc.hashing.wait = time.Hour
	u := b.user(t, "owner@example.com")
	plenty := redis_rate.Limit{Rate: 1000, Burst: 1000, Period: time.Minute}
	s := b.sessions(SessionsOptions{EmailAttempts: plenty, AddressAttempts: plenty, GlobalAttempts: plenty})

	// The one hashing slot is busy: the sign-in reads the hash, then waits
	// for the slot (as under load; without it the window is the argon2 time).
	holding, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() { held <- b.svc.hashing.run(ctx, func() { close(holding); <-release }) }()
	<-holding

	type result struct {
		token string
		err   error
	}
	signedIn := make(chan result, 1)
	go func() {
		_, token, err := s.SignIn(ctx, "owner@example.com", testPassword, "10.0.0.1")
		signedIn <- result{token, err}
	}()
	// Wait until the attempt is reserved, then for its credentials read.
	for range 500 {
		if n, _ := b.rdb.Get(ctx, s.failKey(throttleID("owner@example.com"))).Int(); n == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)

	// The operator resets the user (the old password stops working) and
	// ends the user's sessions, as brollctl user reset does.
	if _, err := b.svc.ResetUser(ctx, "owner@example.com", time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndAll(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	r := <-signedIn
	if r.err != nil {
		return // refused: as it should be
	}
	if _, err := s.Lookup(ctx, r.token); err == nil {
		t.Fatal("a sign-in with the password from before the reset holds a live session after the reset ended every session")
	}
}
