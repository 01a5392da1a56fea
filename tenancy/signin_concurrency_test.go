package tenancy

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"broll/internal/apperr"
)

// TestSignInLockoutUnderConcurrency: MaxFailures wrong passwords lock an
// email, however many attempts arrive at once. 50 wrong passwords are sent
// together while every password-hashing slot is held, so that none can
// finish before the others start: exactly MaxFailures of them reach the
// password check, the other 45 are refused as locked at once, without a
// hash; and once those are done the right password is refused too.
func TestSignInLockoutUnderConcurrency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.user(t, "owner@example.com")
	const maxFailures, attempts = 5, 50
	// As many slots as checks may run, all held: the checked attempts wait
	// for them together and then run side by side. They wait as long as it
	// takes (not maxHashWait), so that how long the others take to be
	// refused cannot turn them away.
	b.svc = New(b.pool, ServiceOptions{PasswordHashing: maxFailures})
	b.svc.hashing.wait = time.Hour
	plenty := redis_rate.Limit{Rate: 1000, Burst: 1000, Period: time.Minute}
	s := b.sessions(SessionsOptions{MaxFailures: maxFailures, Lockout: time.Minute,
		EmailAttempts: plenty, AddressAttempts: plenty, GlobalAttempts: plenty})
	holding, release := make(chan struct{}, maxFailures), make(chan struct{})
	held := make(chan error, maxFailures)
	for i := 0; i < maxFailures; i++ {
		go func() {
			held <- b.svc.hashing.run(ctx, func() {
				holding <- struct{}{}
				<-release
			})
		}()
	}
	for i := 0; i < maxFailures; i++ {
		<-holding
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	errs := make(chan error, attempts)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < attempts; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, _, err := s.SignIn(ctx, "owner@example.com", "wrong password!", "192.0.2.1")
			errs <- err
		}()
	}
	close(start)
	// Those that get no check answer while the slot is still held.
	refused := 0
	// Only a failure waits for this: attempts that wait to be checked
	// instead of being refused never answer while the slots are held.
	deadline := time.After(2 * time.Minute)
	for refused < attempts-maxFailures {
		select {
		case err := <-errs:
			if ae, ok := apperr.As(err); !ok || ae.Code != apperr.RateLimited {
				t.Fatalf("an attempt refused before any password was checked: %v", err)
			}
			refused++
		case <-deadline:
			t.Fatalf("%d attempts answered before any password was checked, want %d: the others all wait to be checked",
				refused, attempts-maxFailures)
		}
	}
	close(release)
	for i := 0; i < maxFailures; i++ {
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	checked, wrong := 0, 0
	for err := range errs {
		checked++
		if apperr.CodeOf(err) == apperr.Unauthorized {
			wrong++
		} else if apperr.CodeOf(err) != apperr.RateLimited {
			t.Errorf("checked attempt: %v", err)
		}
	}
	if checked != maxFailures || wrong != maxFailures-1 {
		t.Fatalf("%d attempts checked (%d answered wrong password), want %d (the last answered locked)", checked, wrong, maxFailures)
	}
	if _, _, err := s.SignIn(ctx, "owner@example.com", testPassword, "192.0.2.1"); apperr.CodeOf(err) != apperr.RateLimited {
		t.Fatalf("the right password after %d failures: %v", maxFailures, err)
	}
}
