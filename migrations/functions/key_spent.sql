-- broll_key_spent: what a key has spent in the period of its spend limit,
-- from its key_spend counters, and the period's bounds (UTC). The purchase
-- statement checks limits with it and key reads show it, so both agree on
-- what a period is. A counter started on another day (month) than in_at's
-- counts as zero; a key without counters has spent nothing. A key without
-- a limit is shown over its whole life ('total'), which has no reset.
CREATE OR REPLACE FUNCTION broll_key_spent(
    in_period text, in_day_start date, in_day bigint, in_month_start date, in_month bigint,
    in_total bigint, in_created timestamptz, in_at timestamptz)
RETURNS TABLE (spent bigint, period_start timestamptz, resets_at timestamptz)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE coalesce(in_period, 'total')
               WHEN 'day' THEN CASE WHEN in_day_start = (in_at AT TIME ZONE 'UTC')::date THEN in_day ELSE 0 END
               WHEN 'month' THEN CASE WHEN in_month_start = date_trunc('month', in_at AT TIME ZONE 'UTC')::date
                                      THEN in_month ELSE 0 END
               ELSE coalesce(in_total, 0)
           END,
           CASE coalesce(in_period, 'total')
               WHEN 'day' THEN date_trunc('day', in_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
               WHEN 'month' THEN date_trunc('month', in_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
               ELSE in_created
           END,
           CASE coalesce(in_period, 'total')
               WHEN 'day' THEN (date_trunc('day', in_at AT TIME ZONE 'UTC') + interval '1 day') AT TIME ZONE 'UTC'
               WHEN 'month' THEN (date_trunc('month', in_at AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC'
           END
$$;

-- broll_key_spending: broll_key_spent for one key from its stored counters,
-- now: what key reads show.
CREATE OR REPLACE FUNCTION broll_key_spending(in_key uuid, in_period text, in_created timestamptz)
RETURNS TABLE (spent bigint, period_start timestamptz, resets_at timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT b.spent, b.period_start, b.resets_at
    FROM (SELECT 1) one
    LEFT JOIN key_spend s ON s.api_key_id = in_key
    CROSS JOIN LATERAL broll_key_spent(in_period, s.day_start, s.day_cents, s.month_start, s.month_cents,
                                       s.total_cents, in_created, now()) b
$$;
