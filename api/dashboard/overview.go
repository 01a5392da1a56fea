package dashboard

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"broll/billing"
	"broll/internal/money"
	"broll/tenancy"
)

type overviewView struct {
	AccountID      string
	Balance        money.Cents
	MonthAmount    money.Cents
	MonthPurchases int
	Requests24h    int64
	Spend30d       money.Cents
	Purchases30d   int
	SpendChart     barChart
	RequestsChart  barChart
	LiveRootKeys   int
	LiveCustomers  int
}

// Overview is the landing page: balance, spend, requests and live keys.
func (h *Dashboard) Overview(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess := session(c)
	owner := tenancy.AccountOwner(sess.AccountID)
	now := h.Now()
	acct, err := h.Tenancy.GetAccount(ctx, sess.AccountID)
	if err != nil {
		return err
	}
	sum, err := h.Billing.Summary(ctx, owner, now)
	if err != nil {
		return err
	}
	days, err := h.Billing.DailySpend(ctx, owner, now, 30)
	if err != nil {
		return err
	}
	h.flushUsage(c)
	hours, err := h.Tenancy.RequestsByHour(ctx, sess.AccountID, now, 24)
	if err != nil {
		return err
	}
	roots, err := h.Tenancy.ListRootKeys(ctx, sess.AccountID)
	if err != nil {
		return err
	}

	v := overviewView{AccountID: acct.ID.String(), Balance: sum.Balance, MonthAmount: sum.MonthAmount,
		MonthPurchases: sum.MonthPurchases}
	for _, r := range roots {
		if r.RevokedAt == nil {
			v.LiveRootKeys++
			v.LiveCustomers += r.LiveCustomerKeys
		}
	}
	v.SpendChart = spendChart(days)
	for _, d := range days {
		v.Spend30d += d.Amount
		v.Purchases30d += d.Purchases
	}
	values := make([]float64, len(hours))
	titles := make([]string, len(hours))
	for i, hr := range hours {
		v.Requests24h += hr.Requests
		values[i] = float64(hr.Requests)
		titles[i] = fmt.Sprintf("%s–%s UTC: %s requests", hr.Hour.Format("Jan 2 15:00"),
			hr.Hour.Format("15:59"), thousands(hr.Requests))
	}
	if len(hours) > 0 {
		v.RequestsChart = newBarChart("Requests per hour, last 24 hours", values, titles, countLabel,
			hours[0].Hour.Format("15:00"), hours[len(hours)-1].Hour.Format("15:00"))
	}
	return h.show(c, http.StatusOK, "overview", view{
		Title: "Overview", Nav: "overview", Session: sess, Account: acct.Name, Data: v,
	})
}

func spendChart(days []billing.DaySpend) barChart {
	values := make([]float64, len(days))
	titles := make([]string, len(days))
	for i, d := range days {
		values[i] = float64(d.Amount)
		titles[i] = fmt.Sprintf("%s: %s, %d %s", d.Day.Format("Mon Jan 2"), usd(d.Amount), d.Purchases,
			plural(d.Purchases, "purchase", "purchases"))
	}
	first, last := "", ""
	if len(days) > 0 {
		first, last = days[0].Day.Format("Jan 2"), days[len(days)-1].Day.Format("Jan 2")
	}
	return newBarChart("Daily spend, last 30 days", values, titles,
		func(v float64) string { return usd(money.Cents(v)) }, first, last)
}

// flushUsage moves the buffered usage counters to Postgres first, so that
// the page's request numbers are exact up to this request, as GET
// /api/v1/keys does. A failure only makes them a few seconds stale.
func (h *Dashboard) flushUsage(c *fiber.Ctx) {
	if err := h.Usage.Flush(c.UserContext()); err != nil {
		h.Logger.Warn("usage flush before a dashboard page failed", "request_id", h.RequestID(c), "error", err.Error())
	}
}
