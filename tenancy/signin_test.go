package tenancy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"broll/internal/apperr"
)

func TestSignInThrottledPerIPv6Network(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := b.sessions(SessionsOptions{MaxFailures: 100,
		AddressAttempts: redis_rate.Limit{Rate: 2, Burst: 2, Period: time.Minute}})
	// Two addresses of one /64 share its allowance...
	for i, addr := range []string{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"} {
		if _, _, err := s.SignIn(ctx, "nobody@example.com", "whatever it is", addr); apperr.CodeOf(err) != apperr.Unauthorized {
			t.Fatalf("attempt %d from %s: %v", i, addr, err)
		}
	}
	_, _, err := s.SignIn(ctx, "other@example.com", "whatever it is", "2001:db8:1:2:abcd::1")
	if ae, ok := apperr.As(err); !ok || ae.Code != apperr.RateLimited || !strings.Contains(ae.Message, "address") {
		t.Fatalf("third attempt from one /64: %v", err)
	}
	// ...another /64 has its own, and IPv4 addresses count one by one.
	for _, addr := range []string{"2001:db8:1:3::1", "192.0.2.1", "192.0.2.2"} {
		if _, _, err := s.SignIn(ctx, "other@example.com", "whatever it is", addr); apperr.CodeOf(err) != apperr.Unauthorized {
			t.Fatalf("from %s: %v", addr, err)
		}
	}
}

func TestSignInGlobalBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.user(t, "owner@example.com")
	s := b.sessions(SessionsOptions{MaxFailures: 100,
		GlobalAttempts: redis_rate.Limit{Rate: 3, Burst: 3, Period: time.Minute}})
	// Every attempt from another address and for another email: only the
	// global budget can stop them.
	for i, addr := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.3"} {
		if _, _, err := s.SignIn(ctx, addr+"@example.com", "whatever it is", addr); apperr.CodeOf(err) != apperr.Unauthorized {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	_, _, err := s.SignIn(ctx, "owner@example.com", testPassword, "198.51.100.4")
	ae, ok := apperr.As(err)
	if !ok || ae.Code != apperr.RateLimited {
		t.Fatalf("fourth attempt over the global budget: %v", err)
	}
	if secs, _ := ae.Fields["retry_after_seconds"].(int); secs < 1 {
		t.Errorf("retry_after_seconds %v", ae.Fields["retry_after_seconds"])
	}
}

func TestPasswordHashingSlots(t *testing.T) {
	t.Parallel()
	slots := newHashSlots(1)
	holding, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = slots.run(context.Background(), func() {
			close(holding)
			<-release
		})
	}()
	<-holding
	// The only slot is taken: a second hash waits, and gives up with its
	// request.
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	waited := make(chan error)
	go func() { waited <- slots.run(ctx, func() { ran = true }) }()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("second hash while the slot was taken: err %v, ran %v", err, ran)
	}
	close(release)
	if err := slots.run(context.Background(), func() { ran = true }); err != nil || !ran {
		t.Fatalf("after release: err %v, ran %v", err, ran)
	}
	if got := cap(newHashSlots(0).slots); got < 1 {
		t.Fatalf("default slots %d", got)
	}
}
