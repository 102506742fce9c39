package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestServeAbstainFlags runs `atrium serve` as operators do: by default a
// question no catalogued table answers chooses nothing (a natural-language
// one then gets 42P01 without an LLM call) and an answerable one its
// tables; --abstain-floor reaches the retriever: a floor above any logit
// refuses every question, and -inf with --abstain-coverage=0 keeps the
// answerable one's tables.
func TestServeAbstainFlags(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, _ := nlCatalogDB(ctx, t)

	const offTopic = "What will the weather be in Lisbon tomorrow?"
	chosen := func(args ...string) (offTopicChosen, answerable map[string]string) {
		t.Helper()
		admin := freeAddr(t)
		p := startServe(t, freeAddr(t), admin, nil, append([]string{"--admin-listen", admin,
			"--upstream", upstreamAddr(t), "--upstream-sslmode", "disable", "--catalog-dsn", db}, args...)...)
		c, err := pgx.Connect(ctx, p.dsn(t, db))
		require.NoError(t, err)
		defer c.Close(context.Background())
		return retrieveChosen(ctx, t, c, offTopic), retrieveChosen(ctx, t, c, "customer names")
	}
	off, ans := chosen()
	require.Empty(t, off, "abstains by default")
	require.Contains(t, ans, "shop.customers")
	off, ans = chosen("--abstain-floor=50")
	require.Empty(t, off)
	require.Empty(t, ans, "no table's logit reaches a floor of 50")
	_, ans = chosen("--abstain-floor=-inf", "--abstain-coverage=0")
	require.Contains(t, ans, "shop.customers")
}
