package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"

	"broll/internal/database"
	"broll/tenancy"
)

// Dashboard users: an operator creates the first user of an account (and
// resets forgotten passwords) and hands over the printed one-time link; the
// user chooses a password there. The link points at BROLL_PUBLIC_URL.

type userJSON struct {
	ID            uuid.UUID  `json:"user_id"`
	AccountID     uuid.UUID  `json:"account_id"`
	Email         string     `json:"email"`
	PasswordSet   bool       `json:"password_set"`
	CreatedAt     time.Time  `json:"created_at"`
	PasswordSetAt *time.Time `json:"password_set_at"`
	LastSignInAt  *time.Time `json:"last_sign_in_at"`
}

func renderUser(u tenancy.User) userJSON {
	return userJSON{ID: u.ID, AccountID: u.AccountID, Email: u.Email, PasswordSet: u.PasswordSet,
		CreatedAt: u.CreatedAt, PasswordSetAt: u.PasswordSetAt, LastSignInAt: u.LastSignInAt}
}

// linkJSON is the answer of user create and user reset. The token exists
// only in this output: hand it to the user, do not keep it.
func linkJSON(base string, l tenancy.PasswordLink) map[string]any {
	return map[string]any{
		"user_id":          l.User.ID,
		"account_id":       l.User.AccountID,
		"email":            l.User.Email,
		"set_password_url": base + "/dashboard/set-password?token=" + url.QueryEscape(l.Token),
		"expires_at":       l.ExpiresAt,
	}
}

func (c *cli) userCreate(f *flags) action {
	id := f.id("account")
	email := f.required("email", "the user's email (their sign-in name)", "--email is required")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		link, err := e.tenancy.CreateUser(ctx, *id, *email, time.Now(), e.cfg.PasswordLinkTTL)
		if err != nil {
			return nil, err
		}
		return linkJSON(e.cfg.BaseURL(), link), nil
	})
}

// userReset clears the password (it stops working at once), ends every
// dashboard session of the user and prints a new one-time link.
func (c *cli) userReset(f *flags) action {
	email := f.required("email", "the user's email", "--email is required")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		link, err := e.tenancy.ResetUser(ctx, *email, time.Now(), e.cfg.PasswordLinkTTL)
		if errors.Is(err, database.ErrCommitUnconfirmed) && link.User.ID != uuid.Nil {
			// Fail closed: the reset may land a moment later, and the
			// sessions of the old password must not outlive it.
			if _, endErr := e.sessions.EndAll(ctx, link.User.ID); endErr != nil {
				return nil, fmt.Errorf("the reset could not be confirmed and the user's sessions could not be ended "+
					"(run again): %w", endErr)
			}
			return nil, errors.New("the reset could not be confirmed: the user's sessions are ended; run again for a new link")
		}
		if err != nil {
			return nil, err
		}
		ended, err := e.sessions.EndAll(ctx, link.User.ID)
		if err != nil {
			return nil, fmt.Errorf("the password is cleared, but the user's sessions could not be ended "+
				"(run again for a new link): %w", err)
		}
		out := linkJSON(e.cfg.BaseURL(), link)
		out["sessions_ended"] = ended
		return out, nil
	})
}

func (c *cli) userList(f *flags) action {
	id := f.id("account")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		if _, err := e.tenancy.GetAccount(ctx, *id); err != nil {
			return nil, err
		}
		users, err := e.tenancy.ListUsers(ctx, *id)
		if err != nil {
			return nil, err
		}
		out := make([]userJSON, len(users))
		for i, u := range users {
			out[i] = renderUser(u)
		}
		return map[string]any{"account_id": *id, "users": out}, nil
	})
}
